#!/usr/bin/env bash
# Gate a CI job on a vak fixture home with vakaudit (see docs/ci-gates.md).
#
# Usage: ci-gate.sh HOME [--fail-on SEVERITY] [--torn POLICY] [--seal-dir DIR]
#                        [--baseline FILE] [--tolerance FRACTION] [--write-baseline FILE] [--work DIR]
#
# Gates, in order (the first that fails decides the exit code):
#   1. vakaudit verify HOME --fail-on SEVERITY   (--since DIR/seal.json when a seal from an earlier run exists)
#   2. vakaudit replay HOME --json               (every checkable replay check passes)
#   3. vakaudit analyze HOME --json              (headline figures within --tolerance of --baseline)
#   4. with --seal-dir: vakaudit seal HOME -o DIR/seal.json, the proof point for the next run
#
# Exit codes:
#   0  every gate passed
#   1  verify: a finding at or above --fail-on (other than an append-only violation)
#   2  usage error (bad argument, home or baseline not found, unreadable seal)
#   3  vakaudit failed unexpectedly (internal error)
#   4  verify --since: an append-only file was rewritten, truncated or deleted since the last seal
#   5  replay: a replay check failed
#   6  analyze: a headline figure drifted beyond the tolerance from the baseline
#
# Environment: VAKAUDIT (command to run, default "vakaudit"; e.g. "python -m vakaudit"),
#              PYTHON (interpreter for the JSON comparisons, default "python3").
# Nothing is written into HOME: reports and the scan go to --work (default: a temporary directory).
set -uo pipefail

read -r -a VAK <<< "${VAKAUDIT:-vakaudit}"
PY="${PYTHON:-python3}"

usage() { echo "usage: $0 HOME [--fail-on SEV] [--torn POLICY] [--seal-dir DIR] [--baseline FILE] [--tolerance F] [--write-baseline FILE] [--work DIR]" >&2; exit 2; }

[ $# -ge 1 ] || usage
HOME_DIR="$1"; shift
FAIL_ON=error; TORN=tolerate-tail; SEAL_DIR=""; BASELINE=""; TOLERANCE=0.05; WRITE_BASELINE=""; WORK=""
while [ $# -gt 0 ]; do
  case "$1" in
    --fail-on) FAIL_ON="${2:?}"; shift 2 ;;
    --torn) TORN="${2:?}"; shift 2 ;;
    --seal-dir) SEAL_DIR="${2:?}"; shift 2 ;;
    --baseline) BASELINE="${2:?}"; shift 2 ;;
    --tolerance) TOLERANCE="${2:?}"; shift 2 ;;
    --write-baseline) WRITE_BASELINE="${2:?}"; shift 2 ;;
    --work) WORK="${2:?}"; shift 2 ;;
    *) usage ;;
  esac
done
[ -d "$HOME_DIR" ] || { echo "ci-gate: home not found: $HOME_DIR" >&2; exit 2; }
[ -z "$BASELINE" ] || [ -f "$BASELINE" ] || { echo "ci-gate: baseline not found: $BASELINE" >&2; exit 2; }
if [ -z "$WORK" ]; then
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/ci-gate.XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"

# Pass vakaudit's own usage (2) and internal (3 and anything unexpected) codes through.
passthrough() {
  case "$1" in
    2) exit 2 ;;
    *) echo "ci-gate: $2 exited $1 unexpectedly" >&2; exit 3 ;;
  esac
}

# ---- 1. verify (and the append-only proof against the previous run's seal)
since=()
if [ -n "$SEAL_DIR" ] && [ -f "$SEAL_DIR/seal.json" ]; then
  since=(--since "$SEAL_DIR/seal.json")
fi
"${VAK[@]}" verify "$HOME_DIR" --json --fail-on "$FAIL_ON" --torn "$TORN" "${since[@]}" > "$WORK/verify.json"
rc=$?
if [ "$rc" -eq 1 ] && ! "$PY" -c 'import json, sys; json.load(open(sys.argv[1]))["fail_on"]' "$WORK/verify.json" 2>/dev/null; then
  # exit 1 without a JSON report is Python failing, not findings
  echo "ci-gate: vakaudit verify exited 1 without a report" >&2; exit 3
elif [ "$rc" -eq 1 ]; then
  # Name the failing findings; an append-only violation gets its own exit code.
  "$PY" - "$WORK/verify.json" <<'EOF' >&2
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
rank = {"info": 0, "warning": 1, "error": 2, "critical": 3}
for f in doc["findings"]:
    if rank[f["severity"]] >= rank[doc["fail_on"]]:
        where = f["rel_path"] or "-"
        if f["line_no"] is not None:
            where += f":{f['line_no']}"
        print(f"ci-gate: verify: {f['severity']} {f['code']} {where}: {f['message']}")
