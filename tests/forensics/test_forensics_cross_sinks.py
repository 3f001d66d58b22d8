"""The side-file kinds the cross checks read are declared once, by the collector's methods: each is a
registered kind with a reader, and verify hands each file of one to that method and no other."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from vakaudit.artifacts import get_kind
from vakaudit.forensics import crosscheck, verify_home
from vakaudit.forensics.crosscheck import ROW_KINDS, CrossCollector

TINY = Path(__file__).resolve().parents[2] / "sample_homes" / "tiny"

# what the checks compare (home.md §4.1, §4.2, §4.8, §6.4): written out here, not read from the code
EXPECTED = {
    "routing_evidence": "add_routing_rows",
    "cost_log": "add_cost_rows",
    "delivery_jobs": "add_outbox_rows",
    "commitments": "add_commitment_rows",
}


def test_the_row_kinds_are_the_kinds_each_check_compares() -> None:
    assert ROW_KINDS == set(EXPECTED)
    collector = CrossCollector()
    for kind, method in EXPECTED.items():
        assert get_kind(kind).reader is not None, kind  # a registered kind whose files are read
        sink = collector.sink(kind)
        assert sink is not None and sink.__func__ is getattr(CrossCollector, method), kind
    assert collector.sink("session_ledger") is None
    assert collector.sink("no_such_kind") is None


def test_a_kind_declared_twice_fails_loudly() -> None:
    with pytest.raises(ValueError, match="cost_log"):
        crosscheck._rows_of("cost_log")(lambda self, rel_path, rows: None)


def test_verify_feeds_each_file_to_the_method_of_its_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    shutil.copytree(TINY, home, symlinks=True)
    fed: dict[str, set[str]] = {method: set() for method in EXPECTED.values()}
    for method in EXPECTED.values():
        original = getattr(CrossCollector, method)

        def record(self, rel_path, rows, _method=method, _original=original):  # noqa: ANN001, ANN202
            fed[_method].add(rel_path)
            return _original(self, rel_path, rows)

        monkeypatch.setattr(CrossCollector, method, record)
    report = verify_home(home, jobs=0)
    assert report.cross_checks  # the checks ran

    def files(pattern: str) -> set[str]:  # the home's files of a kind, found by their names
        return {p.relative_to(home).as_posix() for p in home.glob(pattern)}

    assert fed == {
        "add_routing_rows": files("**/routing-evidence.jsonl"),
        "add_cost_rows": files("**/cost-log.jsonl"),
        "add_outbox_rows": files("delivery/jobs/*.json"),
        "add_commitment_rows": files("**/commitments.jsonl") | files("**/commitments.lock"),  # the lock: no rows
    }
    assert all(fed.values())
