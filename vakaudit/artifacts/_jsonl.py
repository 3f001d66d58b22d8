"""Shared reader machinery for the sidecar kinds: a JSONL line streamer and a typed-batch builder.

A kind module declares its row columns with :func:`col` (name, explicit Arrow type, where the value
comes from) and hands them to :func:`read_jsonl`. The schema is never inferred from data: it is
``COMMON_FIELDS`` + the declared columns (+ ``TRACE_FIELDS``), all written out by hand.

Conventions for row columns:

- source field names are kept (``ts``, ``provider``, ...); a ``ts`` string also gets a parsed
  ``ts_at`` column (``timestamp[us, UTC]``); source fields that already end in ``_at`` are parsed
  into a timestamp column of the same name.
- nested objects whose shape is unconfirmed are stored as JSON text columns.
- the raw line is never stored (size): only typed fields.

Nothing here writes: files are read through ``ReadContext.open()`` only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import repeat
from typing import IO, Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from vakaudit.artifacts._base import ArtifactKind, ReadContext
from vakaudit.findings import Finding, FindingCode, Severity

CHUNK_BYTES = 1 << 20
BATCH_ROWS = 65_536
TIMESTAMP = pa.timestamp("us", tz="UTC")

COMMON_FIELDS: tuple[pa.Field, ...] = (
    pa.field("rel_path", pa.string(), nullable=False),
    pa.field("home_scope", pa.string(), nullable=False),
    pa.field("line_no", pa.int64(), nullable=False),  # 1-based physical line number
    pa.field("offset_bytes", pa.int64(), nullable=False),  # absolute byte offset of the line
    pa.field("size_bytes", pa.int64(), nullable=False),  # line bytes including its terminator
)

# home.md §0.4: G2 rows carry optional `actor` and `trace`; trace.run / trace.session are pulled out.
TRACE_FIELDS: tuple[pa.Field, ...] = (
    pa.field("actor", pa.string()),
    pa.field("trace", pa.string()),  # JSON text of the trace object
    pa.field("trace_run", pa.string()),
    pa.field("trace_session", pa.string()),
)


# --------------------------------------------------------------------------- value coercion


def parse_ts(value: Any) -> datetime | None:
    """RFC 3339 (``Z`` or ``+00:00``, 0-9 fraction digits) to an aware UTC datetime, else None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    if dt.tzinfo is None:
        return None
    try:
        return dt.astimezone(UTC)
    except (OverflowError, ValueError):
        return None


def to_json(value: Any) -> str | None:
    if value is None:
        return None
    return orjson.dumps(value).decode()


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


def coercer(type_: pa.DataType, *, json: bool = False) -> Callable[[Any], Any]:
    """The function that turns a decoded JSON value into a value of Arrow type ``type_`` (or None)."""
    if json:
        return to_json
    if pa.types.is_string(type_):
        return _as_str
    if pa.types.is_integer(type_):
        return _as_int
    if pa.types.is_floating(type_):
        return _as_float
    if pa.types.is_boolean(type_):
        return _as_bool
    if pa.types.is_timestamp(type_):
        return parse_ts
    raise TypeError(f"no coercion for Arrow type {type_}")


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
    if pa.types.is_string(type_):
        return frozenset({str, _NONE})
    if pa.types.is_integer(type_):
        return frozenset({int, _NONE})
    if pa.types.is_floating(type_):
        return frozenset({float, int, _NONE})
    if pa.types.is_boolean(type_):
        return frozenset({bool, _NONE})
    return frozenset()


def _timestamps(values: list[Any]) -> pa.Array:
    """RFC 3339 strings to ``timestamp[us, UTC]``: Arrow's ISO-8601 cast (via ns, truncating like
    ``datetime.fromisoformat``) when every value takes it, else value by value."""
    if all(v is None or type(v) is str for v in values):
        try:
            ns = pc.cast(pa.array(values, type=pa.string()), pa.timestamp("ns", tz="UTC"))
            return pc.cast(ns, TIMESTAMP, safe=False)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
    return pa.array([parse_ts(v) for v in values], type=TIMESTAMP)


@dataclass(frozen=True, slots=True)
class Col:
    """One typed row column and how its value is taken from a decoded JSON object."""

    field: pa.Field
    source: Callable[[dict[str, Any]], Any]  # the value as decoded, before coercion
    conv: Callable[[Any], Any]  # decoded value -> value of the column's type (or None)
    json: bool = False
    key: str | None = None  # set when the source is one top-level key (a faster path)

    def get(self, obj: dict[str, Any]) -> Any:
        return self.conv(self.source(obj))

    def array(self, objs: list[dict[str, Any] | None], has_none: bool | None = None) -> pa.Array:
        """The column for a batch of rows (None = a row that did not parse)."""
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
            return _timestamps(values)
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


def col(name: str, type_: pa.DataType, src: Source | None = None, *, json: bool = False) -> Col:
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
    return Col(pa.field(name, type_), source, coercer(type_, json=json), json, key)


