#!/usr/bin/env bash
# The README's test command (.ci/run calls it unchanged). On a fresh Debian 12 machine with only
# python3 and apt it installs what the suite needs, lints once, runs the whole suite on three
# interpreters, each in its own venv under .venv/ (reused when present), and runs the README's
# quick start verbatim in a fresh clone.
#
#   bash scripts/test.sh [PYTEST ARGS...]     e.g. bash scripts/test.sh tests/report -x
#
# Legs: default (python3 on PATH), debian (/usr/bin/python3, Debian's own), newest (the newest
# CPython on the machine above the other two: python3.N on PATH or a pyenv version; skipped with a
# message when there is none). Every leg runs every test; a leg fails on any failed test and on
# pytest's exit 5 (no tests collected). VAKAUDIT_LEGS="default debian" runs only the named legs;
# VAKAUDIT_SKIP_QUICKSTART=1 skips the quick-start check. Each leg runs on pytest-xdist workers,
# one per core (VAKAUDIT_TEST_WORKERS=N to choose, 0 for none), stealing work from each other
# (pyproject.toml's --dist worksteal; modules with a `slow` test run first): tests measure peak
# memory of their own child processes only and never time anything, so workers do not disturb them.
set -euo pipefail
cd "$(dirname "$0")/.."
# The suite starts hundreds of vakaudit processes; without bytecode each one compiles the package
# from source again (a quarter of the suite's time where PYTHONDONTWRITEBYTECODE is set).
unset PYTHONDONTWRITEBYTECODE

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# --------------------------------------------------------------------------- system packages
need_apt=()
command -v strace >/dev/null 2>&1 || need_apt+=(strace)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v sqlite3 >/dev/null 2>&1 || need_apt+=(sqlite3)
command -v git >/dev/null 2>&1 || need_apt+=(git)
# the compiled line scanner (vakaudit/_native): a C compiler and OpenSSL's headers
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc)
[ -f /usr/include/openssl/sha.h ] || need_apt+=(libssl-dev)
if [ -x /usr/bin/python3 ]; then
  /usr/bin/python3 -c 'import os, sysconfig, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    || need_apt+=(python3-dev)
  /usr/bin/python3 -c 'import ensurepip' >/dev/null 2>&1 || need_apt+=(python3-venv)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "test: installing with apt: ${need_apt[*]}" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# --------------------------------------------------------------------------- interpreters
version_of() { "$1" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])'; }

newest_python() {
  # the highest CPython 3.x found as python3.N on PATH or under pyenv's versions
  local cands=() c root
  for c in $(compgen -c python3. | grep -E '^python3\.[0-9]+$' | sort -u); do
    cands+=("$(command -v "$c")")
  done
  root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
  for c in "$root"/versions/3.*/bin/python3; do
    [ -x "$c" ] && cands+=("$c")
  done
  local best="" best_v="0"
  for c in "${cands[@]}"; do
    v=$("$c" -c 'import sys; print("%d%03d%03d" % sys.version_info[:3])' 2>/dev/null) || continue
    if [ "$v" -gt "$best_v" ]; then best="$c"; best_v="$v"; fi
  done
  echo "$best"
}

declare -A leg_python=()
leg_python[default]=$(command -v python3)
[ -x /usr/bin/python3 ] && leg_python[debian]=/usr/bin/python3
newest=$(newest_python)
if [ -n "$newest" ]; then
  # a leg of its own only when it is newer than every interpreter above
  newest_v=$(version_of "$newest")
  top_v=$(for p in "${leg_python[@]}"; do version_of "$p"; done | sort -V | tail -1)
  if [ "$newest_v" != "$top_v" ] && [ "$(printf '%s\n' "$newest_v" "$top_v" | sort -V | tail -1)" = "$newest_v" ]; then
    leg_python[newest]=$newest
  fi
fi
legs=${VAKAUDIT_LEGS:-default debian newest}

# --------------------------------------------------------------------------- lint once, then each leg
default_py=$(bash scripts/venv.sh default "${leg_python[default]}" test | tail -1)
echo "== ruff ($default_py)" >&2
"$default_py" -m ruff check vakaudit tests bench

cores=$(nproc 2>/dev/null || echo 2)
workers=${VAKAUDIT_TEST_WORKERS:-$(( cores > 4 ? 4 : cores ))}

failed=()
for leg in $legs; do
  py=${leg_python[$leg]:-}
  if [ -z "$py" ]; then
    case $leg in
      debian) echo "== leg debian: skipped: there is no /usr/bin/python3 on this machine" >&2 ;;
      newest) echo "== leg newest: skipped: no CPython newer than the default and Debian interpreters on this machine" >&2 ;;
      *) echo "== leg $leg: unknown leg" >&2; failed+=("$leg") ;;
    esac
    continue
  fi
  venv_py=$(bash scripts/venv.sh "$leg" "$py" test | tail -1)
  echo "== leg $leg: $py ($(version_of "$venv_py")) in .venv/$leg" >&2
  set +e
  "$venv_py" -m pytest -q -p no:cacheprovider -n "$workers" "$@"
  rc=$?
  set -e
  if [ "$rc" = 5 ]; then
    echo "== leg $leg: pytest collected no tests: failed" >&2
    failed+=("$leg")
  elif [ "$rc" != 0 ]; then
    echo "== leg $leg: failed (pytest exit $rc)" >&2
    failed+=("$leg")
  else
    echo "== leg $leg: passed" >&2
  fi
done

# --------------------------------------------------------------------------- the README's quick start
if [ -z "${VAKAUDIT_SKIP_QUICKSTART:-}" ]; then
  echo "== quick start: the README's block, verbatim, in a fresh clone" >&2
  if bash scripts/quickstart_check.sh; then
    echo "== quick start: passed" >&2
  else
    echo "== quick start: failed" >&2
    failed+=(quickstart)
  fi
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "test: failed: ${failed[*]}" >&2
  exit 1
fi
echo "test: all passed (legs: $legs)" >&2
