"""Growth projection: per-artifact size at N turns from measured per-turn constants, bounds applied.

This is a model, not a measurement (the report labels it an estimate and prints ``METHOD``):
straight multiplication of what the home measured per turn, with the bounds vak's code enforces:

- ``cost_log``: compacts when it reaches 5 MiB, keeping 90 days of rows, so it never exceeds
  max(5 MiB, 90 days of rows at the observed turn rate).
- ``budget_alerts``: keeps the last 2 000 rows once it reaches 1 MiB.
- ``checkpoints``: a ring of 20 snapshots per session, each at most 64 MiB (8 MiB per file): the
  size follows sessions x min(20, snapshots per session) x snapshot size, not turns.
- ``store_db``: a derived index, the measured share of ledger bytes.
- kinds that do not grow per turn (configuration, secrets, locks) stay at their measured size.

A 7.0 home (layout g3, ``project(..., layout="g3")``) follows 7.0's bounds instead (:data:`V7_RULES`):
retention by segment for the record chains baseline7.md §9.1 names, the checkpoint retention per
session, the telemetry cap, the catalog as a derived index; session ledgers and every other chain
grow linearly (no retention class applies to them in §9.1).

No I/O here: inputs are the small rows the metric queries returned; the bounds are the kinds' cards'.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from vakaudit.artifacts import LEDGER_KIND, get_kind
from vakaudit.artifacts._base import V7_LAYOUTS, WriteGroup
from vakaudit.storage.segments import ROTATE_BYTES

MIB = 1024 * 1024
GB = 1_000_000_000
# the bounds the kinds' cards give (vakaudit.artifacts.cost_log, budget_alerts)
COST_LOG_COMPACT_BYTES: int = get_kind("cost_log").card.limits.bytes or 0
COST_LOG_RETENTION_DAYS: int = get_kind("cost_log").card.limits.days or 0
BUDGET_ALERTS_COMPACT_BYTES: int = get_kind("budget_alerts").card.limits.bytes or 0
CHECKPOINT_RING = 20
CHECKPOINT_SNAPSHOT_CAP = 64 * MIB
CHECKPOINT_FILE_CAP = 8 * MIB
#: Kind groups whose bytes do not grow with turns (settings, secrets, locks, the feed pipeline).
NON_GROWING_GROUPS = frozenset({WriteGroup.CONFIG, WriteGroup.SECRET, WriteGroup.OTHER, WriteGroup.FEEDS})

DEFAULT_TURNS = (1000, 10000, 100000)
DEFAULT_GB = (1, 10, 100)

METHOD = (
    "estimate: measured bytes per turn of each artifact (observed bytes / observed turns) multiplied by "
    "N turns, today's mix assumed; bounds the code enforces applied (cost-log compaction at 5 MiB keeping "
    "90 days; budget-alerts 1 MiB / 2 000 rows; checkpoint ring of 20 per session at <= 64 MiB each, "
    "sessions growing at the observed turns per session; store.db at its measured share of ledger "
    "bytes; non-growing kinds kept at their measured size). Days at the observed turn rate "
    "(turns / days between first and last turn)."
)

# -- 7.0 bounds (baseline7.md) ----------------------------------------------------------------
# §9.1 "Default retention label": activity_segment 400 d (sealed segments of
# agents/<a>/{cost-log,routing-evidence,intent-evidence}); inbox_entry 90 d (sealed segments of
# agents/<a>/inbox); incident 400 d (sealed segments of operations/{incidents,actions}); checkpoint
# 30 d ("manifests, per session, clock = session's newest"); telemetry "14 d, 200 MiB" (rotated log
# files). "Chain segments expire whole: only sealed segments other than the newest sealed one": the
# open .log and the newest sealed segment always stay, each up to ROTATE_BYTES (§3.6: a record chain
# seals its open segment at 256 KiB). Session ledgers have no retention class (trash applies only
# to trashed conversations), so they grow linearly. §12.4 quotas: a hard quota "refuses new work and
# removes nothing but rebuildable data"; its limit is the owner's setting, not in the home's data:
# not applied. Document history (90 d) bounds only non-current Document versions: not applied
# (**unconfirmed** which kinds' bytes it covers). Lifecycle runs only in mode = "commit" (§9.1):
# the projection assumes it does.
V7_SEGMENT_RETENTION_DAYS = {
    "cost_log": 400, "routing_evidence": 400, "intent_evidence": 400,  # activity_segment
    "inbox": 90,  # inbox_entry
    "operations_incidents": 400, "operations_actions": 400,  # incident
}
V7_CHECKPOINT_DAYS = 30
V7_TELEMETRY_CAP_BYTES = 200 * MIB
V7_RULES = {
    **{k: f"segments_{d}d" for k, d in V7_SEGMENT_RETENTION_DAYS.items()},
    "checkpoints": "checkpoints_v7",
    "catalog_db": "store_db",  # derived, rebuildable (§2.6 class Derived)
    "logs": "telemetry_v7",
    "budget_alerts": "linear",  # a record chain in 7.0: the JSONL 1 MiB compaction is gone
}

METHOD_V7 = (
    "estimate: measured bytes per turn of each artifact multiplied by N turns, today's mix assumed; 7.0 "
    "bounds applied (baseline7.md §9.1, §3.6): sealed segments of cost-log, routing- and intent-evidence "
    "and operations dropped after 400 d and of the inbox after 90 d (the newest sealed segment and the "
    "open one, 256 KiB each, kept), a session's checkpoints removed 30 d after its newest (sessions "
    "active in 30 days at the observed rate), telemetry logs capped at 200 MiB, catalog.db at its "
    "measured share of ledger bytes; session ledgers and other chains grow linearly (no retention "
    "class); quotas (an owner's limit) and Document history (90 d) not applied. Days at the observed "
    "turn rate."
)

# rule per artifact kind name; kinds not named here follow their `grows` flag (linear or constant)
RULES = {
    "cost_log": "cost_log",
    "budget_alerts": "budget_alerts",
    "checkpoints": "checkpoints",
    "store_db": "store_db",
}

BOUND_TEXT = {
    "linear": "none",
    "constant": "does not grow with turns",
    "cost_log": "compacts at 5 MiB, keeps 90 days",
    "budget_alerts": "keeps the last 2 000 rows past 1 MiB",
    "checkpoints": "ring of 20 per session, <= 64 MiB per snapshot; no cross-session GC",
    "store_db": "derived index at its measured share of ledger bytes; rebuildable",
    "ledger_without_repeated_bindings": "if a binding were written once per epoch",
    **{f"segments_{d}d": f"7.0 retention: sealed segments dropped after {d} d (newest sealed + open kept)"
       for d in sorted(set(V7_SEGMENT_RETENTION_DAYS.values()))},
    "checkpoints_v7": "7.0 retention: a session's checkpoints removed 30 d after its newest",
    "telemetry_v7": "7.0 retention: telemetry logs 14 d, at most 200 MiB",
}


@dataclass(frozen=True, slots=True)
class ArtifactGrowth:
    """Measured inputs for one artifact kind."""

    kind: str
    size_bytes: int  # observed bytes in the home
    rows: int = 0  # observed rows (lines, entries, snapshot files) when it has rows
    grows: bool = True  # written per turn (append-only or per-turn rewrite)
    files: int = 0


@dataclass(frozen=True, slots=True)
class HomeRates:
    """Measured home-level inputs."""

    turns: int
    sessions: int
    span_days: float | None  # days between the first and the last turn (None when unknown)
    ledger_bytes: int

    @property
    def turns_per_day(self) -> float | None:
        if not self.span_days or self.span_days <= 0 or self.turns <= 1:
            return None
        return self.turns / self.span_days

    @property
    def turns_per_session(self) -> float:
        return self.turns / self.sessions if self.sessions else float(self.turns)


@dataclass(frozen=True, slots=True)
class ProjectionRow:
    artifact: str
    rule: str
    per_turn_bytes: float | None
    observed_bytes: int
    projected_bytes: dict[str, float]  # str(N) -> bytes
    bound: str


@dataclass(slots=True)
class Projection:
    turns: list[int]
    rows: list[ProjectionRow]
    total_bytes: dict[str, float]
    turns_per_day: float | None
    days_until: list[dict[str, Any]] = field(default_factory=list)
    method: str = METHOD
    estimate: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _rule(g: ArtifactGrowth, layout: str | None = None) -> str:
    if layout in V7_LAYOUTS:
        rule = V7_RULES.get(g.kind)
        if rule == "telemetry_v7" and not g.grows:
            return "constant"
        if rule:
            return rule
        if g.kind in RULES:  # a JSONL-era bound that 7.0 does not keep
            return "linear" if g.grows else "constant"
    rule = RULES.get(g.kind)
    if rule:
        return rule
    return "linear" if g.grows else "constant"


def _project(g: ArtifactGrowth, rule: str, n: float, rates: HomeRates, ledger_at_n: float) -> float:
    t = max(rates.turns, 1)
    per_turn = g.size_bytes / t
    if rule == "constant":
        return float(g.size_bytes)
    if rule == "linear":
        return per_turn * n
    if rule == "cost_log":
        rate = rates.turns_per_day
        window = per_turn * rate * COST_LOG_RETENTION_DAYS if rate else 0.0
        return min(per_turn * n, max(float(COST_LOG_COMPACT_BYTES), window))
    if rule == "budget_alerts":
        return min(per_turn * n, float(BUDGET_ALERTS_COMPACT_BYTES))
    if rule == "store_db":
        share = g.size_bytes / rates.ledger_bytes if rates.ledger_bytes else 0.0
        return share * ledger_at_n
    if rule.startswith("segments_"):
        days = int(rule[len("segments_"):-1])
        rate = rates.turns_per_day
        if not rate:
            return per_turn * n  # no turn rate: the retention window cannot be placed
        return min(per_turn * n, per_turn * rate * days + 2 * ROTATE_BYTES)
    if rule == "checkpoints_v7":
        rate = rates.turns_per_day
        if not rate or not rates.sessions:
            return per_turn * n
        per_session = g.size_bytes / rates.sessions
        live = max(1.0, rate * V7_CHECKPOINT_DAYS / rates.turns_per_session)  # sessions active in 30 days
        return min(per_turn * n, live * per_session)
    if rule == "telemetry_v7":
        return min(per_turn * n, float(V7_TELEMETRY_CAP_BYTES))
    if rule == "checkpoints":
        files = g.rows or g.files  # snapshot files written (one per checkpoint)
        if files == 0 or g.size_bytes == 0:
            return 0.0
        mean = min(g.size_bytes / files, float(CHECKPOINT_SNAPSHOT_CAP))
        sessions_at_n = max(1.0, n / rates.turns_per_session)
        per_session_turns = rates.turns_per_session
        snapshots_per_turn = files / t
        per_session = min(float(CHECKPOINT_RING), snapshots_per_turn * per_session_turns)
        return sessions_at_n * per_session * mean
    raise ValueError(rule)


def project(
    artifacts: Sequence[ArtifactGrowth],
    rates: HomeRates,
    *,
    turns: Iterable[int] = DEFAULT_TURNS,
    ledger_kind: str = LEDGER_KIND,
    ledger_without_bindings_bytes: int | None = None,
    gb: Iterable[float] = DEFAULT_GB,
    layout: str | None = None,
) -> Projection:
    """Project every artifact to each N in ``turns``; add the "without repeated bindings" row and
    the days until the home reaches each size in ``gb`` (decimal GB) at the observed turn rate."""
    ns = sorted({int(n) for n in turns})
    if rates.turns < 1:
        return Projection(
            turns=ns,
            rows=[],
            total_bytes={},
            turns_per_day=None,
            days_until=[],
            method=METHOD + " No turn (intent entry) was observed in this home: nothing to project.",
        )
    t = rates.turns
    ledger = next((a for a in artifacts if a.kind == ledger_kind), None)

    def ledger_at(n: float) -> float:
        return (ledger.size_bytes / t * n) if ledger else 0.0

    def total_at(n: float) -> float:
        return sum(_project(a, _rule(a, layout), n, rates, ledger_at(n)) for a in artifacts)

    rows: list[ProjectionRow] = []
    for a in sorted(artifacts, key=lambda x: (-x.size_bytes, x.kind)):
        rule = _rule(a, layout)
        rows.append(
            ProjectionRow(
                artifact=a.kind,
                rule=rule,
                per_turn_bytes=_r(a.size_bytes / t) if rule != "constant" else None,
                observed_bytes=a.size_bytes,
                projected_bytes={str(n): _r(_project(a, rule, n, rates, ledger_at(n))) for n in ns},
                bound=BOUND_TEXT[rule],
            )
        )
        if a.kind == ledger_kind and ledger_without_bindings_bytes is not None:
            per = ledger_without_bindings_bytes / t
            rows.append(
                ProjectionRow(
                    artifact=f"{ledger_kind}_without_repeated_bindings",
                    rule="linear",
                    per_turn_bytes=_r(per),
                    observed_bytes=ledger_without_bindings_bytes,
                    projected_bytes={str(n): _r(per * n) for n in ns},
                    bound=BOUND_TEXT["ledger_without_repeated_bindings"],
                )
            )
    days = []
    rate = rates.turns_per_day
    now = total_at(rates.turns)
    for g in gb:
        target = float(g) * GB
        n = _solve(total_at, target, rates.turns)
        entry: dict[str, Any] = {"gb": g, "turns": None, "days": None}
        if n is not None:
            entry["turns"] = int(math.ceil(n))
            if rate:
                entry["days"] = _r(max(0.0, n - rates.turns) / rate)
        if now >= target:
            entry["turns"], entry["days"] = rates.turns, 0.0
        days.append(entry)
    return Projection(
        turns=ns,
        rows=rows,
        total_bytes={str(n): _r(total_at(n)) for n in ns},
        turns_per_day=_r(rate) if rate else None,
        days_until=days,
        method=METHOD_V7 if layout in V7_LAYOUTS else METHOD,
    )


def _solve(f: Any, target: float, start: int) -> float | None:
    """Smallest N >= start with f(N) >= target (f non-decreasing); None when never reached."""
    lo, hi = float(start), float(max(start, 1))
    while f(hi) < target:
        if hi > 1e15:
            return None
        lo, hi = hi, hi * 2
    for _ in range(200):
        if hi - lo <= 0.5:
            break
        mid = (lo + hi) / 2
        if f(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi


def _r(x: float) -> float:
    return float(f"{x:.6g}") if x else 0.0


__all__ = ["METHOD", "ArtifactGrowth", "HomeRates", "Projection", "ProjectionRow", "project"]
