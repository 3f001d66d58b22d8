"""A small streaming JSON scanner for large one-document files (checkpoints of many MB).

It yields ``(path, value)`` for every scalar, where ``path`` is the tuple of object keys and array
indices leading to it. Strings longer than ``cap`` bytes are never held in memory: they come back as
:class:`LongString` (byte length, whether they had escapes, their last bytes), which is all a
scanner needs to size base64 content. Long runs are skipped with ``bytes.find``, so a 20 MB
checkpoint costs a few hundred Python steps per file entry, not one per byte.

:func:`scan_document` is the fast path for the usual document: one pass that measures the long
strings and hands everything else to orjson, a few Python steps per long string. It declines (None)
whenever its answer could differ from :func:`iter_scalars`, which stays the reference. When the
compiled helpers are present (``vakaudit._native.linescan``) that pass is ``compact_part`` over
pieces of the document read into a reused buffer, with the same result as the streaming Python pass
:func:`_compact`.

Reads only through the file object it is given; never writes.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import orjson

from vakaudit import _native

CHUNK_BYTES = 128 << 10  # small enough that a chunk is still in cache when it is searched
STRING_CAP = 4096

_WS = re.compile(rb"[ \t\r\n]*")
_SCALAR = re.compile(rb"[^,\]}\s]*")


class JsonStreamError(ValueError):
    """The document is not valid JSON (or ends early); carries the byte offset reached."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} at byte {offset}")
        self.offset = offset


@dataclass(frozen=True, slots=True)
class LongString:
    """A string value too long to keep: its raw byte length (between the quotes) and last bytes."""

    raw_len: int
    has_escape: bool
    tail: bytes


Path = tuple[str | int, ...]


class _Scanner:
    def __init__(self, f: IO[bytes], cap: int) -> None:
        self.f = f
        self.cap = cap
        self.buf = b""
        self.pos = 0
        self.base = 0  # file offset of buf[0]
        self.eof = False
        self.next_bs = -1  # index in buf of the next backslash at or after pos (len(buf): none); -1 = unknown

    def fill(self) -> bool:
        if self.eof:
            return False
        chunk = self.f.read(CHUNK_BYTES)
        if not chunk:
            self.eof = True
            return False
        self.base += self.pos
        self.buf = self.buf[self.pos :] + chunk
        self.pos = 0
        self.next_bs = -1
        return True

    def peek(self) -> int:
        """Next non-whitespace byte (not consumed), or -1 at end of input."""
        while True:
            m = _WS.match(self.buf, self.pos)
            self.pos = m.end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.fill():
                return -1

    def error(self, message: str) -> JsonStreamError:
        return JsonStreamError(message, self.base + self.pos)

    def expect(self, byte: int) -> None:
        if self.peek() != byte:
            raise self.error(f"expected {chr(byte)!r}")
        self.pos += 1

    def string(self, keep: bool = False) -> str | LongString:
        """The string at ``pos``; a long one as :class:`LongString` unless ``keep`` (object keys)."""
        self.pos += 1  # opening quote
        cap = float("inf") if keep else self.cap
        parts: list[bytes] = []
        kept = 0
        total = 0
        escaped = False
        tail = b""
        while True:
            # the next quote or backslash, by two memchr-speed finds; the backslash position is kept
            # until pos passes it, so many short strings do not rescan a backslash-free buffer
            buf = self.buf
            n = len(buf)
            q = buf.find(b'"', self.pos)
            if q < 0:
                q = n
            bs = self.next_bs
            if bs < self.pos:
                bs = buf.find(b"\\", self.pos)
                if bs < 0:
                    bs = n
                self.next_bs = bs
            end = q if q < bs else bs
            seg_len = end - self.pos
            if seg_len:
                total += seg_len
                tail = (tail + buf[max(self.pos, end - 8) : end])[-8:]
                if kept <= cap:
                    parts.append(buf[self.pos : end])
                    kept += seg_len
            if end == n:
                self.pos = end
                if not self.fill():
                    raise self.error("unterminated string")
                continue
            if self.buf[end] == 0x22:  # closing quote
                self.pos = end + 1
                break
            while end + 1 >= len(self.buf):  # a backslash: keep it with the byte it escapes
                self.pos = end
                if not self.fill():
                    raise self.error("unterminated escape")
                end = self.pos
            pair = self.buf[end : end + 2]
            escaped = True
            total += 2
            tail = (tail + pair)[-8:]
            if kept <= cap:
                parts.append(pair)
                kept += 2
            self.pos = end + 2
        if total > cap:
            return LongString(total, escaped, tail)
        try:
            return orjson.loads(b'"' + b"".join(parts) + b'"')
        except orjson.JSONDecodeError as exc:
            raise self.error(f"bad string ({exc})") from None

    def scalar(self) -> Any:
        while True:
            m = _SCALAR.match(self.buf, self.pos)
            if m.end() < len(self.buf) or self.eof:
                break
            if not self.fill():
                break
        token = m.group()
        self.pos = m.end()
        try:
            return orjson.loads(token)
        except orjson.JSONDecodeError:
            raise self.error(f"bad token {token[:20]!r}") from None


