"""JSONL lines to the row objects of a kind, with their findings: the decoding every JSONL sidecar
reader shares (:mod:`~vakaudit.artifacts._jsonl` builds Arrow columns from these objects), and
:func:`jsonl_findings`, which reads a file for its findings alone. Imports no pyarrow: ``verify``
reads a file whose rows no cross check reads through :func:`jsonl_findings` and builds no Arrow.

The findings are those of the readers because they are made here, line by line, by the one
function the readers use (:func:`_decode_block`); the compiled reader vouches only for lines that
give none (every line of its chunk a plain JSON object with the kind's keys) and hands every other
chunk to this one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from vakaudit.artifacts._base import ReadContext
from vakaudit.artifacts._lines import (
    Line,
    _iter_line_blocks,
    decode_object,
    first_line_no,
    raw_len,
    too_long,
    unparseable,
    unterminated,
)
from vakaudit.ledger.framing import LongLine

if TYPE_CHECKING:
    from vakaudit.artifacts._rowspec import RowSpec

_loads = orjson.loads
_JSONDecodeError = orjson.JSONDecodeError
_DICT_ONLY = {dict}


def _decode_block(
    ctx: ReadContext,
    spec: RowSpec,
    pieces: list[bytes],
    terminated: bool,
    line_no: int,
    offset: int,
    objs: list[dict[str, Any] | None],
    sizes: list[int],
) -> tuple[int, int]:
    """Append the row objects and sizes of a chunk's lines (``pieces``: LF removed, a CR kept) to
    ``objs`` and ``sizes``, emitting findings; returns the line count and byte count consumed."""
    prepare = spec.prepare
    vals: list[Any] | None = None
    if terminated and type(pieces[0]) is not LongLine:  # (a LongLine is a block of its own)
        try:
            vals = list(map(_loads, pieces))
        except _JSONDecodeError:
            vals = None
        if vals is not None and set(map(type, vals)) != _DICT_ONLY:
            vals = None
        if vals is not None and prepare is not None:
            vals = list(map(prepare, vals))
            if None in vals:
                vals = None
    if vals is not None:  # every line a record: no finding to make, nothing per line
        spans = [n + 1 for n in map(len, pieces)]
        objs += vals
        sizes += spans
        return len(pieces), sum(spans)
    total = 0
    for piece in pieces:
        term = 1 if terminated else 0
        raw = piece
        if terminated and type(raw) is not LongLine and raw.endswith(b"\r"):
            raw = raw[:-1]
            term = 2
        objs.append(_decode_line(ctx, spec, Line(line_no, offset + total, raw, term)))
        size = raw_len(raw) + term
        sizes.append(size)
        line_no += 1
        total += size
    return len(pieces), total



def _decode_line(ctx: ReadContext, spec: RowSpec, line: Line) -> dict[str, Any] | None:
    """The row object of one line (None when it is not one), emitting the line's finding if any."""
    raw = line.raw
    if type(raw) is LongLine:
        ctx.emit(too_long(ctx, line))
        return None
    try:
        obj = _loads(raw)
    except _JSONDecodeError:
        obj = None
    if type(obj) is dict:
        why = None
    else:  # the reason, exactly as decode_object words it
        obj, why = decode_object(raw)
    if obj is not None and spec.prepare is not None:
        obj = spec.prepare(obj)
        why = "not a record of this kind" if obj is None else None
    if obj is None:
        ctx.emit(unparseable(ctx, line, why or "unparseable"))
    elif line.term_len == 0:
        ctx.emit(unterminated(ctx, line))
    return obj


def jsonl_findings(ctx: ReadContext, spec: RowSpec) -> None:
    """Read one JSONL file of the kind of ``spec`` from ``ctx.start_offset`` for its findings (emitted
    through ``ctx``), as its reader makes them; the row objects are dropped a chunk at a time."""
    objs: list[dict[str, Any] | None] = []
    sizes: list[int] = []
    with ctx.open() as f:
        start = ctx.start_offset
        line_no = first_line_no(f, start, ctx.start_line)
        offset = start
        for pieces, terminated in _iter_line_blocks(f, start):
            n, size = _decode_block(ctx, spec, pieces, terminated, line_no, offset, objs, sizes)
            objs.clear()
            sizes.clear()
            line_no += n
            offset += size
