"""Balance sheet: what stays flat, what grows with history, ordered by when it would be felt.

"Felt" is a stated threshold per read class (an estimate): an artifact read whole on every turn
(home class) is felt when it reaches 10 MB; one read per session (session class) when one session's
share reaches 100 MB; one that is only stored when it reaches 1 GB. Turns until then come from the
projection's measured per-turn bytes; days from the observed turn rate.
"""

from __future__ import annotations

from dataclasses import dataclass

from vakaudit.report.inputs import ReportInputs
from vakaudit.report.sections._common import by_key

TITLE = "Balance sheet"
ORDER = 110
FELT_BYTES = {"home": 10e6, "session": 100e6, "flat": 1e9}
FELT_WHY = {
    "home": "read whole on every turn: felt at 10 MB",
    "session": "read whole per session: felt when one session reaches 100 MB",
    "flat": "stored, not read per turn: felt at 1 GB on disk",
}
BOUNDED_RULES = {"constant", "cost_log", "budget_alerts"}
LATER_TURNS = 1_000_000  # felt later than this: listed in one line, not itemised
UNBOUNDED = ("none", "unknown")


@dataclass(frozen=True, slots=True)
class FlatItem:
    artifact: str
    title: str
    bound: str
    read: str
    size_bytes: int


@dataclass(frozen=True, slots=True)
class GrowItem:
    artifact: str
    title: str
    read_class: str
    read: str
    bound: str
    size_bytes: int
    per_turn_bytes: float
    felt_turns: int | None
    felt_days: float | None
    why: str
    already: bool


@dataclass(frozen=True, slots=True)
class BalanceSheet:
    flat: list[FlatItem]
    static: list[FlatItem]  # do not grow with turns here, though nothing bounds them
    grows: list[GrowItem]
    later: list[GrowItem]  # grow, but would be felt only past LATER_TURNS
    turns: int
    turns_per_day: float | None
    method: str


def build(inputs: ReportInputs) -> BalanceSheet:
    proj = inputs.analysis.projection
    rules = {r.artifact: r for r in proj.rows}
    disk = by_key(inputs.rows("disk_by_kind"), "kind")
    turns = int(inputs.one("overview").get("turns") or 0)
    sessions = int(inputs.one("overview").get("sessions") or 0)
    tpd = proj.turns_per_day
    flat, grows = [], []
    for name, d in sorted(disk.items()):
        k = inputs.kinds.get(name)
        if k is None or name == "unclassified":
            continue
        r = rules.get(name)
        size = int(d["size_bytes"] or 0)
        c = inputs.card(name)
        if r is None or r.rule in BOUNDED_RULES or not r.per_turn_bytes:
            flat.append(FlatItem(name, k.title, c.bound, c.read, size))
            continue
        cls = c.read_class if c.read_class in FELT_BYTES else "flat"
        per_turn = float(r.per_turn_bytes)
        threshold = FELT_BYTES[cls]
        if cls == "session":
            # one session's share: per-turn bytes spread over the observed sessions' mean length
            current = size / sessions if sessions else size
            felt_turns = int(threshold / per_turn) if per_turn else None  # turns in one conversation
            felt_days = None
        else:
            current = size
            felt_turns = int(threshold / per_turn) if per_turn else None
            felt_days = (max(0.0, felt_turns - turns) / tpd) if (felt_turns is not None and tpd) else None
        grows.append(
            GrowItem(
                artifact=name,
                title=k.title,
                read_class=cls,
                read=c.read,
                bound=c.bound,
                size_bytes=size,
                per_turn_bytes=per_turn,
                felt_turns=felt_turns,
                felt_days=felt_days,
                why=FELT_WHY[cls],
                already=current >= threshold,
            )
        )
    rank = {"home": 0, "session": 1, "flat": 2}
    grows.sort(
        key=lambda g: (
            not g.already,
            g.felt_turns if g.felt_turns is not None else 10**18,
            rank[g.read_class],
            g.artifact,
        )
    )
    flat.sort(key=lambda f: (-f.size_bytes, f.artifact))
    bounded = [f for f in flat if not f.bound.lower().startswith(UNBOUNDED)]
    static = [f for f in flat if f.bound.lower().startswith(UNBOUNDED)]
    soon = [g for g in grows if g.already or (g.felt_turns is not None and g.felt_turns <= LATER_TURNS)]
    later = [g for g in grows if g not in soon]
    return BalanceSheet(
        flat=bounded,
        static=static,
        grows=soon,
        later=later,
        turns=turns,
        turns_per_day=tpd,
        method=(
            "estimate: turns until each artifact crosses its class's threshold (home-class reads 10 MB, a session's "
            "ledger 100 MB, stored-only 1 GB) at its measured bytes per turn; days at the observed turn rate. "
            "Flat: artifacts whose size does not follow turns or that the code bounds"
        ),
    )
