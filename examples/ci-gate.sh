#!/usr/bin/env bash
# Gate a CI job on a vak fixture home with vakaudit (see docs/ci-gates.md).
#
# Usage: ci-gate.sh HOME --baseline FILE [--budget FILE] [--junit FILE] [--fail-on SEVERITY]
#                        [--torn POLICY] [--seal-dir DIR] [--work DIR]
#        ci-gate.sh HOME --write-baseline FILE
#
# Gates, in order (the first that fails decides the exit code):
#   1. vakaudit verify HOME --fail-on SEVERITY --torn POLICY
#      (with --since DIR/seal.json when --seal-dir holds a seal from an earlier run)
#   2. vakaudit check HOME --baseline FILE [--budget FILE] [--junit FILE]
#   3. with --seal-dir: vakaudit seal HOME -o DIR/seal.json, the proof point for the next run
# --write-baseline FILE records the baseline instead (vakaudit baseline HOME -o FILE) and exits.
#
# Exit codes:
#   0  every gate passed (or the baseline was written)
#   1  verify: a finding at or above --fail-on (an append-only violation since the seal included)
#   2  usage error (unknown option, missing value, home or baseline not found; or vakaudit's own)
#   3  vakaudit failed unexpectedly (internal error)
#   4  check: a metric moved beyond its budget (the table names the metric, bound and cause)
#
# Environment: VAKAUDIT (command to run, default "vakaudit"; e.g. "python -m vakaudit").
# Nothing is written into HOME: the scan goes to --work (default: a temporary directory).
set -uo pipefail

read -r -a VAK <<< "${VAKAUDIT:-vakaudit}"

usage() {
  sed -n '4,6s/^# \{0,1\}//p' "$0"
}
die() { echo "ci-gate: $*" >&2; usage >&2; exit 2; }

HOME_DIR=""; BASELINE=""; BUDGET=""; JUNIT=""; FAIL_ON=error; TORN=tolerate-tail; SEAL_DIR=""; WORK=""
WRITE_BASELINE=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --baseline|--budget|--junit|--fail-on|--torn|--seal-dir|--work|--write-baseline)
      [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value"
      case "$1" in
        --baseline) BASELINE="$2" ;; --budget) BUDGET="$2" ;; --junit) JUNIT="$2" ;;
        --fail-on) FAIL_ON="$2" ;; --torn) TORN="$2" ;; --seal-dir) SEAL_DIR="$2" ;;
        --work) WORK="$2" ;; --write-baseline) WRITE_BASELINE="$2" ;;
      esac
      shift 2 ;;
    -*) die "unknown option: $1" ;;
    *) [ -z "$HOME_DIR" ] || die "one HOME only (got $HOME_DIR and $1)"; HOME_DIR="$1"; shift ;;
  esac
done
[ -n "$HOME_DIR" ] || die "HOME is missing"
[ -d "$HOME_DIR" ] || { echo "ci-gate: home not found: $HOME_DIR" >&2; exit 2; }
if [ -z "$WORK" ]; then
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/ci-gate.XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"

# vakaudit's usage (2) passes through; anything but the documented codes is an internal error (3).
fail() {  # fail RC GATE FINDINGS_EXIT
  case "$1" in
    1) echo "ci-gate: FAIL $2" >&2; exit "$3" ;;
    2) exit 2 ;;
    *) echo "ci-gate: vakaudit $2 exited $1 unexpectedly" >&2; exit 3 ;;
  esac
}

if [ -n "$WRITE_BASELINE" ]; then
  "${VAK[@]}" baseline "$HOME_DIR" -o "$WRITE_BASELINE" --scan-out "$WORK/scan" || fail "$?" baseline 3
  exit 0
fi
[ -n "$BASELINE" ] || die "--baseline FILE is required (record one with --write-baseline FILE)"
[ -f "$BASELINE" ] || { echo "ci-gate: baseline not found: $BASELINE" >&2; exit 2; }

# ---- 1. verify (and the append-only proof against the previous run's seal)
since=()
[ -n "$SEAL_DIR" ] && [ -f "$SEAL_DIR/seal.json" ] && since=(--since "$SEAL_DIR/seal.json")
"${VAK[@]}" verify "$HOME_DIR" --fail-on "$FAIL_ON" --torn "$TORN" "${since[@]}" || fail "$?" verify 1
echo "ci-gate: verify ok"

# ---- 2. check against the committed baseline
opts=()
[ -n "$BUDGET" ] && opts+=(--budget "$BUDGET")
[ -n "$JUNIT" ] && opts+=(--junit "$JUNIT")
"${VAK[@]}" check "$HOME_DIR" --baseline "$BASELINE" --scan-out "$WORK/scan" "${opts[@]}" || fail "$?" check 4

# ---- 3. seal for the next run (only after every gate passed)
if [ -n "$SEAL_DIR" ]; then
  mkdir -p "$SEAL_DIR"
  "${VAK[@]}" seal "$HOME_DIR" -o "$SEAL_DIR/seal.json" || fail "$?" seal 3
fi
echo "ci-gate: pass"
exit 0
