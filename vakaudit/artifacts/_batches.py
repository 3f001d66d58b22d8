"""Arrow batches of typed rows: cut row by row (:class:`BatchBuilder`), or, for the decoded JSON
objects of the JSONL readers, built column by column (:func:`_batch_columns`, the planner that reads a
key over all rows of one shape at once).

:func:`_batch_columns` gives exactly ``[c.array(objs) for c in columns]``
(:meth:`~vakaudit.artifacts._columns.Col.array`, the value-by-value reference); it only chooses a
faster way there, and hands a column back to :meth:`~vakaudit.artifacts._columns.Col.array` when its
values are not all of the column's type. This is per-batch hot code: no indirection per row or per
value. No I/O here: it sees rows, never lines or files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import pyarrow as pa

from vakaudit.artifacts._columns import BATCH_ROWS, Col, _Dig, _fast_types, _key_values, to_json
from vakaudit.artifacts._timestamps import timestamps

# --------------------------------------------------------------------------- batch building


class BatchBuilder:
    """Accumulates rows column by column and cuts Arrow batches of a fixed schema."""

    def __init__(self, schema: pa.Schema, batch_rows: int = BATCH_ROWS) -> None:
        self.schema = schema
        self.batch_rows = batch_rows
        self._cols: list[list[Any]] = [[] for _ in schema]
        self._rows = 0

    def add(self, values: Iterable[Any]) -> pa.RecordBatch | None:
        """Add one row (values in schema order); returns a full batch when one is ready."""
        for store, value in zip(self._cols, values, strict=True):
            store.append(value)
        self._rows += 1
        if self._rows >= self.batch_rows:
            return self.flush()
        return None

    def flush(self) -> pa.RecordBatch | None:
        if not self._rows:
            return None
        arrays = [pa.array(vals, type=f.type) for vals, f in zip(self._cols, self.schema, strict=True)]
        self._cols = [[] for _ in self.schema]
        self._rows = 0
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


# --------------------------------------------------------------------------- columns of a batch

SHAPE_MIN_ROWS = 48  # below this many rows, columns are built by Col.array (planning would cost more)
# below this many rows, rows of several shapes are read key by key over all of them instead of by shape:
# putting per-shape columns back in file order takes Arrow's `take`, whose module (pyarrow.compute) costs
# ~20 ms to import, more than grouping saves on a batch this small
SHAPE_TAKE_MIN_ROWS = 1024


@dataclass(frozen=True, slots=True)
class _Plan:
    """How :func:`_batch_columns` takes one column from the values of a top-level key."""

    key: str
    mode: str  # plain | json | ts
    then: Callable[[list[Any]], list[Any]] | None = None  # key values -> column values (sizes, paths)


def _plan(c: Col) -> _Plan | None:
    """The key a column reads and how, or None for a column computed from the whole row."""
    src = c.source
    mode = "json" if c.json else "ts" if pa.types.is_timestamp(c.field.type) else "plain"
    if c.key is not None:
        return _Plan(c.key, mode)
    vec = getattr(src, "column_of", None)
    if vec is not None:
        return _Plan(src.column_key, mode, vec)  # type: ignore[attr-defined]
    if isinstance(src, _Dig):
        rest = src.path[1:]

        def then(values: list[Any]) -> list[Any]:
            for key in rest:
                values = [v.get(key) if isinstance(v, dict) else None for v in values]
            return values

        return _Plan(src.path[0], mode, then)
    return None


class _Slow(Exception):
    """A column that needs the value-by-value coercion of :meth:`Col.array`."""


def _batch_columns(
    columns: tuple[Col, ...], plans: list[_Plan | None], objs: list[dict[str, Any] | None]
) -> list[pa.Array]:
    """The row columns of one batch, equal to ``[c.array(objs) for c in columns]``.

    Dense rows (most columns' keys present) are read key by key over all rows. Sparse rows (an event
    log whose kinds carry different fields) are first grouped by shape (their key tuple: a sidecar
    writes few), so a key is only looked up in the rows that have it; a column is then the
    concatenation of its per-shape arrays, put back in file order by one ``take``. A column whose
    values are not all of its Arrow type goes through :meth:`Col.array`, which coerces value by value.
    """
    has_none = None in objs
    n = len(objs)
    if n < SHAPE_MIN_ROWS:
        return [c.array(objs, has_none) for c in columns]
    keys = {p.key for p in plans if p is not None}
    parts = None
    order = None
    if 2 * sum(map(len, filter(None, objs))) < n * len(keys):
        parts, order = _shape_parts(objs, has_none)
    if parts is None:
        parts = [_Part(n, None, objs, has_none)]
    out = []
    nulls: dict[Any, pa.Array] = {}
    for c, plan in zip(columns, plans, strict=True):
        arr = None
        if plan is not None:
            try:
                arr = _plan_column(c, plan, parts, order, nulls)
            except _Slow:
                arr = None
        out.append(c.array(objs, has_none) if arr is None else arr)
    return out


def _shape_parts(
    objs: list[dict[str, Any] | None], has_none: bool
) -> tuple[list[_Part] | None, pa.Array | None]:
    """The rows grouped by key tuple, and the ``take`` indices that restore file order (None when
    there is one group); ``(None, None)`` when there are too many shapes for grouping to pay, or
    several in a batch below ``SHAPE_TAKE_MIN_ROWS``."""
    n = len(objs)
    shapes = [None if o is None else tuple(o) for o in objs] if has_none else list(map(tuple, objs))
    uniq = dict.fromkeys(shapes)
    if len(uniq) > 8 + n // 16:
        return None, None
    if len(uniq) == 1:
        groups: dict[tuple[str, ...] | None, list[int]] = {shapes[0]: []}
    elif n < SHAPE_TAKE_MIN_ROWS:
        return None, None
    else:
        groups = {s: [] for s in uniq}
        for i, s in enumerate(shapes):
            groups[s].append(i)
    parts: list[_Part] = []
    for shape, idx in groups.items():
        rows = list(map(objs.__getitem__, idx)) if idx else objs
        parts.append(_Part(len(rows), frozenset(shape or ()), rows))
    order = None
    if len(groups) > 1:
        import pyarrow.compute as pc

        inv = [i for idx in groups.values() for i in idx]
        order = pc.sort_indices(pa.array(inv, type=pa.int64()))
    return parts, order


class _Part:
    """Rows of a batch (all of them, or those of one shape), with each key's values taken once."""

    __slots__ = ("count", "has_none", "keys", "rows", "taken")

    def __init__(
        self, count: int, keys: frozenset[str] | None, rows: list[Any], has_none: bool = False
    ) -> None:
        self.count = count
        self.keys = keys  # the key set of the shape; None = rows of any shape (some may be None)
        self.rows = rows
        self.has_none = has_none
        self.taken: dict[str, list[Any]] = {}

    def values(self, key: str) -> list[Any] | None:
        """Every row's value of ``key`` (None for a row without it), or None when no row has it."""
        values = self.taken.get(key)
        if values is None:
            if self.keys is None:
                values = _key_values(self.rows, key, self.has_none)
            elif key in self.keys:
                values = list(map(itemgetter(key), self.rows))
            else:
                return None
            self.taken[key] = values
        return values


