"""`build_one_session`: one ledger of a chosen vak version, for tests that need a single session."""

from __future__ import annotations

from pathlib import Path

import pytest

from vakaudit.errors import UsageError
from vakaudit.ledger import SessionLog
from vakaudit.synth import build_one_session


@pytest.mark.parametrize(
    ("version", "shape_key"),
    [("3.4.9", "first_kept_entry_id"), ("3.5.0", "first_kept_entry_id"), ("3.5.1", "first_turn_id"),
     ("4.0.0", "first_turn_id")],
)  # fmt: skip
def test_one_session_of_each_version(tmp_path: Path, version: str, shape_key: str) -> None:
    ledger = build_one_session(tmp_path / "home", app_version=version, turns=6, seed=2)
    assert list((tmp_path / "home").glob("agents/vak/sessions/*/*.jsonl")) == [ledger]
    log = SessionLog.open_read_only(ledger)
    assert log.warnings == []
    assert log.header.payload["contract"]["app_version"] == version
    kinds = [e.kind for e in log.entries]
    assert kinds.count("intent") == 6
    compactions = [e.payload for e in log.entries if e.kind == "compaction"]
    assert compactions and all(shape_key in c for c in compactions)
    assert ("turn_card" in kinds) == (version != "3.4.9")  # cards from G2 (3.5.0) on
    assert len(log.chain_to_root()) < len(log.entries)  # the forced branch


def test_one_session_rejects_unknown_version(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        build_one_session(tmp_path / "home", app_version="9.9.9")
