"""The committed tiny sample home: every file lands in a declared kind and every sidecar reader runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from vakaudit.artifacts import UNCLASSIFIED, classify
from vakaudit.artifacts._base import ReadContext


def _files(home: Path) -> list[str]:
    return sorted(p.relative_to(home).as_posix() for p in home.rglob("*") if p.is_file())


def test_every_file_of_the_tiny_home_is_declared(sample_homes: Path) -> None:
    home = sample_homes / "tiny"
    if not home.is_dir():
        pytest.fail("sample_homes/tiny is missing")
    assert [rel for rel in _files(home) if classify(rel).name == UNCLASSIFIED] == []


def test_sidecar_readers_run_on_the_tiny_home(sample_homes: Path) -> None:
    home = (sample_homes / "tiny").resolve()
    rows: dict[str, int] = {}
    for rel in _files(home):
        kind = classify(rel)
        if kind.reader is None or kind.name == "session_ledger":
            continue
        sid = kind.session_id_of(rel) if kind.session_id_of else None
        ctx = ReadContext(home, rel, rel.rsplit("/", 1)[0] if "/" in rel else "", sid)
        rows[kind.name] = rows.get(kind.name, 0) + sum(b.num_rows for b in kind.reader(ctx))
    # the tiny profile writes every G2 sidecar at least once
    for name in (
        "routing_evidence",
        "cost_log",
        "budget_alerts",
        "activity_log",
        "intent_evidence",
        "security_events",
        "inbox",
        "commitments",
        "checkpoints",
        "sandbox_executions",
        "memory",
        "entities",
        "store_db",
        "config_files",
        "delivery_jobs",
        "flow_runs",
    ):
        assert rows.get(name, 0) > 0, name
