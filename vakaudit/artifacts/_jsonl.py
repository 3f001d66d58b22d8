"""The reader of the JSONL sidecar kinds: :func:`read_jsonl` over a kind's
:class:`~vakaudit.artifacts._rowspec.RowSpec`, and :class:`JsonlBundle` for many small files.

A kind declares its columns with :func:`~vakaudit.artifacts._columns.col` and gathers them in a
RowSpec (``_rowspec``, which imports no pyarrow), whose reader imports this module on its first
file. Lines are framed by ``_lines`` and the columns of a batch of decoded rows are built by
``_batches``; this module joins them. The compiled-reader glue and the bundles stay here with the
readers.

Reading (:func:`read_jsonl`) has three paths with identical output: the line-at-a-time reference
(``fast=False``); the Python block path, which decodes a read chunk with one ``map(orjson.loads)``
and builds columns per row shape; and, when the extension is built (``vakaudit._native.linescan``,
off with ``VAKAUDIT_NO_NATIVE=1``), the compiled path: ``linescan.jsonl_columns`` validates a chunk
of lines as strict JSON and writes each column's values into Arrow buffers, wrapped here without a
copy (:class:`_NativeSpec`). It only vouches for the plain case and declines the whole chunk
otherwise (a line orjson might read differently, a requested key written twice, a value of another
JSON type than its column's, ...); a declined chunk goes through the Python block path. json=True
and key-path values that are not in the form orjson writes back are finished here from their JSON
text; timestamps are parsed per batch from the strings the extension gives, exactly as the reference
does. :class:`JsonlBundle` reads many small files the same way, one at a time, and builds their
batches together (the scan reads a task's small JSONL files into one per kind).

Nothing here writes: files are read through ``ReadContext.open()`` only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import accumulate
from typing import TYPE_CHECKING, Any

import orjson
import pyarrow as pa

from vakaudit._native import arrow_column
from vakaudit._native import linescan as _linescan
from vakaudit.artifacts._base import ReadContext, repeated
from vakaudit.artifacts._batches import _batch_columns, _Plan, _plan
from vakaudit.artifacts._columns import BATCH_ROWS, COMMON_FIELDS, Col, _Dig
from vakaudit.artifacts._jsonl_rows import _decode_block, _decode_line
from vakaudit.artifacts._lines import (
    Line,
    _block_pieces,
    _iter_blocks,
    _iter_line_blocks,
    _iter_raw_lines,
    first_line_no,
    raw_len,
)
from vakaudit.artifacts._timestamps import timestamps
from vakaudit.ledger.framing import LongLine

if TYPE_CHECKING:
    from vakaudit.artifacts._rowspec import RowSpec

_loads = orjson.loads
_JSONDecodeError = orjson.JSONDecodeError


# --------------------------------------------------------------------------- the Python block reader


def read_jsonl(
    ctx: ReadContext, spec: RowSpec, batch_rows: int = BATCH_ROWS, *, fast: bool = True
) -> Iterator[pa.RecordBatch]:
    """One row per physical line of a JSONL sidecar, typed by ``spec``; streams from ``ctx.start_offset``.

    A line that does not parse (or that ``spec.prepare`` rejects) still gives a row with null fields,
    plus a finding, so the rows' ``size_bytes`` always add up to the bytes read.

    Lines are framed a read chunk at a time. With the compiled extension, a chunk whose lines are all
    plain JSON objects is read by ``linescan.jsonl_columns`` straight into Arrow buffers (see
    :class:`_NativeSpec`); without it, or for a chunk it declines, the chunk is decoded with one
    ``map``: a chunk where every line is a JSON object (and a record of the kind) needs no Python per
    line. Any other chunk, and an unterminated last line, is decoded line by line exactly as
    ``fast=False`` does, which keeps the line-at-a-time reader (:func:`_read_jsonl_lines`, the
    reference the tests compare against). Columns are then built a batch at a time
    (:func:`_batch_columns`).
    """
    if not fast:
        yield from _read_jsonl_lines(ctx, spec, batch_rows)
        return
    schema, columns, plans, native = _compiled(spec)
    if native is not None and _linescan is not None and hasattr(_linescan, "jsonl_columns"):
        yield from _read_jsonl_native(ctx, spec, batch_rows, native)
        return
    fixed_values, fixed_types = _fixed(ctx, spec, schema)
    objs: list[dict[str, Any] | None] = []
    sizes: list[int] = []  # line bytes including the terminator
    first = [0, 0]  # line number and offset of objs[0]

    def cut(n: int) -> pa.RecordBatch:
        line_no, offset = first
        rows = objs[:n]
        spans = sizes[:n]
        del objs[:n], sizes[:n]
        offsets = list(accumulate(spans, initial=offset))
        first[0] = line_no + n
        first[1] = offsets.pop()
        arrays = [pa.repeat(pa.scalar(v, t), n) for v, t in zip(fixed_values, fixed_types, strict=True)]
        arrays[2:2] = [
            pa.array(list(range(line_no, line_no + n)), pa.int64()),
            pa.array(offsets, pa.int64()),
            pa.array(spans, pa.int64()),
        ]
        arrays += _batch_columns(columns, plans, rows)
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    with ctx.open() as f:
        start = ctx.start_offset
        line_no = first_line_no(f, start, ctx.start_line)
        offset = start
        first[:] = [line_no, offset]
        for pieces, terminated in _iter_line_blocks(f, start):
            n, size = _decode_block(ctx, spec, pieces, terminated, line_no, offset, objs, sizes)
            line_no += n
            offset += size
            while len(objs) >= batch_rows:
                yield cut(batch_rows)
    if objs:
        yield cut(len(objs))


def _fixed(ctx: ReadContext, spec: RowSpec, schema: pa.Schema) -> tuple[list[Any], list[pa.DataType]]:
    """The values and types of the columns that are the same on every row of a file."""
    fixed_values = [ctx.rel_path, ctx.home_scope] + [c.get(ctx) for c in spec.file_cols]
    fixed_types = [f.type for f in schema][: len(fixed_values) + 3]
    del fixed_types[2:5]  # line_no, offset_bytes, size_bytes are built per batch
    return fixed_values, fixed_types


_COMPILED: dict[int, tuple[RowSpec, pa.Schema, tuple[Col, ...], list[_Plan | None], _NativeSpec | None]] = {}


def _compiled(spec: RowSpec) -> tuple[pa.Schema, tuple[Col, ...], list[_Plan | None], _NativeSpec | None]:
    """Schema, columns, column plans and compiled-reader plan of a spec, worked out once per spec
    (kinds read many files)."""
    hit = _COMPILED.get(id(spec))
    if hit is None or hit[0] is not spec:
        columns = spec.columns
        plans = [_plan(c) for c in columns]
        hit = _COMPILED[id(spec)] = (spec, spec.schema, columns, plans, _NativeSpec.of(spec, columns, plans))
    return hit[1], hit[2], hit[3], hit[4]


# --------------------------------------------------------------------------- the compiled reader


class _J:
    """The column modes of ``linescan.jsonl_columns`` (the ``J_*`` constants of the extension)."""

    J_STR, J_INT, J_FLOAT, J_BOOL, J_TS, J_UTF8LEN, J_COUNT, J_JSON, J_PATH = range(9)


class _NativeSpec:
    """What ``linescan.jsonl_columns`` reads for a spec: the top-level keys, one ``(mode, slot, final,
    path)`` per column and the keys every line must have, plus how each column's buffers become an
    Arrow array. :meth:`of` gives None for a spec it cannot read exactly (a column computed from the
    whole row, a type it does not build, a ``prepare`` without ``fast_when``)."""

    __slots__ = ("cols", "columns", "finish", "keys", "required", "ts", "types")

    def __init__(
        self,
        columns: tuple[Col, ...],
        keys: tuple[bytes, ...],
        cols: tuple[tuple[int, int, int, tuple[bytes, ...]], ...],
        required: tuple[int, ...],
        finish: list[Callable[[list[Any]], list[Any]] | None],
    ) -> None:
        self.columns = columns
        self.keys = keys
        self.cols = cols
        self.required = required
        self.finish = finish  # per column: top-level values -> source values (a key path), or None
        self.ts = [pa.types.is_timestamp(c.field.type) for c in columns]
        # the Arrow type of the buffers: a timestamp column arrives as its source strings
        self.types = [pa.string() if ts else c.field.type for c, ts in zip(columns, self.ts, strict=True)]

    @classmethod
    def of(cls, spec: RowSpec, columns: tuple[Col, ...], plans: list[_Plan | None]) -> _NativeSpec | None:
        if spec.prepare is not None and not spec.fast_when:
            return None
        ls = _J
        keys: dict[str, int] = {}
        cols = []
        finish: list[Callable[[list[Any]], list[Any]] | None] = []
        for c, plan in zip(columns, plans, strict=True):
            if plan is None:
                return None
            type_ = c.field.type
            src = c.source
            path: tuple[str, ...] = ()
            if getattr(src, "column_mode", None) is not None:
                if c.json or type_ != pa.int64():
                    return None
                mode = ls.J_UTF8LEN if src.column_mode == "utf8_len" else ls.J_COUNT  # type: ignore[attr-defined]
            else:
                if isinstance(src, _Dig):
                    path = src.path[1:]
                elif c.key is None:
                    return None
                if c.json:
                    mode = ls.J_JSON if type_ == pa.string() else None
                elif pa.types.is_timestamp(type_):
                    mode = None if path else ls.J_TS
                else:
                    mode = {pa.string(): ls.J_STR, pa.int64(): ls.J_INT, pa.float64(): ls.J_FLOAT}.get(type_)
                    if type_ == pa.bool_():
                        mode = ls.J_BOOL
            if mode is None or any("\0" in k for k in (plan.key, *path)):
                return None
            slot = keys.setdefault(plan.key, len(keys))
            if path:
                cols.append((ls.J_PATH, slot, mode, tuple(k.encode() for k in path)))
            else:
                cols.append((mode, slot, 0, ()))
            finish.append(plan.then)
        required = tuple(keys.setdefault(k, len(keys)) for k in spec.fast_when)
        if len(keys) > 64:
            return None
        return cls(columns, tuple(k.encode() for k in keys), tuple(cols), required, finish)

    def read(self, block: Any, line_no: int = 1, offset: int = 0) -> _NativePart | None:
        """The rows of a chunk of complete LF-terminated lines (the first one numbered ``line_no``, at
        ``offset``), or None when the extension declines the chunk."""
        ls = _linescan
        got = ls.jsonl_columns(block, self.keys, self.cols, self.required, line_no, offset)  # type: ignore[union-attr]
        if got is None:
            return None
        n, where, outs, fixes = got
        arrays = [arrow_column(type_, n, c) for type_, c in zip(self.types, outs, strict=True)]
        if fixes:  # json / key-path values not in the form orjson writes: finished as the reference does
            by_col: dict[int, list[tuple[int, int, int]]] = {}
            for j, row, s, e in fixes:
                by_col.setdefault(j, []).append((row, s, e))
            for j, items in by_col.items():
                c = self.columns[j]
                then = self.finish[j]
                values = arrays[j].to_pylist()
                for row, s, e in items:
                    v = _loads(block[s:e])
                    if then is not None:
                        v = then([v])[0]
                    values[row] = c.conv(v)
                arrays[j] = pa.array(values, type=self.types[j])
        i64 = pa.int64()
        return _NativePart(n, [pa.Array.from_buffers(i64, n, [None, pa.py_buffer(b)]) for b in where], arrays)


class _NativePart:
    """Rows read by the extension: line numbers, offsets, sizes, and one array per column (timestamps
    as their source strings)."""

    __slots__ = ("arrays", "count", "where")

    def __init__(self, count: int, where: list[pa.Array], arrays: list[pa.Array]) -> None:
        self.count = count
        self.where = where
        self.arrays = arrays

    def split(self, n: int) -> tuple[_NativePart, _NativePart]:
        head = _NativePart(n, [a.slice(0, n) for a in self.where], [a.slice(0, n) for a in self.arrays])
        tail = _NativePart(
            self.count - n, [a.slice(n) for a in self.where], [a.slice(n) for a in self.arrays]
        )
        return head, tail

    def located(self) -> list[pa.Array]:
        return self.where

    def parts(self, native: _NativeSpec, plans: list[_Plan | None]) -> list[Any]:
        return self.arrays


class _ObjPart:
    """Rows decoded in Python (a chunk the extension declined), the first at ``line_no`` / ``offset``."""

    __slots__ = ("count", "line_no", "objs", "offset", "sizes")

    def __init__(
        self, objs: list[dict[str, Any] | None], sizes: list[int], line_no: int, offset: int
    ) -> None:
        self.count = len(objs)
        self.objs = objs
        self.sizes = sizes
        self.line_no = line_no
        self.offset = offset

    def split(self, n: int) -> tuple[_ObjPart, _ObjPart]:
        head = _ObjPart(self.objs[:n], self.sizes[:n], self.line_no, self.offset)
        tail = _ObjPart(self.objs[n:], self.sizes[n:], self.line_no + n, self.offset + sum(self.sizes[:n]))
        return head, tail

    def located(self) -> list[pa.Array]:
        offsets = list(accumulate(self.sizes, initial=self.offset))
        offsets.pop()
        return [
            pa.array(range(self.line_no, self.line_no + self.count), pa.int64()),
            pa.array(offsets, pa.int64()),
            pa.array(self.sizes, pa.int64()),
        ]

    def parts(self, native: _NativeSpec, plans: list[_Plan | None]) -> list[Any]:
        """Per column an array, or for a timestamp column the source values (converted per batch)."""
        columns = native.columns
        keep = [j for j, ts in enumerate(native.ts) if not ts]
        arrays = _batch_columns(tuple(columns[j] for j in keep), [plans[j] for j in keep], self.objs)
        out: list[Any] = [None] * len(columns)
        for j, arr in zip(keep, arrays, strict=True):
            out[j] = arr
        for j, ts in enumerate(native.ts):
            if ts:
                src = columns[j].source
                out[j] = [None if o is None else src(o) for o in self.objs]
        return out


def _timestamps_of(parts: list[Any]) -> pa.Array:
    """:func:`~vakaudit.artifacts._timestamps.timestamps` of the concatenated values of ``parts``
    (string arrays or value lists)."""
    if all(isinstance(p, pa.Array) or all(v is None or type(v) is str for v in p) for p in parts):
        arrs = [p if isinstance(p, pa.Array) else pa.array(p, type=pa.string()) for p in parts]
        return timestamps(arrs[0] if len(arrs) == 1 else pa.concat_arrays(arrs))
    return timestamps([v for p in parts for v in (p.to_pylist() if isinstance(p, pa.Array) else p)])


def _part_columns(
    parts: list[_NativePart | _ObjPart], columns: tuple[Col, ...], plans: list[_Plan | None], native: _NativeSpec | None
) -> list[pa.Array]:
    """The row columns of a batch made of compiled and Python-decoded parts, in order; a batch of
    one Python-decoded part is exactly the Python fast path's."""
    if len(parts) == 1 and isinstance(parts[0], _ObjPart):
        return _batch_columns(columns, plans, parts[0].objs)
    assert native is not None
    per_part = [p.parts(native, plans) for p in parts]
    out = []
    for j in range(len(columns)):
        got = [pp[j] for pp in per_part]
        if native.ts[j]:
            out.append(_timestamps_of(got))
        else:
            out.append(got[0] if len(got) == 1 else pa.concat_arrays(got))
    return out


