"""Replay test fixtures; the spec-following ledger writer lives in ``replay_ledgers`` (test modules
import from there: a bare ``conftest`` import is ambiguous when several test folders have one)."""

from __future__ import annotations

from pathlib import Path

import pytest
from replay_ledgers import Plan, write_ledger


@pytest.fixture
def make_ledger(tmp_path: Path):
    """`make_ledger(plan=Plan(), name="s1") -> (path, facts)` writes a fresh spec-following ledger."""

    def make(plan: Plan | None = None, name: str = "s1") -> tuple[Path, dict]:
        path = tmp_path / "home" / "sessions" / "0123456789abcdef" / f"{name}.jsonl"
        facts = write_ledger(path, plan or Plan())
        return path, facts

    return make
