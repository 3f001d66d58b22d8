"""A scan killed while it writes: readers refuse its folder, and the next scan into it starts over.

A real ``vakaudit scan`` process is SIGKILLed once it has begun writing (its ``.scan-incomplete``
mark is there), on a first scan and on an incremental rescan after the home grew. The folder then
holds parts and maybe an old manifest that disagree; ``analyze`` must refuse it (exit 2, one line),
and a new scan into it must give the same tables as a scan into a fresh folder.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vakaudit.scan import open_scan, scan_home
from vakaudit.scan.manifest import INCOMPLETE
from vakaudit.synth import build_home

ENV = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))


def _kill_mid_scan(home: Path, out: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "vakaudit", "scan", str(home), "--out", str(out), "--jobs", "1", "-q"],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not (out / INCOMPLETE).exists():
        assert proc.poll() is None, "the scan ended before it was killed"
        assert time.monotonic() < deadline
        time.sleep(0.001)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL
    assert (out / INCOMPLETE).exists()  # killed before it finished


def _tables(out: Path) -> dict[str, list]:
    con = open_scan(out).duckdb()
    keep = {}
    for name in ("entries", "files", "findings", "turns", "sessions"):
        cols = [c[0] for c in con.execute(f'DESCRIBE "{name}"').fetchall() if c[0] not in ("scan_state",)]
        sel = ", ".join(f'"{c}"' for c in cols)
        keep[name] = con.execute(f'SELECT {sel} FROM "{name}" ORDER BY ALL').fetchall()
    return keep


@pytest.fixture(scope="module")
def grown_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("interrupted") / "home"
    build_home(home, turns=300, seed=11, fsync=False)
    return home


@pytest.mark.slow
def test_a_first_scan_killed_mid_way_is_refused_then_redone(grown_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "scan"
    _kill_mid_scan(grown_home, out)
    r = subprocess.run(
        [sys.executable, "-m", "vakaudit", "analyze", str(out)], env=ENV, capture_output=True, text=True
    )
    assert r.returncode == 2, r.stderr
    assert "did not finish" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr

    scan_home(grown_home, out=out, jobs=1)
    assert not (out / INCOMPLETE).exists()
    scan_home(grown_home, out=tmp_path / "fresh", jobs=1)
    assert _tables(out) == _tables(tmp_path / "fresh")


@pytest.mark.slow
def test_an_incremental_rescan_killed_mid_way_starts_over_next_time(grown_home: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(grown_home, home, symlinks=True)
    out = tmp_path / "scan"
    scan_home(home, out=out, jobs=1)
    # the home grows: every ledger gains a line, so the rescan appends to every ledger's rows
    for ledger in sorted(home.rglob("sessions/*/*.jsonl")):
        with ledger.open("ab") as fh:
            fh.write(b'{"torn":')  # a torn tail: a change a rescan must read
    _kill_mid_scan(home, out)
    scan_home(home, out=out, jobs=1)
    assert not (out / INCOMPLETE).exists()
    scan_home(home, out=tmp_path / "fresh", jobs=1)
    assert _tables(out) == _tables(tmp_path / "fresh")