def _read_jsonl_native(
    ctx: ReadContext, spec: RowSpec, batch_rows: int, native: _NativeSpec
) -> Iterator[pa.RecordBatch]:
    """:func:`read_jsonl` with the compiled chunk reader: the same batches, rows and findings."""
    schema, columns, plans, _ = _compiled(spec)
    fixed_values, fixed_types = _fixed(ctx, spec, schema)
    queue: list[_NativePart | _ObjPart] = []
    pending = 0

    def cut(n: int) -> pa.RecordBatch:
        nonlocal pending
        take: list[_NativePart | _ObjPart] = []
        need = n
        while need:
            part = queue[0]
            if part.count <= need:
                take.append(queue.pop(0))
                need -= part.count
            else:
                head, queue[0] = part.split(need)
                take.append(head)
                need = 0
        pending -= n
        arrays = [pa.repeat(pa.scalar(v, t), n) for v, t in zip(fixed_values, fixed_types, strict=True)]
        located = [p.located() for p in take]
        arrays[2:2] = [
            pa.concat_arrays([w[i] for w in located]) if len(take) > 1 else located[0][i] for i in range(3)
        ]
        arrays += _part_columns(take, columns, plans, native)
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    with ctx.open() as f:
        start = ctx.start_offset
        line_no = first_line_no(f, start, ctx.start_line)
        offset = start
        for block, terminated in _iter_blocks(f, start):
            part = native.read(block, line_no, offset) if terminated and type(block) is not LongLine else None
            if part is None:
                pieces = _block_pieces(block, terminated)
                prev = queue[-1] if queue else None
                if isinstance(prev, _ObjPart):  # rows decoded in Python stay one part
                    objs, sizes = prev.objs, prev.sizes
                else:
                    objs, sizes = [], []
                count, size = _decode_block(ctx, spec, pieces, terminated, line_no, offset, objs, sizes)
                if isinstance(prev, _ObjPart):
                    prev.count += count
                else:
                    queue.append(_ObjPart(objs, sizes, line_no, offset))
            else:
                queue.append(part)
                count = part.count
                size = len(block)
            line_no += count
            offset += size
            pending += count
            while pending >= batch_rows:
                yield cut(batch_rows)
    if pending:
        yield cut(pending)


