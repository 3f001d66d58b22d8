"""The 7.0 turn-path reads (layout g3): what a 7.0 turn reads instead of the JSONL-era reads of
:data:`vakaudit.analyze.readscale.READS`, classified on a 7.0 home (read only, no keys needed).

Measured on the home: the catalog and refs queries from their SQLite query plans (on private
copies of ``catalog.db`` and ``refs.db``, :mod:`vakaudit._sqlite`), and opening a conversation from
a fit of its segment walk over the home's conversations (the same growth test as the synthetic
sweeps: :func:`vakaudit.analyze.readscale.classify`'s exponent and resolution). A read the home
cannot show is estimated from the baseline7.md section named. Nothing here prints.
"""

from __future__ import annotations

import math
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from vakaudit.analyze.readscale import GROWTH_EXPONENT, RESOLUTION_MS, _linear_slope, _loglog_exponent
from vakaudit.scan.paths import conversation_dirs

__all__ = ["V7_READS", "V7ReadClass", "V7ReadSpec", "plan_class", "v7_read_classes"]


#: 7.0's exit criterion: "no read on the turn path that is O(history)" (baseline7.md §1); each read
#: below is what 7.0 does instead of a JSONL-era read of :data:`READS` (``replaces``), and the
#: section of baseline7.md that says so.
@dataclass(frozen=True, slots=True)
class V7ReadSpec:
    name: str
    replaces: str  # the JSONL-era read (a name of READS)
    vak_function: str
    section: str
    sql: str | None = None  # the query run on the home's catalog.db / refs.db (plan measured)
    db: str | None = None  # "catalog" or "refs"


V7_READS: tuple[V7ReadSpec, ...] = (
    V7ReadSpec("session_open_segments", "ledger_open_verify", "SessionLog::open (7.0: parse all segments)",
               "§8.3 writable open: verify active .log, parse all segments"),
    V7ReadSpec("request_admission_ref", "request_admission_scan", "req/<session>/<sha256 hex(R)> ref (CAS)",
               "§8.3 request admission", "SELECT target FROM refs WHERE name = ?", "refs"),
    V7ReadSpec("session_listing_catalog", "session_listing_parse", "GET /sessions (catalog nodes)",
               "§10 nodes_kind(kind, created_at)",
               "SELECT id, title FROM nodes WHERE kind = 'session' ORDER BY created_at DESC LIMIT 100", "catalog"),
    V7ReadSpec("session_entries_catalog", "turn_index_rebuild", "catalog entries of one session",
               "§10 entries PK (session, entry_id)",
               "SELECT entry_id, parent, depth FROM entries WHERE session = ?", "catalog"),
    V7ReadSpec("ingest_cursor", "store_import_session", "catalog ingest from its cursor",
               "§10 cursors: per source, frames already taken", "SELECT segment, frames FROM cursors WHERE source = ?",
               "catalog"),
    V7ReadSpec("routing_evidence_rollup", "routing_evidence_snapshot", "routing-evidence-rollup Document",
               "§7.2 agents/<a>/routing-evidence-rollup: day buckets per leg"),
    V7ReadSpec("commitment_rollup", "commitment_replay", "commitments-rollup Document",
               "§7.2 agents/<a>/commitments-rollup"),
)


@dataclass(frozen=True, slots=True)
class V7ReadClass:
    """One 7.0 turn-path read of a g3 home: its class and whether it was measured on the home."""

    name: str
    replaces: str
    vak_function: str
    read_class: str  # flat | session | home
    basis: str  # "measured" or "estimated"
    evidence: str  # what was measured (a query plan, a fit) or the spec text it is estimated from
    section: str


def plan_class(plan: list[str], *, per_session: bool) -> str:
    """The class of a query from its plan (``EXPLAIN QUERY PLAN`` detail lines): a SCAN of a table
    reads every row of the home (``home``); an index search reads what its key selects: one
    session's rows (``session``) when the key is a session, else a bounded set (``flat``)."""
    if any(line.startswith("SCAN ") and "USING" not in line and "CONSTANT" not in line for line in plan):
        return "home"
    return "session" if per_session else "flat"


def _plan(con: sqlite3.Connection, sql: str) -> list[str]:
    args = ("x",) * sql.count("?")
    return [str(row[-1]) for row in con.execute(f"EXPLAIN QUERY PLAN {sql}", args)]


