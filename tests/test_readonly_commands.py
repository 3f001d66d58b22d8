"""Never touch the evidence: every reading command leaves a home byte- and mtime-identical.

The home is a copy of the committed tiny sample home (every artifact kind, a WAL-mode store.db),
made with its mtimes preserved; the snapshot covers every file and directory, so a created file
(a SQLite ``-wal``/``-shm``, a lock file, an output written into the home) fails the test as well.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from vakaudit.cli import app


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
    ]
    for args in commands:
        result = runner.invoke(app, args)
        assert result.exit_code in (0, 1), (args, result.output[-2000:])
        assert _snapshot(home) == before, f"vakaudit {args[0]} changed the home"
    assert (tmp_path / "r.html").stat().st_size > 0
    assert (tmp_path / "timeline.csv").stat().st_size > 0