def ts_cols(src: str = "ts") -> tuple[Col, ...]:
    """Timestamp columns for source field ``src``.

    ``ts`` -> the string ``ts`` plus the parsed ``ts_at``; a field already named ``*_at`` -> one parsed
    column of the same name (house style: timestamps end in ``_at``).
    """
    if src.endswith("_at"):
        return (col(src, TIMESTAMP),)
    return col(src, pa.string()), col(f"{src}_at", TIMESTAMP, src)


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
    return get


TRACE_COLS: tuple[Col, ...] = (
    col("actor", pa.string()),
    col("trace", pa.string(), json=True),
    col("trace_run", pa.string(), ("trace", "run")),
    col("trace_session", pa.string(), ("trace", "session")),
)
assert tuple(c.field for c in TRACE_COLS) == TRACE_FIELDS


def row_schema(
    cols: Iterable[Col], *, trace: bool = True, common: Iterable[pa.Field] = COMMON_FIELDS
) -> pa.Schema:
    """``common`` + the declared columns (+ the G2 trace columns)."""
    fields = list(common) + [c.field for c in cols]
    if trace:
        fields += TRACE_FIELDS
    return pa.schema(fields)


# --------------------------------------------------------------------------- line streaming


@dataclass(frozen=True, slots=True)
class Line:
    line_no: int  # 1-based physical line number
    offset: int  # absolute byte offset of the line's first byte
    raw: bytes  # line bytes without LF / CRLF
    term_len: int  # 1 (LF), 2 (CRLF) or 0 (unterminated last line)

    @property
    def size(self) -> int:
        return len(self.raw) + self.term_len


def _count_newlines(f: IO[bytes], end: int) -> int:
    """Newlines in the first ``end`` bytes, read in chunks (only a count: nothing is parsed)."""
    f.seek(0)
    count = 0
    left = end
    while left > 0:
        chunk = f.read(min(CHUNK_BYTES, left))
        if not chunk:
            break
        count += chunk.count(b"\n")
        left -= len(chunk)
    return count


def iter_lines(f: IO[bytes], start_offset: int = 0) -> Iterator[Line]:
    """Stream the physical lines of ``f`` from ``start_offset`` (offsets stay absolute).

    Line numbers stay absolute too: the prefix before ``start_offset`` is only counted, not parsed.
    """
    for t in _iter_raw_lines(f, start_offset):
        yield Line(*t)


def _iter_raw_lines(f: IO[bytes], start_offset: int = 0) -> Iterator[tuple[int, int, bytes, int]]:
    """:func:`iter_lines` as plain ``(line_no, offset, raw, term_len)`` tuples (the per-row hot path)."""
    line_no = _count_newlines(f, start_offset) + 1 if start_offset else 1
    f.seek(start_offset)
    offset = start_offset
    pending: list[bytes] = []
    while True:
        chunk = f.read(CHUNK_BYTES)
        if not chunk:
            break
        start = 0
        find = chunk.find
        while True:
            nl = find(b"\n", start)
            if nl < 0:
                if start < len(chunk):
                    pending.append(chunk[start:])
                break
            piece = chunk[start:nl]
            raw = b"".join(pending) + piece if pending else piece
            pending = []
            term = 1
            if raw.endswith(b"\r"):
                raw = raw[:-1]
                term = 2
            yield line_no, offset, raw, term
            offset += len(raw) + term
            line_no += 1
            start = nl + 1
    if pending:
        yield line_no, offset, b"".join(pending), 0


# --------------------------------------------------------------------------- findings


def line_finding(
    ctx: ReadContext, line: Line, code: FindingCode, severity: Severity, message: str
) -> Finding:
    return Finding(code, severity, ctx.rel_path, message, line_no=line.line_no, offset_bytes=line.offset)


def unparseable(ctx: ReadContext, line: Line, why: str) -> Finding:
    """A line vak would skip: torn when it is the unterminated last line, else an unparseable row."""
    if line.term_len == 0:
        return line_finding(
            ctx,
            line,
            FindingCode.TORN_LAST_LINE,
            Severity.WARNING,
            f"unterminated last line does not parse ({why}); vak skips it",
        )
    return line_finding(
        ctx,
        line,
        FindingCode.SIDECAR_UNPARSEABLE_ROW,
        Severity.WARNING,
        f"row does not parse ({why}); vak skips it",
    )


def unterminated(ctx: ReadContext, line: Line) -> Finding:
    return line_finding(
        ctx,
        line,
        FindingCode.TORN_LAST_LINE,
        Severity.INFO,
        "last line has no line terminator but parses (a write may be in flight)",
    )


_loads = orjson.loads
_JSONDecodeError = orjson.JSONDecodeError