def iter_scalars(f: IO[bytes], cap: int = STRING_CAP) -> Iterator[tuple[Path, Any]]:
    """``(path, value)`` for every scalar of one JSON document read from ``f``; empty containers yield
    ``(path, {})`` / ``(path, [])``. Raises :class:`JsonStreamError` on malformed or truncated input,
    after yielding everything before the fault."""
    s = _Scanner(f, cap)
    path: list[str | int] = []
    # stack of containers: True = object, False = array
    stack: list[bool] = []
    c = s.peek()
    if c == -1:
        raise s.error("empty document")
    while True:
        c = s.peek()
        if c == 0x7B:  # {
            s.pos += 1
            if s.peek() == 0x7D:
                s.pos += 1
                yield tuple(path), {}
            else:
                stack.append(True)
                key = s.string(keep=True) if s.peek() == 0x22 else None
                if not isinstance(key, str):
                    raise s.error("expected a key")
                s.expect(0x3A)
                path.append(key)
                continue
        elif c == 0x5B:  # [
            s.pos += 1
            if s.peek() == 0x5D:
                s.pos += 1
                yield tuple(path), []
            else:
                stack.append(False)
                path.append(0)
                continue
        elif c == 0x22:
            yield tuple(path), s.string()
        elif c == -1:
            raise s.error("unexpected end of document")
        else:
            yield tuple(path), s.scalar()
        # after a value: close containers or move to the next member
        while True:
            if not stack:
                if s.peek() != -1:
                    raise s.error("trailing data after the document")
                return
            c = s.peek()
            if c == 0x2C:  # ,
                s.pos += 1
                if stack[-1]:
                    key = s.string(keep=True) if s.peek() == 0x22 else None
                    if not isinstance(key, str):
                        raise s.error("expected a key")
                    s.expect(0x3A)
                    path[-1] = key
                else:
                    path[-1] = int(path[-1]) + 1
                break
            if c == (0x7D if stack[-1] else 0x5D):
                s.pos += 1
                stack.pop()
                path.pop()
                continue
            if c == -1:
                raise s.error("unexpected end of document")
            raise s.error("expected ',' or a closing bracket")


def base64_decoded_len(value: str | LongString) -> int | None:
    """Decoded byte size of standard padded base64, from its length and padding only."""
    if isinstance(value, LongString):
        if value.has_escape:
            return None
        n, tail = value.raw_len, value.tail
    elif isinstance(value, str):
        n, tail = len(value), value[-2:].encode("ascii", "replace")
    else:
        return None
    if n % 4:
        return None
    return n // 4 * 3 - tail[-2:].count(b"=")


def string_len(value: Any) -> int | None:
    """Byte length of a string value as stored (UTF-8 for short strings, raw JSON bytes for long ones)."""
    if isinstance(value, LongString):
        return value.raw_len
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    return None


# --------------------------------------------------------------------------- one-pass fast path

COMPACT_LIMIT = 1 << 20  # most bytes of a document kept outside its long strings (else: stream it)
PIECE_BYTES = 1 << 20  # what the compiled pass reads at a time
# the longest open string the compiled pass carries from piece to piece; a document with a longer
# one is declined (the streaming scanner measures it in bounded memory) and no buffer over
# KEPT_BUFFER_BYTES is kept for the next document
CARRY_LIMIT = 8 << 20
KEPT_BUFFER_BYTES = 4 * PIECE_BYTES


@functools.cache
def _plain_run(cap: int) -> re.Pattern[bytes]:
    """A run of bytes outside strings and of strings of at most ``min(cap, 256)`` bytes without
    escapes (a long string costs the regex 256 bytes, then two memchr-speed finds).

    Plain greedy quantifiers only: nothing follows the run, so the regex never backtracks into it
    and the match ends where a possessive one would; possessive quantifiers and atomic groups match
    wrongly on early CPython 3.11 releases (3.11.2 ends this run one byte late)."""
    return re.compile(rb'[^"]*(?:"[^"\\]{0,%d}"[^"]*)*' % min(cap, 256))


_MARK = "\x00"  # placeholder strings start with it; no kept string of the document may