def _segment_fit(root: Path) -> tuple[str, str] | None:
    """(class, evidence) of opening a conversation, fitted over the home's conversations: time to
    walk and verify every frame of a directory against its frame count. None with fewer than two
    conversations of different sizes."""
    from vakaudit.storage import iter_segments

    points: list[tuple[int, float]] = []
    for d in conversation_dirs(root):
        best = math.inf
        frames = 0
        for _ in range(3):
            t0 = time.perf_counter_ns()
            frames = sum(1 for _seg, fs in iter_segments(d) for _f in fs)
            best = min(best, (time.perf_counter_ns() - t0) / 1e6)
        if frames:
            points.append((frames, best))
    sizes = sorted({f for f, _ in points})
    if len(sizes) < 2:
        return None
    xs, ys = [f for f, _ in points], [ms for _, ms in points]
    k = _loglog_exponent(xs, ys)
    slope = _linear_slope(xs, ys) / 1e6  # ms per frame (_linear_slope gives us per 1 000)
    # small homes: a fixed cost per open hides the per-frame cost in k; the linear fit's growth
    # over the home's range of sizes counts when it is above the timer's resolution
    grows = k >= GROWTH_EXPONENT or slope * (max(xs) - min(xs)) > RESOLUTION_MS
    cls = "session" if grows else "flat"
    return cls, (f"fit over {len(points)} conversations ({min(xs)}-{max(xs)} frames): cost ~ frames^{k:.2f}, "
                 f"{slope * 1000:.3g} us per frame, {min(ys):.3g}-{max(ys):.3g} ms")


def v7_read_classes(home: str | os.PathLike[str]) -> list[V7ReadClass]:
    """Classify the 7.0 turn-path reads of the g3 home ``home`` (read only; no keys needed).

    Measured on the home: the catalog and refs queries from their SQLite query plans on private
    copies of ``catalog.db`` and ``refs.db``; opening a conversation from a fit of its frame walk
    over the home's conversations. Estimated (``basis`` says so), from the baseline7.md section
    named: what the home cannot show (a rollup Document read is one object of bounded size;
    no conversations of two sizes to fit).
    """
    from contextlib import ExitStack

    from vakaudit._sqlite import open_private_copy

    root = Path(home).expanduser()
    tenants = sorted(p for p in (root / "tenants").iterdir() if p.is_dir()) if (root / "tenants").is_dir() else []
    out: list[V7ReadClass] = []
    with ExitStack() as stack:
        # private copies (with their -wal): opening a WAL database in the home would leave files there
        cons: dict[str, sqlite3.Connection] = {}
        for name, rel in (("catalog", "catalog/catalog.db"), ("refs", "store/refs.db")):
            for t in tenants:
                if name in cons or not (t / rel).is_file():
                    continue
                try:
                    cons[name] = stack.enter_context(open_private_copy(t / rel, with_wal=True)).con
                except (OSError, sqlite3.Error):
                    continue  # not a regular file or not SQLite: the read is estimated
        for spec in V7_READS:
            out.append(_classify_v7(root, spec, cons))
    return out


def _classify_v7(root: Path, spec: V7ReadSpec, cons: dict[str, sqlite3.Connection]) -> V7ReadClass:
    def made(cls: str, basis: str, evidence: str) -> V7ReadClass:
        return V7ReadClass(spec.name, spec.replaces, spec.vak_function, cls, basis, evidence, spec.section)

    if spec.sql is not None and spec.db is not None:
        con = cons.get(spec.db)
        if con is None:
            return made("flat", "estimated", f"no {spec.db} database in the home; {spec.section}")
        try:
            plan = _plan(con, spec.sql)
        except sqlite3.Error as exc:
            return made("flat", "estimated", f"{spec.db}: query not planned ({exc}); {spec.section}")
        cls = plan_class(plan, per_session="session = ?" in spec.sql)
        return made(cls, "measured", f"query plan on the home's {spec.db}: " + "; ".join(plan))
    if spec.name == "session_open_segments":
        fit = _segment_fit(root)
        if fit is not None:
            return made(fit[0], "measured", fit[1])
        return made("session", "estimated", spec.section)
    # rollups: one Document version read, bounded by its buckets (day buckets per leg), not by history
    return made("flat", "estimated", f"{spec.section}; one Document read, its size bounded by the rollup's buckets")