# --------------------------------------------------------------------------- the line-at-a-time reference


def _read_jsonl_lines(
    ctx: ReadContext, spec: RowSpec, batch_rows: int = BATCH_ROWS
) -> Iterator[pa.RecordBatch]:
    """:func:`read_jsonl` one line and one column at a time: the reference the fast path must equal."""
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
        for t in _iter_raw_lines(f, ctx.start_offset, ctx.start_line):
            line_no, offset, raw, term_len = t
            obj = _decode_line(ctx, spec, Line(*t))
            objs.append(obj)
            where.append((line_no, offset, raw_len(raw) + term_len))
            if len(objs) >= batch_rows:
                yield cut()
    if objs:
        yield cut()


# --------------------------------------------------------------------------- many small files

BUNDLE_FLUSH_BYTES = 4 << 20  # a bundle turns its pending rows into Arrow once this many file bytes are read


class _ObjRun(_ObjPart):
    """Rows decoded in Python, from one or several files: their line numbers and offsets listed."""

    __slots__ = ("line_nos", "offsets")

    def __init__(self) -> None:
        super().__init__([], [], 1, 0)
        self.line_nos: list[int] = []
        self.offsets: list[int] = []

    def add(self, count: int, line_no: int, offset: int) -> None:
        """Number the last ``count`` rows added to ``objs``/``sizes``, the first at ``line_no``/``offset``."""
        if not count:
            return
        self.count += count
        self.line_nos += range(line_no, line_no + count)
        if count == 1:
            self.offsets.append(offset)
        else:
            self.offsets += accumulate(self.sizes[len(self.sizes) - count : -1], initial=offset)

    def truncate(self, count: int) -> None:
        del self.objs[count:], self.sizes[count:], self.line_nos[count:], self.offsets[count:]
        self.count = count

    def located(self) -> list[pa.Array]:
        i64 = pa.int64()
        return [pa.array(self.line_nos, i64), pa.array(self.offsets, i64), pa.array(self.sizes, i64)]