def scan_scalars(
    f: IO[bytes], cap: int = STRING_CAP, limit: int = COMPACT_LIMIT
) -> list[tuple[Path, Any]] | None:
    """What :func:`iter_scalars` yields for a well-formed document, from one cheaper pass; or None.

    The events of :func:`scan_document`'s tree, in document order. None (read the file again with
    :func:`iter_scalars`) whenever :func:`scan_document` declines.
    """
    doc = scan_document(f, cap, limit)
    return None if doc is None else _walk(*doc)


def scan_document(
    f: IO[bytes], cap: int = STRING_CAP, limit: int = COMPACT_LIMIT
) -> tuple[Any, list[LongString]] | None:
    """The document as a tree in which each string longer than ``cap`` bytes is a placeholder (see
    :func:`long_value`), and the measures of those strings; or None.

    One pass over the file measures every long string (as :class:`LongString`, never holding it)
    and keeps everything else: a compact copy of the document that orjson parses. None (read the
    file again with :func:`iter_scalars`) whenever the answer could differ from the streaming
    scanner's: a document that does not parse (whose findings need the fault's offset), a duplicate
    key, a long key, a compact copy over ``limit`` bytes, a string starting with ``\\u0000``. The file
    object needs ``readinto``.
    """
    compact = _compact_pieces(f, cap, limit) if _native.linescan is not None else _compact(f, cap, limit)
    if compact is None:
        return None
    doc, longs = compact
    try:
        tree = orjson.loads(doc)
        # orjson keeps only the last of duplicate keys; the streaming scanner yields each. A document
        # that is exactly orjson's own writing of its tree (vak writes compact serde_json, which is)
        # has none; a long key shows as a placeholder followed by ':'. Any other: check key by key.
        if _canonical(tree) != doc or (longs and _LONG_KEY.search(doc)):
            json.loads(doc, object_pairs_hook=_plain_keys)
    except (ValueError, _DeclineError, RecursionError):
        return None
    return tree, longs


_LONG_KEY = re.compile(rb'"\\u0000\d+"\s*:')


def _canonical(tree: Any) -> bytes | None:
    try:
        return orjson.dumps(tree)
    except TypeError:  # orjson reads integers and nesting it does not write
        return None


def long_value(value: Any, longs: list[LongString]) -> Any:
    """A tree value of :func:`scan_document` as :func:`iter_scalars` yields it (placeholders resolved)."""
    if type(value) is str and value.startswith(_MARK):
        return longs[int(value[1:])]
    return value


class _DeclineError(Exception):
    pass


def _plain_keys(pairs: list[tuple[str, Any]]) -> None:
    """No duplicate key and no long key (a placeholder) in one object, else the fast path declines."""
    keys = {k for k, _ in pairs}
    if len(keys) != len(pairs) or any(k.startswith(_MARK) for k in keys):
        raise _DeclineError


def _compact(f: IO[bytes], cap: int, limit: int) -> tuple[bytes, list[LongString]] | None:
    """The document with every string over ``cap`` raw bytes replaced by ``"\\u0000<n>"``, and the
    measures of those strings; None on a truncated string or when the copy would exceed ``limit``."""
    out: list[bytes] = []
    size = 0
    longs: list[LongString] = []
    plain_run = _plain_run(cap).match
    block = bytearray(CHUNK_BYTES)  # read into the same buffer: no page faults of fresh chunks

    def read() -> bytearray:
        n = f.readinto(block)  # type: ignore[attr-defined]
        return block if n == len(block) else block[: n or 0]

    buf = read()
    pos = 0
    next_bs = -1  # position of the chunk's next backslash at or after pos (len(buf): none; -1: unknown)
    while buf:
        # structure and short plain strings, kept as they are by one regex match
        q = plain_run(buf, pos).end()  # type: ignore[union-attr]
        out.append(buf[pos:q])
        size += q - pos
        if size > limit:
            return None
        if q == len(buf):
            buf = read()
            pos = 0
            next_bs = -1
            continue
        # a long string: its closing quote by memchr; the chunk's next backslash is looked up once
        s = q + 1
        e = buf.find(b'"', s)
        if next_bs < s:
            next_bs = buf.find(b"\\", s)
            if next_bs < 0:
                next_bs = len(buf)
        if 0 <= e < next_bs:  # no escape, ends in this chunk: the common case (base64 content)
            pos = e + 1
            if e - s > cap:
                out.append(b'"\\u0000%d"' % len(longs))
                longs.append(LongString(e - s, False, bytes(buf[max(s, e - 8) : e])))
                size += 16
            else:
                out.append(buf[q:pos])
                size += pos - q
            if size > limit:
                return None
            continue
        # otherwise stretch by stretch: between escapes, across chunks
        parts: list[bytes] = []
        raw_len = 0
        escaped = False
        tail = b""
        s = q + 1
        while True:
            e = buf.find(b'"', s)
            end = len(buf) if e < 0 else e
            bs = buf.find(b"\\", s, end)
            if bs >= 0:
                end = bs + 2  # the backslash and the byte it escapes
                escaped = True
            stop = min(end, len(buf))
            raw_len += stop - s
            tail = (tail + bytes(buf[max(s, stop - 8) : stop]))[-8:]  # never a copy of the whole string
            if raw_len <= cap:
                parts.append(buf[s:stop])
            if bs >= 0 and end > len(buf):  # a backslash ends the chunk: its byte is in the next
                buf = read()
                next_bs = -1
                if not buf:
                    return None
                seg = bytes(buf[:1])
                raw_len += 1
                tail = (tail + seg)[-8:]
                if raw_len <= cap:
                    parts.append(seg)
                s = 1
            elif bs >= 0:
                s = end
            elif e < 0:
                buf = read()
                next_bs = -1
                if not buf:
                    return None  # unterminated string
                s = 0
            else:
                pos = e + 1
                break
        if raw_len > cap:
            out.append(b'"\\u0000%d"' % len(longs))
            longs.append(LongString(raw_len, escaped, tail))
            size += 16
        else:
            raw = b"".join(parts)
            if raw.startswith(b"\\u0000"):
                return None
            out.append(b'"' + raw + b'"')
            size += raw_len + 2
        if size > limit:
            return None
    return b"".join(out), longs