def decode_object(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """A JSON object from one line, or (None, reason)."""
    if not raw.strip():
        return None, "blank line"
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return None, str(exc).split(":", 1)[0]
    if not isinstance(value, dict):
        return None, f"a JSON {type(value).__name__}, not an object"
    return value, None


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


Prepare = Callable[[dict[str, Any], ReadContext, Line], dict[str, Any] | None]


@dataclass(frozen=True, slots=True)
class FileCol:
    """A per-file column (same value on every row of a file), e.g. the session id in a file name."""

    field: pa.Field
    get: Callable[[ReadContext], Any]


def file_stem(ctx: ReadContext) -> str:
    return basename(ctx.rel_path).rsplit(".", 1)[0]


def parent_dir(ctx: ReadContext) -> str | None:
    return parent_name(ctx.rel_path)


@dataclass(frozen=True, slots=True)
class RowSpec:
    """The typed columns of a JSONL kind: ``schema`` is common fields + ``cols`` (+ trace columns)."""

    cols: tuple[Col, ...]
    trace: bool = True  # G2 rows may carry trace/actor
    prepare: Prepare | None = None  # reshape a decoded object, or None = not a record of this kind
    file_cols: tuple[FileCol, ...] = ()  # placed right after the common fields

    @property
    def schema(self) -> pa.Schema:
        common = COMMON_FIELDS + tuple(c.field for c in self.file_cols)
        return row_schema(self.cols, trace=self.trace, common=common)

    @property
    def columns(self) -> tuple[Col, ...]:
        return self.cols + TRACE_COLS if self.trace else self.cols

    def reader(self, names: tuple[str, ...] = ()) -> Callable[[ReadContext], Iterator[pa.RecordBatch]]:
        """A reader; with ``names``, files of other basenames (locks, temp files) give no rows."""

        def reader(ctx: ReadContext) -> Iterator[pa.RecordBatch]:
            if names and basename(ctx.rel_path) not in names:
                return iter(())
            return read_jsonl(ctx, self)

        return reader

    def kind(self, doc: str | None, *, names: tuple[str, ...] = (), **fields: Any) -> ArtifactKind:
        """The ArtifactKind of a JSONL sidecar: description, schema and reader come from here."""
        return ArtifactKind(description=doc or "", schema=self.schema, reader=self.reader(names), **fields)


def read_jsonl(ctx: ReadContext, spec: RowSpec, batch_rows: int = BATCH_ROWS) -> Iterator[pa.RecordBatch]:
    """One row per physical line of a JSONL sidecar, typed by ``spec``; streams from ``ctx.start_offset``.

    A line that does not parse (or that ``spec.prepare`` rejects) still gives a row with null fields,
    plus a finding, so the rows' ``size_bytes`` always add up to the bytes read. Columns are built a
    batch at a time.
    """
    prepare = spec.prepare
    per_file = [c.get(ctx) for c in spec.file_cols]
    schema = spec.schema
    columns = spec.columns
    common_types = [f.type for f in schema][: len(COMMON_FIELDS) + len(per_file)]
    objs: list[dict[str, Any] | None] = []
    where: list[tuple[int, int, int]] = []

    def cut() -> pa.RecordBatch:
        n = len(objs)
        line_nos, offsets, sizes = zip(*where, strict=True) if n else ((), (), ())
        fixed = [[ctx.rel_path] * n, [ctx.home_scope] * n, line_nos, offsets, sizes]
        fixed += [[v] * n for v in per_file]
        arrays = [pa.array(list(v), type=t) for v, t in zip(fixed, common_types, strict=True)]
        has_none = None in objs
        arrays += [c.array(objs, has_none) for c in columns]
        objs.clear()
        where.clear()
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    with ctx.open() as f:
        for t in _iter_raw_lines(f, ctx.start_offset):
            line_no, offset, raw, term_len = t
            try:
                obj = _loads(raw)
            except _JSONDecodeError:
                obj = None
            if type(obj) is dict:
                why = None
            else:  # the reason, exactly as decode_object words it
                obj, why = decode_object(raw)
            line = None
            if obj is not None and prepare is not None:
                line = Line(*t)
                obj = prepare(obj, ctx, line)
                why = "not a record of this kind" if obj is None else None
            if obj is None:
                ctx.emit(unparseable(ctx, line or Line(*t), why or "unparseable"))
            elif term_len == 0:
                ctx.emit(unterminated(ctx, line or Line(*t)))
            objs.append(obj)
            where.append((line_no, offset, len(raw) + term_len))
            if len(objs) >= batch_rows:
                yield cut()
    if objs:
        yield cut()


def basename(rel_path: str) -> str:
    return rel_path.rsplit("/", 1)[-1]


def parent_name(rel_path: str) -> str | None:
    """Name of the directory that holds ``rel_path`` (e.g. the ``<wskey>`` of a memory file)."""
    parts = rel_path.split("/")
    return parts[-2] if len(parts) >= 2 else None


def read_small(ctx: ReadContext, cap: int) -> bytes | None:
    """Whole content of a small document file, or None when it is larger than ``cap`` bytes."""
    parts: list[bytes] = []
    total = 0
    with ctx.open() as f:
        while total <= cap:
            chunk = f.read(min(CHUNK_BYTES, cap + 1 - total))
            if not chunk:
                break
            parts.append(chunk)
            total += len(chunk)
    return None if total > cap else b"".join(parts)


def too_large(ctx: ReadContext, cap: int) -> Finding:
    return Finding(
        FindingCode.SIDECAR_UNPARSEABLE_ROW,
        Severity.WARNING,
        ctx.rel_path,
        f"document larger than {cap} bytes; not parsed (sized only)",
    )
