"""Turns and sessions derived in the worker pool as soon as every ledger is read.

With a process pool the ledger tasks go first; once they are done the derivation runs in the pool
while side files are still read. These tests pin when that happens, when it must not (a ledger the
workers found rewritten still has old rows to prune), and that either way the tables equal those of
a fresh one-process scan.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import vakaudit.scan.engine as engine
from vakaudit.scan import scan_home

TABLES = ("turns", "sessions", "entries", "entry_fields")
KEYS = {
    "turns": ["rel_path", "turn_no"],
    "sessions": ["rel_path"],
    "entries": ["rel_path", "line_no"],
    "entry_fields": ["rel_path", "kind", "field"],
}


@pytest.fixture()
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vakaudit.synth import build_home

    home = tmp_path_factory.mktemp("early") / "home"
    build_home(home, profile="tiny", seed=5, fsync=False)
    return home


def _sorted(res: object, name: str):  # type: ignore[no-untyped-def]
    return res.table(name).sort_by([(k, "ascending") for k in KEYS[name]])  # type: ignore[attr-defined]


def _late_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    late = engine._derive_turns_sessions

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return late(*args, **kwargs)

    monkeypatch.setattr(engine, "_derive_turns_sessions", spy)
    monkeypatch.setattr(engine, "INLINE_BYTES", 0)  # the process pool even on this small home
    return calls


def test_the_pool_derives_turns_and_sessions_once_the_ledgers_are_read(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _late_calls(monkeypatch)
    par = scan_home(home, out=tmp_path / "par", jobs=2)
    assert calls == []  # derived in the pool, not after it
    monkeypatch.setattr(engine, "INLINE_BYTES", 1 << 60)
    ser = scan_home(home, out=tmp_path / "ser", jobs=1)
    assert calls == [1]  # the one-process scan derives after reading, as before
    assert par.row_counts["turns"] > 0 and par.row_counts["sessions"] > 1
    for name in TABLES:
        assert _sorted(par, name).equals(_sorted(ser, name)), name


def test_a_ledger_found_rewritten_waits_for_its_old_rows_to_be_pruned(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _late_calls(monkeypatch)
    scan_home(home, out=tmp_path / "out", jobs=2)
    assert calls == []
    # rewrite a byte of a ledger's first line and append a line: the walk sees a grown file (read
    # from its last offset), the worker sees the changed head and reads it again from byte 0
    ledger = sorted(home.glob("**/sessions/*/*.jsonl"), key=lambda p: p.stat().st_size)[-1]
    raw = ledger.read_bytes()
    first = raw.index(b'"id":"') + 6
    flipped = b"0" if raw[first : first + 1] != b"0" else b"1"
    extra = raw.splitlines(keepends=True)[-1]
    ledger.write_bytes(raw[:first] + flipped + raw[first + 1 :] + extra)
    # and a side file grows, so that the rescan has a side task after the ledger task (a pool)
    log = home / "agents/vak/cost-log.jsonl"
    log.write_bytes(log.read_bytes() + log.read_bytes().splitlines(keepends=True)[-1])
    plans: list[object] = []
    early = engine._early_derive_plan

    def spy_plan(*args, **kwargs):  # type: ignore[no-untyped-def]
        plans.append(early(*args, **kwargs))
        return plans[-1]

    monkeypatch.setattr(engine, "_early_derive_plan", spy_plan)
    again = scan_home(home, out=tmp_path / "out", jobs=2)
    assert plans == [None]  # asked once the ledger task was done, and declined
    assert calls == [1]  # derived after the pool, once the rewritten ledger's old rows were pruned
    codes = again.table("findings").column("code").to_pylist()
    assert "append_only_violation" in codes
    monkeypatch.setattr(engine, "INLINE_BYTES", 1 << 60)
    shutil.rmtree(tmp_path / "fresh", ignore_errors=True)
    fresh = scan_home(home, out=tmp_path / "fresh", jobs=1)
    for name in TABLES:
        assert _sorted(again, name).equals(_sorted(fresh, name)), name