def _plan_column(
    c: Col, plan: _Plan, parts: list[_Part], order: pa.Array | None, nulls: dict[Any, pa.Array]
) -> pa.Array | None:
    type_ = c.field.type
    mode = plan.mode
    key = plan.key
    n = sum(part.count for part in parts)
    if not any(part.keys is None or key in part.keys for part in parts):  # no row has the key
        return _nulls(nulls, n, type_)
    part_type = type_ if mode == "plain" else pa.string()
    # Arrow refuses every non-str JSON value for a string column and every non-bool for a bool one,
    # so those need no type check; an int column takes floats and a float column bools: check them
    check = None
    if not (pa.types.is_string(part_type) or pa.types.is_boolean(part_type)):
        check = _fast_types(type_)
    arrays = []
    for part in parts:
        values = part.values(key)
        if values is None:
            arrays.append(_nulls(nulls, part.count, part_type))
            continue
        if plan.then is not None:
            values = plan.then(values)
        if mode == "json":
            arrays.append(pa.array([to_json(v) for v in values], type=part_type))
            continue
        if check is not None and not set(map(type, values)) <= check:
            raise _Slow
        try:
            arrays.append(pa.array(values, type=part_type))
        except (OverflowError, pa.ArrowInvalid, pa.ArrowTypeError):
            raise _Slow from None
    arr = arrays[0] if len(arrays) == 1 else pa.concat_arrays(arrays)
    if order is not None:
        arr = arr.take(order)
    if mode == "ts":
        return timestamps(arr)
    return arr


def _nulls(cache: dict[Any, pa.Array], n: int, type_: pa.DataType) -> pa.Array:
    """A null array of ``n`` values (immutable: shared by the columns of a batch)."""
    arr = cache.get((n, type_))
    if arr is None:
        arr = cache[(n, type_)] = pa.nulls(n, type_)
    return arr