_pieces = threading.local()  # .buf: the bytearray a thread reads documents into (reused: no page faults)


def _compact_pieces(f: IO[bytes], cap: int, limit: int) -> tuple[bytes, list[LongString]] | None:
    """What :func:`_compact` gives, from the compiled pass over pieces of about ``PIECE_BYTES`` (each
    still in cache when it is scanned). A piece ends before a string it does not close; those bytes
    start the next piece, which reads at least as many new bytes as it carries, so a long string is
    scanned about twice at most. Every byte of the file is read once, through ``f``."""
    compact_part = _native.linescan.compact_part  # type: ignore[union-attr]
    buf: bytearray = getattr(_pieces, "buf", None) or bytearray(PIECE_BYTES)
    out: list[bytes] = []
    longs: list[LongString] = []
    size = 0
    have = 0  # bytes carried at the start of buf: an open string
    try:
        while True:
            want = max(PIECE_BYTES, have)
            if len(buf) < have + want:
                buf.extend(bytes(have + want - len(buf)))
            with memoryview(buf) as view, view[have : have + want] as free:
                got = f.readinto(free)  # type: ignore[attr-defined]
            n = have + (got or 0)
            # the measures come as LongString; an open string's bytes are moved to the start of buf
            part = compact_part(buf, n, cap, limit, len(longs), size, not got, LongString)
            if part is None:
                return None
            doc, measures, have, size = part
            if have > CARRY_LIMIT:
                return None
            if measures and type(measures[0]) is tuple:  # LongString's layout is not the one C fills
                measures = [LongString(*m) for m in measures]
            out.append(doc)
            longs += measures
            if not got:
                return b"".join(out), longs
    finally:
        _pieces.buf = buf if len(buf) <= KEPT_BUFFER_BYTES else None


def _walk(tree: Any, longs: list[LongString]) -> list[tuple[Path, Any]]:
    """``(path, scalar)`` of a parsed tree in document order, as :func:`iter_scalars` yields them."""
    events: list[tuple[Path, Any]] = []
    path: list[str | int] = []
    # a stack of iterators over (key, value) pairs; None marks where a container's path key ends
    stack: list[Iterator[tuple[str | int, Any]]] = []
    node = tree
    while True:
        t = type(node)
        if t is dict:
            if node:
                stack.append(iter(node.items()))
            else:
                events.append((tuple(path), {}))
        elif t is list:
            if node:
                stack.append(enumerate(node))
            else:
                events.append((tuple(path), []))
        elif t is str and node.startswith(_MARK):
            events.append((tuple(path), longs[int(node[1:])]))
        else:
            events.append((tuple(path), node))
        # the next value: the next member of the innermost container that has one
        while stack:
            nxt = next(stack[-1], None)
            if nxt is not None:
                if len(path) == len(stack):
                    path[-1] = nxt[0]
                else:
                    path.append(nxt[0])
                node = nxt[1]
                break
            stack.pop()
            if len(path) > len(stack):
                path.pop()
        else:
            return events
