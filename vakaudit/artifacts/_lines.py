"""Line framing of the JSONL sidecars, and the findings a line can give.

A file is framed into physical lines with absolute line numbers and offsets: one line at a time
(:func:`iter_lines`; :func:`_iter_raw_lines` as plain tuples), or a read chunk at a time
(:func:`_iter_line_blocks` as a list of lines for the Python decoder, :func:`_iter_blocks` as one
buffer for the compiled reader). A line longer than :data:`MAX_LINE_BYTES` is a :class:`LongLine`,
streamed past and never held. What a reader reports about one line (:func:`unparseable`,
:func:`too_long`, :func:`unterminated`, with the reason :func:`decode_object` gives) is worded
here once for every reader.

Nothing here knows columns or kinds: it builds no row. Reads only through the file object it is
given; never writes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import orjson

from vakaudit.artifacts._base import ReadContext
from vakaudit.findings import Finding, FindingCode, Severity
from vakaudit.ledger.framing import MAX_LINE_BYTES, LongLine, LongLineBuilder, iter_bounded_lines

CHUNK_BYTES = 1 << 20


# --------------------------------------------------------------------------- line streaming


@dataclass(frozen=True, slots=True)
class Line:
    line_no: int  # 1-based physical line number
    offset: int  # absolute byte offset of the line's first byte
    raw: bytes  # line bytes without LF / CRLF (a LongLine: the first bytes of a line over the bound)
    term_len: int  # 1 (LF), 2 (CRLF) or 0 (unterminated last line)

    @property
    def size(self) -> int:
        return raw_len(self.raw) + self.term_len


def raw_len(raw: bytes) -> int:
    """The length of a framed line's bytes: a :class:`LongLine` keeps only its first bytes."""
    return raw.length if type(raw) is LongLine else len(raw)


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


def first_line_no(f: IO[bytes], start_offset: int, start_line: int | None = None) -> int:
    """The number of the line at ``start_offset``: after ``start_line`` lines when the caller knows
    them (an incremental rescan), else counted in the bytes before it."""
    if not start_offset:
        return 1
    if start_line is not None:
        return start_line + 1
    return _count_newlines(f, start_offset) + 1


def iter_lines(f: IO[bytes], start_offset: int = 0) -> Iterator[Line]:
    """Stream the physical lines of ``f`` from ``start_offset`` (offsets stay absolute).

    Line numbers stay absolute too: the prefix before ``start_offset`` is only counted, not parsed.
    """
    for t in _iter_raw_lines(f, start_offset):
        yield Line(*t)


def _iter_raw_lines(
    f: IO[bytes], start_offset: int = 0, start_line: int | None = None
) -> Iterator[tuple[int, int, bytes, int]]:
    """:func:`iter_lines` as plain ``(line_no, offset, raw, term_len)`` tuples (the per-row hot path),
    framed by :func:`~vakaudit.ledger.framing.iter_bounded_lines` (a longer line is a LongLine)."""
    line_no = first_line_no(f, start_offset, start_line)
    f.seek(start_offset)
    for offset, raw, terminated in iter_bounded_lines(f.read, chunk_bytes=CHUNK_BYTES):
        term = 1 if terminated else 0
        if terminated and type(raw) is not LongLine and raw.endswith(b"\r"):
            raw = raw[:-1]
            term = 2
        yield line_no, start_offset + offset, raw, term
        line_no += 1


# --------------------------------------------------------------------------- a read chunk of lines at a time


def _iter_line_blocks(f: IO[bytes], start_offset: int) -> Iterator[tuple[list[bytes], bool]]:
    """The lines of ``f`` from ``start_offset``, a read chunk at a time: ``(lines, True)`` for the
    LF-terminated lines completed by a chunk (LF removed, a CR kept), ``([last], False)`` for an
    unterminated last line. A line longer than :data:`MAX_LINE_BYTES` is a :class:`LongLine`, in a
    block of its own (streamed past, not held)."""
    f.seek(start_offset)
    carry: list[bytes] = []  # the start of a line that continues in the next chunk
    held = 0  # bytes in carry
    long: LongLineBuilder | None = None  # the current line passed the bound
    while True:
        chunk = f.read(CHUNK_BYTES)
        if not chunk:
            break
        if long is not None:
            nl = chunk.find(b"\n")
            if nl < 0:
                long.add(chunk)
                continue
            long.add(chunk[:nl])
            yield [long.line()], True
            long = None
            chunk = chunk[nl + 1 :]
        pieces = chunk.split(b"\n")
        rest = pieces.pop()
        if pieces and carry:
            first = b"".join([*carry, pieces[0]])
            carry, held = [], 0
            if len(first) > MAX_LINE_BYTES:
                yield [LongLineBuilder(first).line()], True
                del pieces[0]
            else:
                pieces[0] = first
        if pieces:
            yield pieces, True
        if held + len(rest) > MAX_LINE_BYTES:
            long = LongLineBuilder(b"".join([*carry, rest]))
            carry, held = [], 0
        elif rest:
            carry.append(rest)
            held += len(rest)
    if long is not None:
        yield [long.line()], False
    elif carry:
        yield [b"".join(carry)], False


