#!/usr/bin/env bash
# Creates (or reuses) a project venv and installs vakaudit into it, editable, with its dependencies.
#
#   bash scripts/venv.sh [TAG [PYTHON [EXTRAS]]]
#
# TAG names the venv, .venv/<TAG> (default: default); PYTHON is the interpreter it is made from
# (default: python3 on PATH); EXTRAS are pip extras such as "test". Nothing is installed into the
# interpreter itself (Debian 12's python3 refuses that: PEP 668). When the interpreter cannot make
# a venv (Debian without python3-venv), python3-venv is installed with apt, as root or with sudo.
# A venv is reused as long as the install inputs (pyproject.toml, setup.py, the C sources of vakaudit/_native) and the
# extras are unchanged. Prints the venv's python as its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

tag=${1:-default}
python=${2:-python3}
extras=${3:-}
venv=".venv/$tag"

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

if ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
  # Debian splits venv's pip bootstrap into python3-venv (python3.X-venv for a non-default version)
  pkg=python3-venv
  if [ "$(command -v "$python")" != /usr/bin/python3 ]; then
    pkg="python$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-venv"
  fi
  echo "venv: installing $pkg with apt" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null
fi

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
  rm -rf "$venv"
  echo "venv: creating $venv from $(command -v "$python") ($("$python" -c 'import platform; print(platform.python_version())'))" >&2
  "$python" -m venv "$venv"
fi

stamp="$venv/.vakaudit-installed"
want="$(cat pyproject.toml setup.py vakaudit/_native/*.[ch] | sha256sum | cut -c1-16) extras=[$extras]"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  spec="."
  [ -n "$extras" ] && spec=".[$extras]"
  echo "venv: installing vakaudit${extras:+[$extras]} into $venv" >&2
  "$venv/bin/python" -m pip install -q -e "$spec" >&2
  echo "$want" >"$stamp"
fi
echo "$venv/bin/python"
