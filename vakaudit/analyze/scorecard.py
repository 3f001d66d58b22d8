"""The data-baseline scorecard: vak 7.0's storage exit criteria, each measured on one scanned home.

vak rebuilt its storage (the 7.0 data baseline, baseline7.md §1) to fix what the 3.5.1 capacity
report measured, and its plan states what the rebuild must reach. Each criterion here is one of
those, measured on the home: the figure, the bound, pass or fail, and what to look at when it
fails. The scorecard is computed for homes of either generation, so a JSONL-era home shows, with the
same rules, how far it is from the bounds (the "as-is" of an as-is / to-be comparison).

Figures reuse the analysis' own facts (turns from the ``overview`` metric, barriers from
``barriers_per_turn``, growth from ``disk_by_kind`` and the kinds' groups), so a scorecard never
counts differently from the rest of ``analyze``. A figure that needs plaintext ledger entries (turns,
commit points) is ``needs_keys`` on a 7.0 home scanned without ``--keys``; a home with no turns
gets ``no_turns``. Nothing here reads or writes a home.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from vakaudit.analyze._open import _sql_str
from vakaudit.analyze.metrics import MetricResult
from vakaudit.analyze.projection import NON_GROWING_GROUPS
from vakaudit.artifacts import UNCLASSIFIED
from vakaudit.artifacts._base import V7_LAYOUTS, WriteGroup
from vakaudit.artifacts.delivery_jobs import SETTLED_DELIVERY_STATES
from vakaudit.storage.commit import COMMIT_KINDS, SEAL_SYNCS


class Status(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    NEEDS_KEYS = "needs_keys"  # the figure needs plaintext entries of a sealed (S2) 7.0 ledger
    NO_TURNS = "no_turns"  # a per-turn figure of a home with no turns


@dataclass(frozen=True, slots=True)
class Bounds:
    """The exit criteria's bounds (defaults: vak's plan, as the 7.0 storage work states them)."""

    record_growth_per_turn_bytes: float = 20 * 1024  # "at most 20 KB mean"; §8.3 budgets 20 KiB
    syncs_per_turn: float = 6.0  # the plan's exit criterion (§8.3 records 8 for one scripted turn)
    history_reads: int = 0  # reads on the turn path that grow with the home's history
    undeclared_files: int = 0
    ephemeral_files: int = 0  # files of Ephemeral kinds left once executions settle
    settled_delivery_files: int = 0


@dataclass(frozen=True, slots=True)
class Criterion:
    """One exit criterion measured on one home."""

    name: str
    title: str
    figure: float | None
    bound: float
    unit: str
    status: Status
    measured: str  # how the figure was measured
    look_at: str  # what to look at when it fails (the largest contributors when it does)
    contributors: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = str(self.status)
        return d


@dataclass(frozen=True, slots=True)
class Scorecard:
    layout: str | None
    turns: int
    locked: bool  # a 7.0 home scanned without keys: its ledger entries are sealed
    criteria: list[Criterion]

    @property
    def passed(self) -> bool | None:
        """True when every criterion passes, False when one fails, None when none fails but one
        could not be measured (needs keys, no turns)."""
        statuses = {c.status for c in self.criteria}
        if Status.FAIL in statuses:
            return False
        return True if statuses == {Status.PASS} else None

    def criterion(self, name: str) -> Criterion:
        return next(c for c in self.criteria if c.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "layout": self.layout,
            "turns": self.turns,
            "locked": self.locked,
            "passed": self.passed,
            "criteria": [c.to_dict() for c in self.criteria],
        }


def build_scorecard(
    con: Any, metrics: dict[str, MetricResult], *, layout: str | None, bounds: Bounds | None = None
) -> Scorecard:
    """Measure every criterion on the home behind ``con`` (the views of :func:`open_scan`), given
    the analysis' metric results (``overview``, ``disk_by_kind``, ``barriers_per_turn``)."""
    b = bounds or Bounds()
    v7 = layout in V7_LAYOUTS
    turns = int(metrics["overview"].one()["turns"] or 0)
    locked = v7 and bool(
        con.execute("SELECT count(*) FROM entries WHERE sealed AND kind IS NULL").fetchone()[0]
    )
    criteria = [
        _growth(metrics, turns, locked, b),
        _syncs(metrics, turns, locked, v7, b),
        _history_reads(con, b),
        _count_files(
            "undeclared_files",
            "Every path declared",
            con,
            f"kind = {_sql_str(UNCLASSIFIED)}",
            b.undeclared_files,
            "files the scan classified to no declared artifact kind (the files table, kind "
            "'unclassified')",
            "the files listed: each is a path vak writes that no REGISTRY entry declares, or a "
            "stranger in the home",
        ),
        _count_files(
            "ephemeral_files",
            "No ephemeral state once executions settle",
            con,
            "kind IN (" + ", ".join(_sql_str(k) for k in _ephemeral_kinds()) + ")",
            b.ephemeral_files,
            "files of the kinds vak's REGISTRY classes Ephemeral (the runtime root, execution "
            "environments and workspaces), counted on a home at rest: an execution that has settled "
            "leaves none",
            "the runtime root and tenants/*/environments, tenants/*/workspaces: an execution that did "
            "not settle, or a cleanup that did not run",
        ),
        _settled_deliveries(con, b),
    ]
    return Scorecard(layout=layout, turns=turns, locked=locked, criteria=criteria)


