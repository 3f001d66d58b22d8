"""The row columns of the JSONL sidecar kinds: how one is declared, and how a decoded JSON value
becomes a value of its Arrow type.

A kind module declares its row columns with :func:`col` (name, explicit Arrow type, where the value
comes from) and hands them, in a :class:`~vakaudit.artifacts._rowspec.RowSpec`, to
:func:`~vakaudit.artifacts._jsonl.read_jsonl`. The schema is never inferred from data: it is
``COMMON_FIELDS`` + the declared columns (+ ``TRACE_FIELDS``), all written out by hand.

Conventions for row columns:

- source field names are kept (``ts``, ``provider``, ...); a ``ts`` string also gets a parsed
  ``ts_at`` column (``timestamp[us, UTC]``); source fields that already end in ``_at`` are parsed
  into a timestamp column of the same name.
- nested objects whose shape is unconfirmed are stored as JSON text columns.
- the raw line is never stored (size): only typed fields.

:meth:`Col.array` builds a column value by value from decoded rows: the reference the batch planner
(``_batches``) and the compiled reader must equal. No I/O here: this module sees decoded JSON values
(and a :class:`FileCol` the read context), never lines or bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Any

import orjson

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import ReadContext
from vakaudit.artifacts._declare import CATEGORY, DField, DSchema, DType
from vakaudit.artifacts._timestamps import TIMESTAMP, timestamp, timestamps

if TYPE_CHECKING:
    import pyarrow as pa


#: rows per record batch of the JSONL kinds' readers
BATCH_ROWS = 65_536

COMMON_FIELDS: tuple[DField, ...] = (
    decl.field("rel_path", decl.string(), nullable=False),
    decl.field("home_scope", decl.string(), nullable=False),
    decl.field("line_no", decl.int64(), nullable=False),  # 1-based physical line number
    decl.field("offset_bytes", decl.int64(), nullable=False),  # absolute byte offset of the line
    decl.field("size_bytes", decl.int64(), nullable=False),  # line bytes including its terminator
)


# home.md §0.4: G2 rows carry optional `actor` and `trace`; trace.run / trace.session are pulled out.
TRACE_FIELDS: tuple[DField, ...] = (
    decl.field("actor", decl.string()),
    decl.field("trace", decl.string()),  # JSON text of the trace object
    decl.field("trace_run", decl.string()),
    decl.field("trace_session", decl.string()),
)


# --------------------------------------------------------------------------- value coercion


def to_json(value: Any) -> str | None:
    if value is None:
        return None
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # nested deeper than orjson writes (it reads deeper than it writes)
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _as_str(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return to_json(value)  # a number or object where a string was expected: keep its JSON text


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if -(1 << 63) <= value < (1 << 63) else None
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    return None


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    return None


def _as_bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _category(type_: DType | pa.DataType) -> str | None:
    """string | integer | floating | boolean | timestamp: what a declared or pyarrow type holds."""
    if isinstance(type_, DType):
        return CATEGORY.get(type_.name)
    import pyarrow as pa

    for name in ("string", "integer", "floating", "boolean", "timestamp"):
        if getattr(pa.types, f"is_{name}")(type_):
            return name
    return None


_COERCE: dict[str | None, Callable[[Any], Any]] = {
    "string": _as_str, "integer": _as_int, "floating": _as_float, "boolean": _as_bool, "timestamp": timestamp,
}  # fmt: skip


def coercer(type_: DType | pa.DataType, *, json: bool = False) -> Callable[[Any], Any]:
    """The function that turns a decoded JSON value into a value of Arrow type ``type_`` (declared or
    pyarrow's), or None."""
    if json:
        return to_json
    conv = _COERCE.get(_category(type_))
    if conv is None:
        raise TypeError(f"no coercion for Arrow type {type_}")
    return conv


# --------------------------------------------------------------------------- column declarations

Source = str | tuple[str, ...] | Callable[[dict[str, Any]], Any]


def dig(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


_NONE = type(None)


def _fast_types(type_: pa.DataType) -> frozenset[type]:
    """Python types a column takes as is (the common case: the JSON already has the right type)."""
    import pyarrow as pa

    if pa.types.is_string(type_):
        return frozenset({str, _NONE})
    if pa.types.is_integer(type_):
        return frozenset({int, _NONE})
    if pa.types.is_floating(type_):
        return frozenset({float, int, _NONE})
    if pa.types.is_boolean(type_):
        return frozenset({bool, _NONE})
    return frozenset()


@dataclass(frozen=True, slots=True)
class Col:
    """One typed row column and how its value is taken from a decoded JSON object."""

    decl: DField  # the column, declared (``field`` is its pyarrow field)
    source: Callable[[dict[str, Any]], Any]  # the value as decoded, before coercion
    conv: Callable[[Any], Any]  # decoded value -> value of the column's type (or None)
    json: bool = False
    key: str | None = None  # set when the source is one top-level key (a faster path)

    @property
    def field(self) -> pa.Field:
        return self.decl.arrow()

    def get(self, obj: dict[str, Any]) -> Any:
        return self.conv(self.source(obj))

    def array(self, objs: list[dict[str, Any] | None], has_none: bool | None = None) -> pa.Array:
        """The column for a batch of rows (None = a row that did not parse)."""
        import pyarrow as pa

        if has_none is None:
            has_none = None in objs
        src = self.source
        vec = getattr(src, "column_of", None)
        if self.key is not None:
            values = _key_values(objs, self.key, has_none)
        elif vec is not None:  # a per-key size or count: the same function applied column-wise
            values = vec(_key_values(objs, src.column_key, has_none))  # type: ignore[attr-defined]
        elif isinstance(src, _Dig):
            values = _key_values(objs, src.path[0], has_none)
            for key in src.path[1:]:
                values = [v.get(key) if isinstance(v, dict) else None for v in values]
        else:
            values = [None if o is None else src(o) for o in objs]
        type_ = self.field.type
        if self.json:
            return pa.array([to_json(v) for v in values], type=type_)
        if pa.types.is_timestamp(type_):
            return timestamps(values)
        if set(map(type, values)) <= _fast_types(type_):
            try:
                return pa.array(values, type=type_)
            except (OverflowError, pa.ArrowInvalid):
                pass
        conv = self.conv
        return pa.array([conv(v) for v in values], type=type_)


def _key_values(objs: list[dict[str, Any] | None], key: str, has_none: bool) -> list[Any]:
    """``obj.get(key)`` of every row (None for a row that did not parse), at C speed when all parsed."""
    if has_none:
        return [None if o is None else o.get(key) for o in objs]
    return list(map(dict.get, objs, repeat(key)))  # type: ignore[arg-type]


class _Dig:
    """Source of a key-path column (``dig``), recognised by :meth:`Col.array` to work column-wise."""

    __slots__ = ("path",)

    def __init__(self, path: tuple[str, ...]) -> None:
        self.path = path

    def __call__(self, obj: dict[str, Any]) -> Any:
        return dig(obj, self.path)


def col(name: str, type_: DType | pa.DataType, src: Source | None = None, *, json: bool = False) -> Col:
    """Declare a column. ``src``: a key (default ``name``), a key path tuple, or a function of the row.

    ``json=True`` stores the value as JSON text (``type_`` must then be string).
    """
    if src is None:
        src = name
    if isinstance(src, str):
        key = src

        def source(obj: dict[str, Any]) -> Any:
            return obj.get(key)
    elif isinstance(src, tuple):
        source = _Dig(src)
    else:
        source = src
    key = src if isinstance(src, str) else None
    return Col(decl.field(name, type_), source, coercer(type_, json=json), json, key)


def ts_cols(src: str = "ts") -> tuple[Col, ...]:
    """Timestamp columns for source field ``src``.

    ``ts`` -> the string ``ts`` plus the parsed ``ts_at``; a field already named ``*_at`` -> one parsed
    column of the same name (house style: timestamps end in ``_at``).
    """
    if src.endswith("_at"):
        return (col(src, TIMESTAMP),)
    return col(src, decl.string()), col(f"{src}_at", TIMESTAMP, src)


def utf8_len(key: str) -> Callable[[dict[str, Any]], int | None]:
    """Source for a ``*_bytes`` column: the UTF-8 size of a string field (the text itself is not kept)."""

    def get(obj: dict[str, Any]) -> int | None:
        value = obj.get(key)
        return len(value.encode("utf-8", "surrogatepass")) if isinstance(value, str) else None

    def column_of(values: list[Any]) -> list[int | None]:
        return [
            (len(v) if v.isascii() else len(v.encode("utf-8", "surrogatepass")))
            if isinstance(v, str)
            else None
            for v in values
        ]

    get.column_key = key  # type: ignore[attr-defined]
    get.column_of = column_of  # type: ignore[attr-defined]
    get.column_mode = "utf8_len"  # type: ignore[attr-defined]
    return get


def count_of(key: str) -> Callable[[dict[str, Any]], int | None]:
    """Source for a ``*_count`` column: the length of an array or object field."""

    def get(obj: dict[str, Any]) -> int | None:
        value = obj.get(key)
        return len(value) if isinstance(value, list | dict) else None

    def column_of(values: list[Any]) -> list[int | None]:
        return [len(v) if isinstance(v, list | dict) else None for v in values]

    get.column_key = key  # type: ignore[attr-defined]
    get.column_of = column_of  # type: ignore[attr-defined]
    get.column_mode = "count"  # type: ignore[attr-defined]
    return get


TRACE_COLS: tuple[Col, ...] = (
    col("actor", decl.string()),
    col("trace", decl.string(), json=True),
    col("trace_run", decl.string(), ("trace", "run")),
    col("trace_session", decl.string(), ("trace", "session")),
)
assert tuple(c.decl for c in TRACE_COLS) == TRACE_FIELDS


def row_schema(
    cols: Iterable[Col], *, trace: bool = True, common: Iterable[DField] = COMMON_FIELDS
) -> DSchema:
    """``common`` + the declared columns (+ the G2 trace columns), declared."""
    fields = list(common) + [c.decl for c in cols]
    if trace:
        fields += TRACE_FIELDS
    return decl.schema(fields)


@dataclass(frozen=True, slots=True)
class FileCol:
    """A per-file column (same value on every row of a file), e.g. the session id in a file name."""

    decl: DField  # the column, declared (``field`` is its pyarrow field)
    get: Callable[[ReadContext], Any]

    @property
    def field(self) -> pa.Field:
        return self.decl.arrow()
