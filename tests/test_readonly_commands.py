"""Never touch the evidence: every reading command leaves a home byte- and mtime-identical.

The home is a copy of the committed tiny sample home (every artifact kind, a WAL-mode store.db),
made with its mtimes preserved; the snapshot covers every file and directory, so a created file
(a SQLite ``-wal``/``-shm``, a lock file, an output written into the home) fails the test as well.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vakaudit.cli import app

REPO = Path(__file__).resolve().parent.parent


def _snapshot(home: Path) -> dict[str, tuple[int, int, bytes | None]]:
    snap: dict[str, tuple[int, int, bytes | None]] = {}
    for dirpath, dirnames, filenames in os.walk(home):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
            snap[str(path.relative_to(home))] = (st.st_mtime_ns, st.st_mode, data)
    return snap


@pytest.fixture
def home(tmp_path: Path) -> Path:
    dst = tmp_path / "home"
    shutil.copytree(REPO / "sample_homes" / "tiny", dst, symlinks=True, copy_function=shutil.copy2)
    # copytree sets directory mtimes as it fills them; pin them so the snapshot is stable
    for dirpath, _dirs, _files in os.walk(dst, topdown=False):
        os.utime(dirpath, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    return dst


def test_every_reading_command_leaves_the_home_untouched(home: Path, tmp_path: Path) -> None:
    before = _snapshot(home)
    assert any(name.endswith("store.db") for name in before)
    scan = tmp_path / "scan"
    runner = CliRunner()
    commands = [
        ["scan", str(home), "--out", str(scan), "--quiet"],
        ["scan", str(home), "--out", str(scan), "--quiet"],  # incremental second run
        ["kinds"],
        ["analyze", str(scan), "--json"],
        ["sql", str(scan), "select count(*) from entries"],
        ["report", str(scan), "-o", str(tmp_path / "r.html"), "--verify", "-q"],
        ["report", str(home), "--scan-out", str(tmp_path / "scan2"), "-o", str(tmp_path / "r.md"), "--format", "md", "-q"],
        ["replay", str(home), "--json", "--export", str(tmp_path / "requests.jsonl")],
        ["verify", str(home), "--json"],
        ["seal", str(home), "-o", str(tmp_path / "seal.json")],
        ["verify", str(home), "--since", str(tmp_path / "seal.json")],
        ["timeline", str(home), "-o", str(tmp_path / "timeline.csv"), "--format", "csv"],
    ]
    for args in commands:
        result = runner.invoke(app, args)
        assert result.exit_code in (0, 1), (args, result.output[-2000:])
        assert _snapshot(home) == before, f"vakaudit {args[0]} changed the home"
    assert (tmp_path / "r.html").stat().st_size > 0
    assert (tmp_path / "timeline.csv").stat().st_size > 0


def test_a_fleet_task_leaves_the_home_untouched(home: Path, tmp_path: Path) -> None:
    # what every Dask worker of `vakaudit fleet scan` runs for one home, twice (the rescan is incremental)
    from vakaudit import __version__
    from vakaudit.fleet import lake as L
    from vakaudit.fleet.task import scan_into_lake

    before = _snapshot(home)
    lake = tmp_path / "lake"
    L.init_lake(lake, __version__)
    for _ in range(2):
        outcome = scan_into_lake(str(home), str(lake), "run")
        assert outcome["ok"], outcome
        assert _snapshot(home) == before
    runner = CliRunner()
    for args in (["fleet", "analyze", str(lake), "--json"], ["sql", str(lake), "select count(*) from entries"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output[-2000:])
        assert _snapshot(home) == before