# ------------------------------------------------------------------------------------ criteria


def _status(figure: float | None, bound: float, *, locked: bool) -> Status:
    if figure is None:
        if locked:
            return Status.NEEDS_KEYS
        return Status.NO_TURNS
    return Status.PASS if figure <= bound else Status.FAIL


def _growth(metrics: dict[str, MetricResult], turns: int, locked: bool, b: Bounds) -> Criterion:
    rows = [r for r in metrics["disk_by_kind"].rows if (r["group"] or WriteGroup.OTHER) not in NON_GROWING_GROUPS]
    total = sum(int(r["size_bytes"] or 0) for r in rows)
    figure = round(total / turns, 1) if turns else None
    top = sorted(rows, key=lambda r: -int(r["size_bytes"] or 0))[:5]
    return Criterion(
        name="record_growth_per_turn",
        title="Record growth per turn (mean)",
        figure=figure,
        bound=b.record_growth_per_turn_bytes,
        unit="bytes",
        status=_status(figure, b.record_growth_per_turn_bytes, locked=locked),
        measured=(
            "stored bytes (st_size) of every file of a kind that grows with use (groups other than "
            f"{', '.join(sorted(NON_GROWING_GROUPS))}), divided by the home's turns (intent entries); "
            "on a 7.0 home these are sealed, compressed frames and objects as they lie on disk"
        ),
        look_at="the kinds with the most bytes per turn (contributors); 'analyze' shows each by field",
        contributors=[
            {
                "kind": r["kind"],
                "size_bytes": int(r["size_bytes"] or 0),
                "bytes_per_turn": round(int(r["size_bytes"] or 0) / turns, 1) if turns else None,
            }
            for r in top
        ],
    )


def _syncs(metrics: dict[str, MetricResult], turns: int, locked: bool, v7: bool, b: Bounds) -> Criterion:
    parts = {r["artifact"]: float(r["barriers"] or 0) for r in metrics["barriers_per_turn"].rows}
    if v7:
        # the ledger's figure is group commit's (the ledger_syncs view, via barriers_per_turn)
        how_ledger = (
            "the session ledger under group commit (baseline7.md §8.3): one fdatasync per commit "
            f"point ({', '.join(COMMIT_KINDS)}, a user message without meta.control) plus one per "
            "activity carrying data.request_id (the scan's commit_point column; without keys, the req/ "
            "refs each admission creates); one "
            "per segment whose last frame is not a commit point (its tail synced when the writer is "
            f"dropped or the segment sealed); {SEAL_SYNCS} per sealed segment"
        )
    else:
        how_ledger = "the session ledger: one sync_data per entry appended (JSONL era)"
    total = sum(parts.values())
    figure = round(total / turns, 2) if turns else None
    top = sorted(parts.items(), key=lambda kv: -kv[1])[:5]
    return Criterion(
        name="syncs_per_turn",
        title="Syncs (fsync/fdatasync) per turn",
        figure=figure,
        bound=b.syncs_per_turn,
        unit="syncs",
        status=_status(figure, b.syncs_per_turn, locked=locked),
        measured=(
            f"{how_ledger}; every other kind: its writes times the barriers one write costs under its "
            "declared discipline (barriers_per_turn); divided by the home's turns"
        ),
        look_at="the artifacts with the most syncs (contributors) and their write discipline in 'vakaudit kinds'",
        contributors=[
            {"artifact": k, "syncs": v, "syncs_per_turn": round(v / turns, 2) if turns else None}
            for k, v in top
        ],
    )


