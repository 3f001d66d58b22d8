"""Hostile homes for tests: a copy of the tiny sample home with one thing made hostile."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TINY = REPO / "sample_homes" / "tiny"
#: the folder of the tiny home's ledgers that holds four of them
SESSIONS = Path("agents/vak/sessions/11ad27fbabb05e63")
#: a ledger of the tiny home with execute steps (replay yields steps for it)
LEDGER = SESSIONS / "019fcbda-c29b-7346-892a-441bec90ec8b.jsonl"


def tiny_copy(dest: Path) -> Path:
    """A byte-exact copy of the tiny sample home at ``dest``."""
    shutil.copytree(TINY, dest, symlinks=True)
    return dest


def scan_findings(home: Path, out: Path) -> list[dict]:
    """Every finding of a one-process scan of ``home`` into ``out``, as dicts."""
    from vakaudit.scan import open_scan, scan_home

    scan_home(home, out, jobs=1)
    return open_scan(out).table("findings").to_pylist()


def verify_findings(home: Path) -> list[dict]:
    """Every finding of ``verify_home``, as dicts."""
    from vakaudit.forensics import verify_home

    return [f.to_dict() for f in verify_home(home, jobs=1).findings]


def run_measured(*args: str, cwd: Path) -> tuple[int, int, bytes, bytes]:
    """Exit code, peak RSS (KiB, that process's own), stdout and stderr of ``python -m vakaudit *args``.

    The command is started by a small launcher process, which reads its child's peak from ``wait4``:
    Linux keeps a process's peak RSS across ``exec``, so a child forked straight from this (large)
    test process would report at least this process's size."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    launcher = (
        "import os, subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-m', 'vakaudit', *sys.argv[2:]],"
        " stdout=open(sys.argv[1] + '/stdout.bin', 'wb'), stderr=open(sys.argv[1] + '/stderr.bin', 'wb'))\n"
        "_, status, usage = os.wait4(p.pid, 0)\n"
        "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)\n"
    )
    out = subprocess.run([sys.executable, "-c", launcher, str(cwd), *args], env=env, cwd=cwd,
                         capture_output=True, check=True).stdout.split()  # fmt: skip
    return int(out[0]), int(out[1]), (cwd / "stdout.bin").read_bytes(), (cwd / "stderr.bin").read_bytes()
