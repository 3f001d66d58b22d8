"""Small shared helpers of the report sections (no I/O, no compute that analyze owns)."""

from __future__ import annotations

from typing import Any

#: write-map groups in the order the reference report shows its cards
GROUP_ORDER = (
    "ledger",
    "checkpoint",
    "sandbox",
    "evidence",
    "server",
    "memory",
    "derived",
    "feeds",
    "config",
    "secret",
    "other",
)

GROUP_TITLES = {
    "ledger": "The session ledgers",
    "checkpoint": "Workspace checkpoints",
    "sandbox": "Sandbox",
    "evidence": "Evidence and accounting sidecars",
    "server": "Server records, outbox and inbox",
    "memory": "Memory, entities and skills",
    "derived": "Derived and rebuildable",
    "feeds": "Feed pipeline",
    "config": "Configuration",
    "secret": "Secrets",
    "other": "Locks, logs and everything else",
}



def kind_title(kinds: dict[str, Any], name: str) -> str:
    k = kinds.get(name)
    return k.title if k is not None else name


def group_of(kinds: dict[str, Any], name: str) -> str:
    k = kinds.get(name)
    return str(k.card.group) if k is not None else "other"


def first_pattern(kinds: dict[str, Any], name: str) -> str:
    k = kinds.get(name)
    if k is None or not k.all_patterns:
        return ""
    return str(k.all_patterns[0]).removeprefix("**/")


def by_key(rows: list[dict[str, Any]], key: str) -> dict[Any, dict[str, Any]]:
    return {r[key]: r for r in rows}


def per_turn(value: float | None, turns: int) -> float | None:
    if value is None or not turns:
        return None
    return value / turns
