"""The measured profile reproduces the capacity report's home within 5%, read back from the files.

Targets are the report's measured figures (vak 3.5.1, 60 sessions, 1,386 turns; write-paths-and-growth
"Measured" and "Where the ledger bytes go"/"Where the disk goes"). Every figure below is recomputed from
the written ledgers (parsed line by line) and from file sizes, never from the generator's counters.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest

TOLERANCE = 0.05

REPORT = {
    "sessions": 60,
    "turns": 1386,
    "entries": 18187,
    "ledger_bytes": 92e6,
    "entries_per_turn": 18187 / 1386,
    "bytes_per_turn": 66e3,
    "binding_share": 0.72,
    "binding_bytes": 48e3,
    "user_messages": 3132,
    "user_message_bytes": 3.7e3,
    "assistant_message_bytes": 1.3e3,
    "assistant_per_turn": 2.3,
    "receipts_per_turn": 2.3,
    "tool_calls_per_turn": 1563 / 1386,
    "activities_per_turn": 3.0,
    "home_bytes": 256e6,
    "checkpoint_bytes": 134e6,
    "checkpoint_sessions": 17,
    "store_share": 0.12,
}


@pytest.fixture(scope="module")
def figures(measured_g1_home: Path) -> dict[str, float]:
    home = measured_g1_home
    kinds: Counter[str] = Counter()
    kind_bytes: Counter[str] = Counter()
    roles: Counter[str] = Counter()
    role_bytes: Counter[str] = Counter()
    tool_calls = 0
    ledger_bytes = 0
    ledgers = sorted(home.glob("agents/vak/sessions/*/*.jsonl"))
    for path in ledgers:
        with open(path, "rb") as fh:
            for raw in fh:
                ledger_bytes += len(raw)
                obj = orjson.loads(raw)  # work lines: the duplicate `kind` key leaves the event here
                kind = obj["kind"] if isinstance(obj["kind"], str) else "work"
                kinds[kind] += 1
                kind_bytes[kind] += len(raw)
                if kind == "message":
                    role = obj["message"]["role"]
                    roles[role] += 1
                    role_bytes[role] += len(raw)
                    tool_calls += sum(b["type"] == "tool_use" for b in obj["message"]["content"])
    turns = kinds["intent"]
    entries = sum(kinds.values())
    files = [p for p in home.rglob("*") if p.is_file()]
    checkpoint_files = [p for p in home.glob("agents/vak/checkpoints/*/*.json")]
    store = sum(p.stat().st_size for p in home.glob("cache/store.db*"))
    return {
        "sessions": len(ledgers),
        "turns": turns,
        "entries": entries,
        "ledger_bytes": ledger_bytes,
        "entries_per_turn": entries / turns,
        "bytes_per_turn": ledger_bytes / turns,
        "binding_share": kind_bytes["turn_capabilities_bound"] / ledger_bytes,
        "binding_bytes": kind_bytes["turn_capabilities_bound"] / kinds["turn_capabilities_bound"],
        "user_messages": roles["user"],
        "user_message_bytes": role_bytes["user"] / roles["user"],
        "assistant_message_bytes": role_bytes["assistant"] / roles["assistant"],
        "assistant_per_turn": roles["assistant"] / turns,
        "receipts_per_turn": kinds["receipt"] / turns,
        "tool_calls_per_turn": tool_calls / turns,
        "activities_per_turn": kinds["activity"] / turns,
        "home_bytes": sum(p.stat().st_size for p in files),
        "checkpoint_bytes": sum(p.stat().st_size for p in checkpoint_files),
        "checkpoint_sessions": len({p.parent for p in checkpoint_files}),
        "store_share": store / ledger_bytes,
    }


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REPORT))
def test_measured_profile_matches_the_report(figures: dict[str, float], name: str) -> None:
    target = REPORT[name]
    got = figures[name]
    assert abs(got - target) <= TOLERANCE * target, f"{name}: {got:.4g} vs report {target:.4g}"
