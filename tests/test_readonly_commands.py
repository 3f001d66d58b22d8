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


@pytest.fixture
def home(tiny_home_copy: Path) -> Path:
    return tiny_home_copy


def test_every_reading_command_leaves_the_home_untouched(home: Path, tmp_path: Path, tree_snapshot) -> None:  # noqa: ANN001
    _snapshot = tree_snapshot
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
        ["baseline", str(home), "-o", str(tmp_path / "baseline.json"), "--scan-out", str(scan)],
        ["check", str(home), "--baseline", str(tmp_path / "baseline.json"), "--scan-out", str(scan),
         "--junit", str(tmp_path / "check.xml")],
    ]
    for args in commands:
        result = runner.invoke(app, args)
        assert result.exit_code in (0, 1), (args, result.output[-2000:])
        assert _snapshot(home) == before, f"vakaudit {args[0]} changed the home"
    assert (tmp_path / "r.html").stat().st_size > 0
    assert (tmp_path / "timeline.csv").stat().st_size > 0


@pytest.fixture
def home7(tmp_path: Path) -> Path:
    dst = tmp_path / "home7"
    shutil.copytree(REPO / "sample_homes" / "v7", dst, symlinks=True, copy_function=shutil.copy2)
    for dirpath, _dirs, _files in os.walk(dst, topdown=False):
        os.utime(dirpath, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    return dst


def test_every_reading_command_leaves_a_7_0_home_untouched(home7: Path, tmp_path: Path, tree_snapshot) -> None:  # noqa: ANN001
    _snapshot = tree_snapshot
    # refs.db is a WAL-mode SQLite file: opening it in place would leave -wal/-shm files behind
    before = _snapshot(home7)
    assert any(name.endswith("refs.db") for name in before)
    keys = str(REPO / "sample_homes" / "v7-keys.json")
    scan = tmp_path / "scan7"
    runner = CliRunner()
    commands = [
        ["scan", str(home7), "--out", str(scan), "--quiet"],
        ["scan", str(home7), "--out", str(scan), "--quiet"],
        ["analyze", str(scan), "--json"],
        ["report", str(scan), "-o", str(tmp_path / "r7.html"), "-q"],
        ["replay", str(home7), "--json"],
        ["verify", str(home7), "--json"],
        ["verify", str(home7), "--keys", keys],
        ["seal", str(home7), "-o", str(tmp_path / "seal7.json")],
        ["timeline", str(home7), "-o", str(tmp_path / "timeline7.jsonl")],
        ["replay", str(home7), "--keys", keys, "--json"],
    ]
    for args in commands:
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output[-2000:])
        assert _snapshot(home7) == before, f"vakaudit {args[0]} changed the 7.0 home"
    # the commands that do not read 7.0 frames yet say so in one line
    for args in (commands[7], commands[8]):
        result = runner.invoke(app, args)
        assert "is a 7.0 data-baseline home (layout g3)" in result.stderr, args


def test_a_fleet_task_leaves_the_home_untouched(home: Path, tmp_path: Path, tree_snapshot) -> None:  # noqa: ANN001
    _snapshot = tree_snapshot
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


@pytest.mark.parametrize(
    "args",
    [
        ["scan", "{home}", "--out", "{out}/scan", "-q"],
        ["verify", "{home}"],
        ["report", "{home}", "--scan-out", "{out}/scan", "-o", "{out}/r.html", "-q"],
        ["report", "{scan}", "-o", "{out}/r.html", "-q"],
        ["timeline", "{home}", "-o", "{out}/t.csv", "--format", "csv"],
        ["seal", "{home}", "-o", "{out}/seal.json"],
    ],
    ids=lambda a: " ".join(a[:2]).replace("{", "").replace("}", ""),
)
def test_a_temporary_directory_inside_the_home_is_a_usage_error(
    args: list[str], home: Path, tmp_path: Path, tree_snapshot  # noqa: ANN001
) -> None:
    import subprocess
    import sys

    scan = tmp_path / "scan-made-before"
    subprocess.run([sys.executable, "-m", "vakaudit", "scan", str(home), "--out", str(scan), "-q"], check=True)
    inside = home / "tmp"  # made by the test: the one place in the home a temporary file could go
    inside.mkdir()
    before = tree_snapshot(home)
    out = tmp_path / "out"
    out.mkdir()
    argv = [a.format(home=home, out=out, scan=scan) for a in args]
    env = {**os.environ, "TMPDIR": str(inside)}
    p = subprocess.run([sys.executable, "-m", "vakaudit", *argv], capture_output=True, text=True, env=env)
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "TMPDIR" in lines[0] and str(home) in lines[0], p.stderr
    assert tree_snapshot(home) == before
    assert list(inside.iterdir()) == []
