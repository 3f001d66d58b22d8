"""``turns`` and ``sessions`` of a few thousand ``entries`` rows, aggregated in Python.

The definition of both tables is DuckDB's queries, ``turns.sql`` and ``sessions.sql``
(:mod:`vakaudit.scan.derive`); this is a fast path behind the same interface for a derivation group
too small to be worth DuckDB's import, connection and first query (~0.15 s of CPU): a group of at
most :data:`~vakaudit.scan.derive.HERE_ROWS` rows (a JSONL ledger group, or a 7.0 home's frames). It
gives the same rows, in the same order, as the queries (tests/scan/test_aggregate.py compares the
two on sample homes and on rows made to reach each rule below), which are:

- rows of one ledger (``rel_path``) and, for ``turns``, one ``turn_no`` (rows without one in no turn),
  read in part order, then row order;
- ``session_id``, ``agent_id``, ``workspace_key``: the first non-null value (DuckDB's ``any_value``);
- ``arg_min``/``arg_max`` (``model``, ``app_version``, ``provider``): the value at the least or
  greatest ``line_no`` among the rows where that value is not null;
- ``min``/``max`` ignore nulls (null when every value is); ``sum`` likewise, a ``coalesce`` to 0 where
  the query has one; ``count(*) FILTER`` counts rows whose condition is true (not null);
- ``turns`` in (``rel_path``, ``turn_no``) order, ``sessions`` in ``rel_path`` order (code points,
  which is UTF-8's byte order, DuckDB's for VARCHAR).

Timestamps are aggregated as their int64 microseconds and never leave Arrow as datetimes.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from vakaudit.scan.tables import SESSIONS_SCHEMA, TURNS_SCHEMA
from vakaudit.scan.tables7 import FRAME_ORDER_BASE

# rows of a part turned into Python objects at a time
BATCH_ROWS = 2_048

# the entries columns read (their order is the unpacking order of aggregate's loop)
_COLUMNS = (
    "rel_path", "session_id", "agent_id", "workspace_key", "line_no", "size_bytes", "kind", "id", "ts_at",
    "chain_ok", "chain_status", "turn_no", "role", "control", "is_directive", "model", "provider",
    "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
    "tool_use_count", "tool_result_count", "tool_result_bytes", "app_version",
)  # fmt: skip

_REL, _LINE = _COLUMNS.index("rel_path"), _COLUMNS.index("line_no")
# turn accumulator slots
(T_SID, T_AGENT, T_WS, T_TURN_ID, T_STARTED, T_ENDED, T_ENTRIES, T_SIZE, T_BIND_BYTES, T_BIND_COUNT, T_MESSAGES,
 T_ASSISTANT, T_CONTROL, T_RECEIPTS, T_ACTIVITY, T_TOOL_USE, T_TOOL_RESULTS, T_TOOL_RESULT_BYTES, T_IN, T_OUT,
 T_CACHE_READ, T_CACHE_CREATE, T_MODEL, T_BROKEN, T_MODEL_LINE) = range(25)  # fmt: skip
# session accumulator slots
(S_SID, S_AGENT, S_WS, S_APP, S_PROVIDER, S_MODEL, S_FIRST, S_LAST, S_ENTRIES, S_TURNS, S_SIZE, S_BIND_BYTES,
 S_UNPARSEABLE, S_BROKEN, S_UNCHAINED, S_IN, S_OUT, S_CACHE_READ, S_CACHE_CREATE, S_APP_LINE, S_PROVIDER_LINE,
 S_MODEL_LINE) = range(22)  # fmt: skip


def _first_values(acc: list[Any], sid: str | None, agent: str | None, ws: str | None) -> None:
    """``any_value`` of session_id, agent_id and workspace_key: slots 0-2 of a turn's or a session's
    accumulator keep the first non-null value of each."""
    if acc[0] is None:
        acc[0] = sid
    if acc[1] is None:
        acc[1] = agent
    if acc[2] is None:
        acc[2] = ws


def _lo(a: Any, b: Any) -> Any:
    return b if a is None or (b is not None and b < a) else a


def _hi(a: Any, b: Any) -> Any:
    return b if a is None or (b is not None and b > a) else a


def _add(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


def _batches(path: Path, frames: bool) -> Iterator[list[list[Any]]]:
    """The :data:`_COLUMNS` of one ``entries`` part as Python lists (timestamps as int64 µs), at most
    :data:`BATCH_ROWS` rows at a time (their Python objects cost ~50 times their Arrow bytes).
    ``frames``: 7.0 frame rows, as the frame derivation's view gives them (``derive_frame_ledgers``):
    ``rel_path`` the segment file's directory (the conversation), ``line_no`` the frame's place in it."""
    pf = pq.ParquetFile(path)
    try:
        for i in range(pf.num_row_groups):
            group = pf.read_row_group(i, columns=[*_COLUMNS, "segment"] if frames else list(_COLUMNS))
            for batch in group.to_batches(max_chunksize=BATCH_ROWS):
                out = []
                for name in _COLUMNS:  # (by name: the batch has the file's order)
                    c = batch.column(name)
                    out.append(c.view(pa.int64()).to_pylist() if pa.types.is_timestamp(c.type) else c.to_pylist())
                if frames:
                    out[_REL] = [rel.rpartition("/")[0] if "/" in rel else rel for rel in out[_REL]]
                    out[_LINE] = [(seg or 0) * FRAME_ORDER_BASE + line
                                  for seg, line in zip(batch.column("segment").to_pylist(), out[_LINE], strict=True)]  # fmt: skip
                yield out
    finally:
        pf.close()


def aggregate(paths: list[Path], only: list[str] | None = None, *, frames: bool = False) -> tuple[pa.Table, pa.Table]:
    """``(turns, sessions)`` of the ``entries`` rows of the parts ``paths`` (in that order), of the
    ledgers ``only`` when given (the parts hold other ledgers' rows too), as the queries derive them;
    ``frames``: of a 7.0 home's frames, per conversation (see :func:`_batches`)."""
    keep = None if only is None else set(only)
    turns: dict[tuple[str, int], list[Any]] = {}
    sessions: dict[str, list[Any]] = {}
    rows = chain.from_iterable(zip(*columns, strict=True) for path in paths for columns in _batches(path, frames))
    for (rel, sid, agent, ws, line, size, kind, eid, ts, chain_ok, status, turn_no, role, control, directive, model,
         provider, tin, tout, tcr, tcc, tuse, tres, tresb, app) in rows:  # fmt: skip
        if keep is not None and rel not in keep:
            continue
        s = sessions.get(rel)
        if s is None:
            s = sessions[rel] = [None, None, None, None, None, None, None, None, 0, None, None, 0, 0, 0, 0,
                                 None, None, None, None, None, None, None]  # fmt: skip
        _first_values(s, sid, agent, ws)
        header = kind == "header"
        if header:
            if app is not None and (s[S_APP_LINE] is None or line < s[S_APP_LINE]):
                s[S_APP], s[S_APP_LINE] = app, line
            if provider is not None and (s[S_PROVIDER_LINE] is None or line < s[S_PROVIDER_LINE]):
                s[S_PROVIDER], s[S_PROVIDER_LINE] = provider, line
            if model is not None and (s[S_MODEL_LINE] is None or line < s[S_MODEL_LINE]):
                s[S_MODEL], s[S_MODEL_LINE] = model, line
        if ts is not None:
            s[S_FIRST] = _lo(s[S_FIRST], ts)
            s[S_LAST] = _hi(s[S_LAST], ts)
        s[S_ENTRIES] += 1
        if directive and turn_no is not None:
            s[S_TURNS] = _hi(s[S_TURNS], turn_no)
        s[S_SIZE] = _add(s[S_SIZE], size)
        binding = kind == "turn_capabilities_bound"
        if binding:
            s[S_BIND_BYTES] = _add(s[S_BIND_BYTES], size)
        if status == "unparseable":
            s[S_UNPARSEABLE] += 1
        elif status == "broken":
            s[S_BROKEN] += 1
        elif status == "unchained":
            s[S_UNCHAINED] += 1
        s[S_IN] = _add(s[S_IN], tin)
        s[S_OUT] = _add(s[S_OUT], tout)
        s[S_CACHE_READ] = _add(s[S_CACHE_READ], tcr)
        s[S_CACHE_CREATE] = _add(s[S_CACHE_CREATE], tcc)
        if turn_no is None:
            continue
        t = turns.get((rel, turn_no))
        if t is None:
            t = turns[(rel, turn_no)] = [None, None, None, None, None, None, 0, None, None, 0, 0, 0, 0, 0, 0,
                                         None, None, None, None, None, None, None, None, 0, None]  # fmt: skip
        _first_values(t, sid, agent, ws)
        if directive:
            t[T_TURN_ID] = _hi(t[T_TURN_ID], eid)
            t[T_STARTED] = _lo(t[T_STARTED], ts)
        t[T_ENDED] = _hi(t[T_ENDED], ts)
        t[T_ENTRIES] += 1
        t[T_SIZE] = _add(t[T_SIZE], size)
        if binding:
            t[T_BIND_BYTES] = _add(t[T_BIND_BYTES], size)
            t[T_BIND_COUNT] += 1
        if kind == "message":
            t[T_MESSAGES] += 1
        elif kind == "receipt":
            t[T_RECEIPTS] += 1
        elif kind == "activity":
            t[T_ACTIVITY] += 1
        if role == "assistant":
            t[T_ASSISTANT] += 1
            if model is not None and (t[T_MODEL_LINE] is None or line > t[T_MODEL_LINE]):
                t[T_MODEL], t[T_MODEL_LINE] = model, line
        if control is not None:
            t[T_CONTROL] += 1
        t[T_TOOL_USE] = _add(t[T_TOOL_USE], tuse)
        t[T_TOOL_RESULTS] = _add(t[T_TOOL_RESULTS], tres)
        t[T_TOOL_RESULT_BYTES] = _add(t[T_TOOL_RESULT_BYTES], tresb)
        t[T_IN] = _add(t[T_IN], tin)
        t[T_OUT] = _add(t[T_OUT], tout)
        t[T_CACHE_READ] = _add(t[T_CACHE_READ], tcr)
        t[T_CACHE_CREATE] = _add(t[T_CACHE_CREATE], tcc)
        if chain_ok is False:
            t[T_BROKEN] += 1
    return _turns_table(turns), _sessions_table(sessions)


def _zero(v: int | None) -> int:
    return 0 if v is None else v


def _table(schema: pa.Schema, columns: list[list[Any]]) -> pa.Table:
    arrays = []
    for f, values in zip(schema, columns, strict=True):
        if pa.types.is_timestamp(f.type):
            arrays.append(pa.array(values, pa.int64()).view(f.type))
        else:
            arrays.append(pa.array(values, f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def _turns_table(turns: dict[tuple[str, int], list[Any]]) -> pa.Table:
    keys = sorted(turns)
    rows = [turns[k] for k in keys]

    def col(slot: int, zero: bool = False) -> list[Any]:
        return [_zero(r[slot]) for r in rows] if zero else [r[slot] for r in rows]

    return _table(TURNS_SCHEMA, [
        [k[0] for k in keys], col(T_SID), col(T_AGENT), col(T_WS), [k[1] for k in keys], col(T_TURN_ID),
        col(T_STARTED), col(T_ENDED), col(T_ENTRIES), col(T_SIZE), col(T_BIND_BYTES, True), col(T_BIND_COUNT),
        col(T_MESSAGES), col(T_ASSISTANT), col(T_CONTROL), col(T_RECEIPTS), col(T_ACTIVITY), col(T_TOOL_USE, True),
        col(T_TOOL_RESULTS, True), col(T_TOOL_RESULT_BYTES, True), col(T_IN, True), col(T_OUT, True),
        col(T_CACHE_READ, True), col(T_CACHE_CREATE, True), col(T_MODEL), col(T_BROKEN),
    ])  # fmt: skip


def _sessions_table(sessions: dict[str, list[Any]]) -> pa.Table:
    keys = sorted(sessions)
    rows = [sessions[k] for k in keys]

    def col(slot: int, zero: bool = False) -> list[Any]:
        return [_zero(r[slot]) for r in rows] if zero else [r[slot] for r in rows]

    return _table(SESSIONS_SCHEMA, [
        keys, col(S_SID), col(S_AGENT), col(S_WS), col(S_APP), col(S_PROVIDER), col(S_MODEL), col(S_FIRST),
        col(S_LAST), col(S_ENTRIES), col(S_TURNS, True), col(S_SIZE), col(S_BIND_BYTES, True),
        col(S_UNPARSEABLE), col(S_BROKEN), col(S_UNCHAINED),
        [r[S_UNPARSEABLE] + r[S_BROKEN] == 0 for r in rows], col(S_IN, True), col(S_OUT, True),
        col(S_CACHE_READ, True), col(S_CACHE_CREATE, True),
    ])  # fmt: skip
