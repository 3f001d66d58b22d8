"""One turn, every write: the writes of a representative turn actually found in this home, in order,
each with its barrier mark and bytes; and the per-turn barrier distribution.

The turn is the one (with tool calls, when the home has such turns) whose entry count is closest to
the median; its ledger entries come from the scan in file order, and the side-ledger rows written
while it ran are attributed by timestamp (between its first entry and the next turn's) and by
session id where the row carries one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from markupsafe import Markup

from vakaudit.artifacts import LEDGER_KIND, all_kinds
from vakaudit.artifacts._base import V7_LAYOUTS, Discipline
from vakaudit.report import charts
from vakaudit.report.inputs import ReportInputs

TITLE = "One turn, every write"
ORDER = 50
LAST_TURN_GRACE = timedelta(seconds=60)

# vak's writer for each ledger entry kind (labels only; the bytes and order are measured)
LEDGER_WRITERS = {
    "header": "SessionLog::create",
    "goal_update": "append_goal_update",
    "goal": "append_goal",
    "intent": "append_intent",
    "turn_capabilities_bound": "append_turn_capabilities",
    "turn_capabilities_ref": "append_turn_capabilities",
    "message": "append_message",
    "receipt": "append_receipt",
    "activity": "append_activity",
    "presentation": "append_presentation",
    "turn_card": "append_turn_card",
    "compaction": "append_incremental_compaction",
    "work": "append_work",
    "child_run": "append_child_run",
}

# side-ledger tables with a row timestamp, and the column holding it: every kind whose card names
# a time column (the ledger's rows are the timeline's own steps), in the cards' time_rank order
SIDE_TIME_COLUMNS = tuple(
    (k.name, k.card.time_column)
    for k in sorted(all_kinds(), key=lambda k: (k.card.time_rank, k.name))
    if k.card.time_column and k.name != LEDGER_KIND
)


@dataclass(frozen=True, slots=True)
class Step:
    artifact: str
    label: str
    writer: str
    rows: int
    size_bytes: int
    barriers: float
    marks: list[str]  # barrier | nobarrier | grouped | relaxed | atomic | background
    at: str
    line_no: int | None
    preview: str | None
    segment: str | None = None  # a 7.0 ledger row: the segment file holding the frame (line_no = frame + 1)


@dataclass(frozen=True, slots=True)
class BarrierRow:
    artifact: str
    writes_per_turn: float | None
    barriers_per_turn: float | None
    discipline: str


@dataclass(frozen=True, slots=True)
class OneTurn:
    found: bool
    rel_path: str | None
    turn_no: int | None
    session_entries: int
    entry_count: int
    tool_calls: int
    median_entries: float | None
    steps: list[Step]
    ledger_bytes: int
    side_bytes: int
    barriers: float
    ledger_barriers: int
    barrier_rows: list[BarrierRow]
    total_barriers_per_turn: float | None
    histogram: Markup | None
    per_turn: dict[str, Any]
    per_turn_without: dict[str, Any]
    include_content: bool
    measured_histogram: str
    measured_barriers: str
    group_commit: bool = False  # a 7.0 home: the ledger syncs at commit points, not per entry
    locked: bool = False  # a 7.0 home scanned without keys: no entry can be read, so no turn found


def _marks(inputs: ReportInputs, artifact: str) -> tuple[float, list[str]]:
    c = inputs.card(artifact)
    if c is None:
        return 0.0, ["nobarrier"]
    b = float(c.barriers_per_write)
    marks = ["barrier" if b else "nobarrier"]
    d = c.discipline.lower()
    if d.startswith(("tmp", "whole-file", "rewrite")) and "rename" in d:
        marks.append("atomic")
    if str(c.group) == "derived":
        marks.append("background")
    return b, marks


def _first_referenced(inputs: ReportInputs, rel: str) -> dict[str, list[tuple[int, int]]]:
    """The tenant store's objects first referenced by an entry of ``rel`` (a segment, or a
    conversation directory with its trailing ``/``) (in scan order:
    the entry whose append put the object), per ``entry:<segment>#<frame>`` reference: each one's
    stored bytes and number of grants (scopes)."""
    if not inputs.has_table("objects"):
        return {}
    out: dict[str, list[tuple[int, int]]] = {}
    for ref, size, scopes in inputs.con.execute(
        "SELECT referenced_by[1], stored_bytes, coalesce(len(scopes), 0) FROM objects "
        "WHERE starts_with(referenced_by[1], ?)",
        [f"entry:{rel}" if rel.endswith("/") else f"entry:{rel}#"],
    ).fetchall():
        out.setdefault(ref, []).append((int(size or 0), int(scopes)))
    return out


def _store_steps(inputs: ReportInputs, rel: str, line_no: int, objects: list[tuple[int, int]] | None, *,
                 admits: bool, at: str) -> list[Step]:
    """The tenant store's writes that go with one 7.0 ledger entry: the objects it references put
    (with a grant per scope) before it is appended, and the ``req/`` ref an admission creates after."""
    steps = []
    if objects:
        ob, om = _marks(inputs, "objects")
        steps.append(Step("objects", f"object put · referenced by frame {int(line_no) - 1}",
                          "ObjectStore::put", len(objects), sum(o[0] for o in objects), ob * len(objects), om,
                          at, None, None))
        grants = sum(o[1] for o in objects)
        if grants:
            gb, gm = _marks(inputs, "object_grants")
            steps.append(Step("object_grants", "grant per scope", "ObjectStore::grant", grants, 0,
                              gb * grants, gm, at, None, None))
    if admits:
        rb, rm = _marks(inputs, "refs")
        steps.append(Step("refs", "req/ ref · request admitted", "RefStore::cas", 1, 0, rb, rm, at, None, None))
    return steps


#: a 7.0 ledger is a conversation directory of segment files: its rows' owner is the directory
_CONVERSATION = "regexp_replace(rel_path, '/[^/]*$', '')"


def _pick_turn(inputs: ReportInputs, owner: str = "rel_path") -> dict[str, Any] | None:
    turns = "ledger_turn" if owner == "rel_path" else f"""(
            SELECT {owner} AS rel_path, turn_no, count(*) AS entry_count, sum(size_bytes) AS size_bytes,
                   sum(coalesce(tool_use_count, 0)) AS tool_call_count,
                   count(*) FILTER (WHERE kind = 'intent') AS intent_count
            FROM ledger_entry WHERE turn_no IS NOT NULL GROUP BY 1, 2)"""
    rows = inputs.query(
        f"""
        WITH t AS (SELECT * FROM {turns} WHERE intent_count > 0),
        pool AS (
            SELECT * FROM t WHERE tool_call_count > 0
            UNION ALL SELECT * FROM t WHERE NOT EXISTS (SELECT 1 FROM t WHERE tool_call_count > 0)
        ),
        m AS (SELECT quantile_disc(entry_count, 0.5) AS me, quantile_disc(size_bytes, 0.5) AS mb FROM pool)
        SELECT pool.rel_path, pool.turn_no, pool.entry_count, pool.size_bytes, pool.tool_call_count,
               m.me AS median_entries
        FROM pool, m
        ORDER BY abs(pool.entry_count - m.me), abs(pool.size_bytes - m.mb), pool.rel_path, pool.turn_no
        LIMIT 1
        """
    )
    return rows[0] if rows else None


def build(inputs: ReportInputs) -> OneTurn:
    per_turn = {r["scope"]: r for r in inputs.rows("per_turn")}
    hist_rows = inputs.rows("per_turn_histogram")
    hist_data = []
    for r in hist_rows:
        hist_data.append({"x": r["entry_count"], "y": r["with_tool_calls"], "s": "with tool calls"})
        hist_data.append({"x": r["entry_count"], "y": r["without_tool_calls"], "s": "without tool calls"})
    group_commit = inputs.layout in V7_LAYOUTS
    histogram = (
        charts.vbar(
            hist_data,
            x="x",
            y="y",
            stack="s",
            title="Turns by ledger entries per turn" if group_commit
            else "Turns by ledger entries (= ledger barriers) per turn",
            x_title="ledger entries in the turn (synced at commit points only)" if group_commit
            else "ledger entries (one sync_data each) in the turn",
            y_title="turns",
        )
        if hist_rows
        else None
    )
    barrier_rows = [
        BarrierRow(str(r["artifact"]), r["writes_per_turn"], r["barriers_per_turn"], str(r["discipline"]))
        for r in inputs.rows("barriers_per_turn")
    ]
    common = dict(
        barrier_rows=barrier_rows,
        total_barriers_per_turn=inputs.analysis.headline.get("barriers_per_turn"),
        histogram=histogram,
        per_turn=per_turn.get("with_tool_calls") or per_turn.get("all") or {},
        per_turn_without=per_turn.get("without_tool_calls") or {},
        include_content=inputs.include_content,
        measured_histogram=inputs.measured("per_turn_histogram"),
        measured_barriers=inputs.measured("barriers_per_turn"),
        group_commit=group_commit,
        locked=group_commit and inputs.locked,
    )
    owner = _CONVERSATION if group_commit else "rel_path"
    pick = _pick_turn(inputs, owner)
    if pick is None:
        return OneTurn(
            found=False,
            rel_path=None,
            turn_no=None,
            session_entries=0,
            entry_count=0,
            tool_calls=0,
            median_entries=None,
            steps=[],
            ledger_bytes=0,
            side_bytes=0,
            barriers=0.0,
            ledger_barriers=0,
            **common,
        )
    rel, turn_no = pick["rel_path"], int(pick["turn_no"])
    # a 7.0 turn's frames may span segments: in chain order (segment, then frame)
    entries = inputs.con.execute(
        "SELECT line_no, offset_bytes, size_bytes, kind, role, activity_kind, ts_at, session_id, "
        "coalesce(tool_use_count, 0), coalesce(tool_result_count, 0), commit_point, rel_path "
        f"FROM ledger_entry WHERE {owner} = ? AND turn_no = ? ORDER BY segment NULLS FIRST, line_no",
        [rel, turn_no],
    ).fetchall()
    session_id = entries[0][7] if entries else None
    start = min(e[6] for e in entries if e[6] is not None) if entries else None
    nxt = inputs.con.execute(
        f"SELECT min(ts_at) FROM ledger_entry WHERE {owner} = ? AND turn_no > ?", [rel, turn_no]
    ).fetchone()[0]
    last = max(e[6] for e in entries if e[6] is not None) if entries else None
    end = nxt if nxt is not None else (last + LAST_TURN_GRACE if last is not None else None)
    session_entries = inputs.con.execute(
        f"SELECT count(*) FROM ledger_entry WHERE {owner} = ?", [rel]
    ).fetchone()[0]
    items: list[tuple[Any, int, float, Step]] = []
    lb, lmarks = _marks(inputs, LEDGER_KIND)
    objects = _first_referenced(inputs, rel + "/") if group_commit else {}
    for seq, (line_no, offset, sz, kind, role, act, ts, _sid, tu, tr, commit, _rel) in enumerate(entries):
        label = kind or "(unparsed line)"
        if role:
            label += f" · {role}"
        if act:
            label += f" · {act}"
        if tr:
            label += f" · {tr} tool result{'s' if tr != 1 else ''}"
        if tu:
            label += f" · {tu} tool call{'s' if tu != 1 else ''}"
        prev = None
        if inputs.include_content and inputs.home is not None and not group_commit:  # a 7.0 frame is sealed bytes
            from vakaudit.report.content import preview

            prev = preview(inputs.home, rel, int(offset), int(sz))
        step = Step(
            artifact=LEDGER_KIND,
            label=label,
            writer=LEDGER_WRITERS.get(kind or "", "SessionLog::append"),
            rows=1,
            size_bytes=int(sz),
            # 7.0 group commit: a commit point syncs every frame appended since the last one
            barriers=(1.0 if commit else 0.0) if group_commit else lb,
            marks=(["barrier"] if commit else ["nobarrier", "grouped"]) if group_commit else lmarks,
            at=ts.strftime("%H:%M:%S.%f")[:-3] if ts is not None else "",
            line_no=int(line_no),
            preview=prev,
            segment=_rel.rsplit("/", 1)[-1] if group_commit else None,
        )
        items.append((ts, 0, seq, step))
        if group_commit:
            for extra in _store_steps(inputs, _rel, line_no, objects.get(f"entry:{_rel}#{int(line_no) - 1}"),
                                      admits=bool(commit) and kind == "activity", at=step.at):
                items.append((ts, 0, seq - 0.5 if extra.artifact != "refs" else seq + 0.5, extra))
    if start is not None and end is not None:
        for order, (table, col) in enumerate(SIDE_TIME_COLUMNS):
            if not inputs.has_table(table):
                continue
            cols = {r[0] for r in inputs.con.execute(f'DESCRIBE "{table}"').fetchall()}
            if col not in cols:
                continue
            where = f'"{col}" >= ? AND "{col}" < ?'
            params: list[Any] = [start, end]
            if "session_id" in cols and session_id:
                where += " AND (session_id = ? OR session_id IS NULL)"
                params.append(session_id)
            extra = ", kind" if "kind" in cols else ", NULL"
            card = inputs.card(table)
            # a 7.0 record chain appends some rows relaxed (no sync of their own: its card's relaxed_rows)
            relaxed = card.relaxed_rows if card is not None and card.style is Discipline.RECORD_CHAIN else None
            extra += f", coalesce(({relaxed}), false)" if relaxed else ", false"
            rows = inputs.con.execute(
                f'SELECT "{col}", size_bytes{extra} FROM "{table}" WHERE {where} ORDER BY "{col}", line_no',
                params,
            ).fetchall()
            writer = card.writer.split(" — ")[0] if card is not None else table
            b, marks = _marks(inputs, table)
            # consecutive rows of one artifact collapse into one step (a stream of sandbox events)
            run: list[Any] = []
            for i, row in enumerate(rows + [None]):
                if row is not None and run and (row[0] - run[-1][0]) <= timedelta(seconds=2):
                    run.append(row)
                    continue
                if run:
                    kinds = sorted({str(r[2]) for r in run if r[2]})
                    label = table + (f" · {', '.join(kinds[:4])}" if kinds else "")
                    synced = sum(1 for r in run if not r[3])
                    step = Step(
                        artifact=table,
                        label=label,
                        writer=writer,
                        rows=len(run),
                        size_bytes=sum(int(r[1] or 0) for r in run),
                        barriers=b * synced,
                        marks=marks if synced else ["nobarrier", "relaxed", *marks[1:]],
                        at=run[0][0].strftime("%H:%M:%S.%f")[:-3],
                        line_no=None,
                        preview=None,
                    )
                    items.append((run[0][0], 1 + order, i, step))
                run = [row] if row is not None else []
    items.sort(key=lambda t: (t[0] is None, t[0], t[1], t[2]))
    steps = [s for *_, s in items]
    return OneTurn(
        found=True,
        rel_path=rel,
        turn_no=turn_no,
        session_entries=int(session_entries),
        entry_count=int(pick["entry_count"]),
        tool_calls=int(pick["tool_call_count"]),
        median_entries=pick["median_entries"],
        steps=steps,
        ledger_bytes=sum(s.size_bytes for s in steps if s.artifact == LEDGER_KIND),
        side_bytes=sum(s.size_bytes for s in steps if s.artifact != LEDGER_KIND),
        barriers=sum(s.barriers for s in steps),
        ledger_barriers=int(sum(s.barriers for s in steps if s.artifact == LEDGER_KIND)),
        **common,
    )