def _history_reads(con: Any, b: Bounds) -> Criterion:
    rows = con.execute(
        "SELECT DISTINCT f.kind FROM files f JOIN write_cards c ON c.kind = f.kind "
        "WHERE c.read_class = 'home' ORDER BY 1"
    ).fetchall()
    kinds = [r[0] for r in rows]
    return Criterion(
        name="history_reads",
        title="No read on the turn path that is O(history)",
        figure=float(len(kinds)),
        bound=float(b.history_reads),
        unit="kinds",
        status=Status.PASS if len(kinds) <= b.history_reads else Status.FAIL,
        measured=(
            "kinds present in the home whose turn-path read grows with the home's history (declared "
            "read class 'home' on the kind's write card; 'vakaudit readscale' measures the JSONL-era "
            "reads)"
        ),
        look_at="the kinds listed: each is read whole on every turn",
        contributors=[{"kind": k} for k in kinds],
    )


def _count_files(
    name: str, title: str, con: Any, where: str, bound: int, measured: str, look_at: str
) -> Criterion:
    n = con.execute(f"SELECT count(*) FROM files WHERE {where}").fetchone()[0]
    sample = con.execute(f"SELECT rel_path, kind FROM files WHERE {where} ORDER BY rel_path LIMIT 10").fetchall()
    return Criterion(
        name=name,
        title=title,
        figure=float(n),
        bound=float(bound),
        unit="files",
        status=Status.PASS if n <= bound else Status.FAIL,
        measured=measured,
        look_at=look_at,
        contributors=[{"rel_path": p, "kind": k} for p, k in sample],
    )


def _settled_deliveries(con: Any, b: Bounds) -> Criterion:
    states = ", ".join(_sql_str(s) for s in SETTLED_DELIVERY_STATES)
    # a job file's current state is its last record line that parses (home.md §6.4)
    sql = (
        "WITH last AS (SELECT rel_path, arg_max(state, line_no) AS state FROM delivery_jobs "
        "WHERE state IS NOT NULL GROUP BY rel_path) "
        f"SELECT rel_path FROM last WHERE state IN ({states}) ORDER BY rel_path"
    )
    paths = [r[0] for r in con.execute(sql).fetchall()]
    return Criterion(
        name="settled_delivery_files",
        title="No file left by a settled delivery job",
        figure=float(len(paths)),
        bound=float(b.settled_delivery_files),
        unit="files",
        status=Status.PASS if len(paths) <= b.settled_delivery_files else Status.FAIL,
        measured=(
            "delivery/jobs/*.json files whose current state (the last record line that parses) is "
            f"{' or '.join(SETTLED_DELIVERY_STATES)}: the JSONL-era outbox never removes them; 7.0 "
            "records deliveries as effects in a record chain"
        ),
        look_at="the delivery/jobs folder: settled jobs kept as files",
        contributors=[{"rel_path": p} for p in paths[:10]],
    )


def _ephemeral_kinds() -> tuple[str, ...]:
    from vakaudit.analyze._open import artifact_kinds
    from vakaudit.artifacts._base import RegistryClass

    return tuple(k.name for k in artifact_kinds() if k.registry_class == RegistryClass.EPHEMERAL) or ("",)