def _iter_blocks(f: IO[bytes], start_offset: int) -> Iterator[tuple[Any, bool]]:
    """The lines of ``f`` from ``start_offset``, a read chunk at a time, as one buffer: ``(lines, True)``
    for the LF-terminated lines completed by a chunk (their LFs kept), ``(last, False)`` for an
    unterminated last line: the same lines as :func:`_iter_line_blocks`.

    Chunks are read into one reused buffer (no fresh allocation per chunk); a block is a view into
    it, valid until the next block is asked for. A line longer than :data:`MAX_LINE_BYTES` is a
    :class:`LongLine` block of its own (streamed past, not held; never given to the compiled reader).
    """
    f.seek(start_offset)
    size = CHUNK_BYTES
    try:  # a small file needs no buffer of two chunks (a file that grows meanwhile gets a bigger one)
        left = os.fstat(f.fileno()).st_size - start_offset
    except (AttributeError, OSError, ValueError):
        left = 2 * size
    buf = bytearray(max(1, min(2 * size, left + 1)))
    view = memoryview(buf)
    have = 0  # the start of a line that continues in the next chunk, at the front of buf
    while True:
        if have > MAX_LINE_BYTES:  # the line passed the bound: streamed from here
            long = LongLineBuilder(bytes(view[:have]))
            have = 0
            while True:
                got = f.readinto(view[: min(size, len(buf))])  # type: ignore[attr-defined]
                if not got:
                    yield long.line(), False
                    return
                nl = buf.find(b"\n", 0, got)
                long.add(bytes(view[: got if nl < 0 else nl]))
                if nl >= 0:
                    yield long.line(), True
                    last = buf.rfind(b"\n", nl + 1, got)
                    if last >= 0:  # the whole lines after it
                        yield view[nl + 1 : last + 1], True
                    else:
                        last = nl
                    have = got - (last + 1)
                    buf[:have] = bytes(view[last + 1 : got])
                    break
            continue
        if have == len(buf):  # a line longer than the buffer: a bigger one
            bigger = bytearray(max(2 * len(buf), have + size))
            bigger[:have] = view[:have]
            buf, view = bigger, memoryview(bigger)
        got = f.readinto(view[have : have + min(size, len(buf) - have)])  # type: ignore[attr-defined]
        if not got:
            break
        end = have + got
        last = buf.rfind(b"\n", have, end)
        if last < 0:
            have = end
            continue
        if have:  # a line begun in an earlier chunk ends in this one: it may be over the bound
            first = buf.find(b"\n", have, end)
            if first > MAX_LINE_BYTES:
                yield LongLineBuilder(bytes(view[:first])).line(), True
                buf[: end - first - 1] = bytes(view[first + 1 : end])  # same size: allowed while views are out
                end -= first + 1
                last -= first + 1
                if last < 0:  # no whole line after it
                    have = end
                    continue
        yield view[: last + 1], True
        have = end - (last + 1)
        buf[:have] = bytes(view[last + 1 : end])  # same size: allowed while views are out
    if have:
        yield bytes(view[:have]), False


def _block_pieces(block: Any, terminated: bool) -> list[bytes]:
    """The lines of a block of :func:`_iter_blocks` (LF removed), for the Python decoder."""
    if type(block) is LongLine:
        return [block]
    pieces = bytes(block).split(b"\n")
    if terminated:
        pieces.pop()  # the empty rest after the last LF
    return pieces


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


def too_long(ctx: ReadContext, line: Line) -> Finding:
    """A line longer than :data:`MAX_LINE_BYTES` (only its first bytes were held): no row fields."""
    return line_finding(
        ctx,
        line,
        FindingCode.LINE_TOO_LONG,
        Severity.WARNING,
        f"line of {raw_len(line.raw):,} bytes, longer than the {MAX_LINE_BYTES:,} bytes a line is read up to: not read",
    )


def unterminated(ctx: ReadContext, line: Line) -> Finding:
    return line_finding(
        ctx,
        line,
        FindingCode.TORN_LAST_LINE,
        Severity.INFO,
        "last line has no line terminator but parses (a write may be in flight)",
    )


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
