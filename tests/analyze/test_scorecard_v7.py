"""The scorecard's ledger syncs on synthetic 7.0 homes equal the syncs the writer made.

The expectation is the synth record's count of the sync calls its segment writer made (at commit
points, for unsynced tails when a writer closes or seals, and the four of each seal), which is
independent of the scorecard's derivation from the scanned frames and refs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import vakaudit.cli
from vakaudit.analyze import analyze
from vakaudit.analyze.scorecard import Status
from vakaudit.scan import scan_home
from vakaudit.storage import KeyRing

runner = CliRunner()


@pytest.mark.parametrize(("turns", "sessions"), [(None, None), (150, 2)])
def test_ledger_syncs_equal_the_writers_count(tmp_path: Path, turns: int | None, sessions: int | None) -> None:
    home, keys, record = tmp_path / "home", tmp_path / "keys.json", tmp_path / "record.json"
    args = ["synth", home, "--layout", "v7", "--keys-out", keys, "--record", record, "--no-fsync"]
    if turns:
        args += ["--turns", turns, "--sessions", sessions]
    r = runner.invoke(vakaudit.cli.app, [str(a) for a in args])
    assert r.exit_code == 0, r.output
    rec = json.loads(record.read_text(encoding="utf-8"))
    if turns:  # long sessions: some ledger segments were sealed
        assert any(p.name.endswith(".sealed") for p in home.rglob("sessions/**/seg-*"))
    scan = scan_home(home, out=tmp_path / "scan", keys=KeyRing.from_file(keys))
    card = analyze(scan).scorecard
    syncs = card.criterion("syncs_per_turn")
    ledger = next(c for c in syncs.contributors if c["artifact"] == "session_ledger")
    assert ledger["syncs"] == rec["syncs"]["ledger"]
    assert card.turns == rec["turns"]
    growth = card.criterion("record_growth_per_turn")
    assert growth.status.value in ("pass", "fail") and growth.figure is not None
    # the catalog answers the turn path from indexes (baseline7.md §10): not a read of the history
    assert any(p.name == "catalog.db" for p in home.rglob("catalog/*"))
    reads = card.criterion("history_reads")
    assert (reads.figure, reads.status, reads.contributors) == (0.0, Status.PASS, [])
