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
    """Exit code, peak RSS (KiB, from ``os.wait4``: that process's own), stdout and stderr of
    ``python -m vakaudit *args``."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with open(cwd / "stdout.bin", "wb") as out, open(cwd / "stderr.bin", "wb") as err:
        p = subprocess.Popen([sys.executable, "-m", "vakaudit", *args], env=env, cwd=cwd, stdout=out, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, usage.ru_maxrss, (cwd / "stdout.bin").read_bytes(), (cwd / "stderr.bin").read_bytes()