class JsonlBundle:
    """The rows of many small JSONL files of one spec, read one file at a time and turned into Arrow
    together, a few MB of files at a time (it is :attr:`full` then).

    Each file is framed and decoded exactly as :func:`read_jsonl` does (compiled chunks, chunks decoded
    in Python, findings through its context), but the work :func:`read_jsonl` does per batch (the
    per-file columns, line numbers and offsets, the columns of rows decoded in Python, timestamp
    casts) is done once for many files: a file of a few rows costs its reading, not a batch. The
    tables it gives hold the same rows, in file order, as the concatenated batches of
    :func:`read_jsonl` over the same files.
    """

    def __init__(
        self,
        spec: RowSpec,
        flush_bytes: int = BUNDLE_FLUSH_BYTES,
        *,
        accepts: Callable[[str], bool] | None = None,
        native: bool = True,
    ) -> None:
        self.spec = spec
        self._accepts = accepts  # files it reads, by relative path (the others give no rows)
        self.schema, self._columns, self._plans, nat = _compiled(spec)
        usable = native and nat is not None and _linescan is not None and hasattr(_linescan, "jsonl_columns")
        self._native = nat if usable else None
        self._flush_bytes = flush_bytes
        n_fixed = 2 + len(spec.file_cols)
        types = [f.type for f in self.schema]
        self._fixed_types = types[:2] + types[5 : 5 + len(spec.file_cols)]
        self._n_fixed = n_fixed
        self._files: list[tuple[list[Any], int]] = []  # per-file column values and row count, pending
        self._segs: list[_NativePart | _ObjPart] = []  # pending rows in file order
        self._rows = 0
        self._bytes = 0

    def add(self, ctx: ReadContext) -> tuple[int, int]:
        """Read one file from ``ctx.start_offset``: ``(rows, end)``, ``end`` being the offset after its
        last row (or ``start_offset`` when there is none). A file ``accepts`` refuses gives no rows.
        Should reading fail, the file's rows are dropped again and the error raised."""
        if self._accepts is not None and not self._accepts(ctx.rel_path):
            return 0, ctx.start_offset
        segs = len(self._segs)
        last = self._segs[-1] if segs else None
        kept = last.count if isinstance(last, _ObjRun) else 0
        try:
            rows, start, end = self._read(ctx)
        except BaseException:
            del self._segs[segs:]
            if isinstance(last, _ObjRun):
                last.truncate(kept)
            raise
        if rows:
            self._files.append(
                ([ctx.rel_path, ctx.home_scope] + [c.get(ctx) for c in self.spec.file_cols], rows)
            )
            self._rows += rows
            self._bytes += end - start
        return rows, end

    @property
    def full(self) -> bool:
        return self._bytes >= self._flush_bytes or self._rows >= BATCH_ROWS

    def batches(self) -> list[pa.RecordBatch]:
        """The batch of the files added since the last call (none when they gave no rows)."""
        if not self._rows:
            return []
        batch = self._build()
        self._files, self._segs = [], []
        self._rows = self._bytes = 0
        return [batch]

    def _run(self) -> _ObjRun:
        last = self._segs[-1] if self._segs else None
        if isinstance(last, _ObjRun):
            return last
        run = _ObjRun()
        self._segs.append(run)
        return run

    def _decode(
        self, ctx: ReadContext, pieces: list[bytes], terminated: bool, line_no: int, offset: int
    ) -> tuple[int, int]:
        run = self._run()
        count, size = _decode_block(ctx, self.spec, pieces, terminated, line_no, offset, run.objs, run.sizes)
        run.add(count, line_no, offset)
        return count, size

    def _read(self, ctx: ReadContext) -> tuple[int, int, int]:
        native = self._native
        with ctx.open() as f:
            start = ctx.start_offset
            line_no = first_line_no(f, start, ctx.start_line)
            first = line_no
            offset = start
            if native is None:
                for pieces, terminated in _iter_line_blocks(f, start):
                    count, size = self._decode(ctx, pieces, terminated, line_no, offset)
                    line_no += count
                    offset += size
            else:
                for block, terminated in _iter_blocks(f, start):
                    long = type(block) is LongLine
                    part = native.read(block, line_no, offset) if terminated and not long else None
                    if part is None:
                        pieces = _block_pieces(block, terminated)
                        count, size = self._decode(ctx, pieces, terminated, line_no, offset)
                    else:
                        self._segs.append(part)
                        count = part.count
                        size = len(block)
                    line_no += count
                    offset += size
        return line_no - first, start, offset

    def _build(self) -> pa.RecordBatch:
        n = self._rows
        files = self._files
        segs = self._segs
        if len(files) == 1:
            arrays = [
                pa.repeat(pa.scalar(v, t), n) for v, t in zip(files[0][0], self._fixed_types, strict=True)
            ]
        else:
            counts = [c for _, c in files]
            arrays = [repeated([vals[j] for vals, _ in files], counts, t) for j, t in enumerate(self._fixed_types)]
        located = [p.located() for p in segs]
        arrays[2:2] = [
            pa.concat_arrays([w[i] for w in located]) if len(segs) > 1 else located[0][i] for i in range(3)
        ]
        arrays += _part_columns(segs, self._columns, self._plans, self._native)
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)
