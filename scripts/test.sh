#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh Debian machine, lints, then runs every test.
# This is the README's test command; .ci/run calls it unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v strace >/dev/null 2>&1 || need_apt+=(strace)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v sqlite3 >/dev/null 2>&1 || need_apt+=(sqlite3)
# the compiled line scanner (vakaudit/_native): a C compiler and OpenSSL's headers
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc)
[ -f /usr/include/openssl/sha.h ] || need_apt+=(libssl-dev)
python3 -c 'import os, sysconfig, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
  || need_apt+=(python3-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  fi
fi

python3 -m pip install -q -e '.[test]'
python3 -m ruff check vakaudit tests bench
set +e
python3 -m pytest -q "$@"
rc=$?
set -e
# pytest exits 5 when it collected no tests; that is a failure of the suite, not a pass.
if [ "$rc" = 5 ]; then
  echo "pytest collected no tests" >&2
  exit 1
fi
exit "$rc"