EOF
  if "$PY" - "$WORK/verify.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
rank = {"info": 0, "warning": 1, "error": 2, "critical": 3}
failing = [f["code"] for f in doc["findings"] if rank[f["severity"]] >= rank[doc["fail_on"]]]
sys.exit(0 if failing and all(c == "append_only_violation" for c in failing) else 1)
EOF
  then
    echo "ci-gate: FAIL append-only proof (verify --since)" >&2; exit 4
  fi
  echo "ci-gate: FAIL verify (findings at or above $FAIL_ON)" >&2; exit 1
elif [ "$rc" -ne 0 ]; then
  passthrough "$rc" "vakaudit verify"
fi
echo "ci-gate: verify ok${since:+ (append-only since the last seal)}"

# ---- 2. replay
"${VAK[@]}" replay "$HOME_DIR" --json > "$WORK/replay.json"
rc=$?
if [ "$rc" -eq 1 ] && ! "$PY" -c 'import json, sys; json.load(open(sys.argv[1]))["steps"]' "$WORK/replay.json" 2>/dev/null; then
  echo "ci-gate: vakaudit replay exited 1 without a report" >&2; exit 3
elif [ "$rc" -eq 1 ]; then
  "$PY" - "$WORK/replay.json" <<'EOF' >&2
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
for s in doc["steps"]:
    for c in s["checks"]:
        if c["status"] == "fail":
            print(f"ci-gate: replay: {s['session_id']} turn {s['turn']} step {s['step']}: {c['name']}: {c['reason']}")
EOF
  echo "ci-gate: FAIL replay (a check failed)" >&2; exit 5
elif [ "$rc" -ne 0 ]; then
  passthrough "$rc" "vakaudit replay"
fi
echo "ci-gate: replay ok"

# ---- 3. analyze against a committed baseline
if [ -n "$BASELINE" ] || [ -n "$WRITE_BASELINE" ]; then
  "${VAK[@]}" analyze "$HOME_DIR" --json --scan-out "$WORK/scan" > "$WORK/analyze.json"
  rc=$?
  [ "$rc" -eq 0 ] || passthrough "$rc" "vakaudit analyze"
  if [ -n "$WRITE_BASELINE" ]; then
    "$PY" - "$WORK/analyze.json" "$WRITE_BASELINE" <<'EOF' || exit 3
import json, sys
headline = json.load(open(sys.argv[1], encoding="utf-8"))["headline"]
with open(sys.argv[2], "w", encoding="utf-8") as fh:
    json.dump({"headline": headline}, fh, indent=2, sort_keys=True)
    fh.write("\n")
EOF
    echo "ci-gate: baseline written to $WRITE_BASELINE"
  fi
  if [ -n "$BASELINE" ]; then
    "$PY" - "$WORK/analyze.json" "$BASELINE" "$TOLERANCE" <<'EOF'
import json, sys
now = json.load(open(sys.argv[1], encoding="utf-8"))["headline"]
base = json.load(open(sys.argv[2], encoding="utf-8"))["headline"]
tol = float(sys.argv[3])
drift = []
for key, want in sorted(base.items()):
    got = now.get(key)
    if want is None or got is None:
        if want != got:
            drift.append(f"{key}: baseline {want}, now {got}")
        continue
    if abs(got - want) > tol * abs(want):
        drift.append(f"{key}: baseline {want}, now {got} ({(got - want) / want:+.1%} > ±{tol:.0%})" if want
                     else f"{key}: baseline 0, now {got}")
for line in drift:
    print(f"ci-gate: analyze: {line}", file=sys.stderr)
sys.exit(6 if drift else 0)
EOF
    rc=$?
    if [ "$rc" -eq 6 ]; then echo "ci-gate: FAIL analyze (drift beyond ±$TOLERANCE of $BASELINE)" >&2; exit 6; fi
    [ "$rc" -eq 0 ] || exit 3
    echo "ci-gate: analyze ok (within ±$TOLERANCE of $BASELINE)"
  fi
fi

# ---- 4. seal for the next run (only after every gate passed)
if [ -n "$SEAL_DIR" ]; then
  mkdir -p "$SEAL_DIR"
  "${VAK[@]}" seal "$HOME_DIR" -o "$SEAL_DIR/seal.json" || passthrough "$?" "vakaudit seal"
fi
echo "ci-gate: pass"
exit 0
