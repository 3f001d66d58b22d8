"""Split a byte stream into physical lines, holding no line longer than :data:`MAX_LINE_BYTES`.

Every line reader of vakaudit frames through :func:`iter_bounded_lines` (or, for the compiled fast
paths, applies :data:`MAX_LINE_BYTES` at its one framing point), so a file with no LF at all (a sparse
or zero-filled file, a crash) or one huge line costs one read chunk plus :data:`LONG_LINE_PREFIX`
bytes, not the line. A longer line comes out as a :class:`LongLine`: its first bytes, its full length
and the CRC-32 and SHA-256 of all its bytes (computed while it streams past), so callers report
``line_too_long`` with the line number and offset and can still prove or seal it.

No I/O here except reading through the callable the caller passes.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Iterator

__all__ = ["MAX_LINE_BYTES", "LONG_LINE_PREFIX", "LongLine", "LongLineBuilder", "iter_bounded_lines"]

#: The longest line any vakaudit reader holds in memory (and the ``line_too_long`` threshold).
MAX_LINE_BYTES = 16 * 1024 * 1024
#: How much of a longer line is kept (its envelope fields are all in the first bytes vak writes).
LONG_LINE_PREFIX = 4096


class LongLine(bytes):
    """The first :data:`LONG_LINE_PREFIX` bytes of a line longer than the bound; the rest was not kept.

    ``length``: the line's full length in bytes (LF excluded); ``crc32`` and ``sha256`` (hex digest):
    of all those bytes; ``sha256_lf``: of those bytes and an LF after them. Being ``bytes``, it fails
    to parse as JSON wherever a caller does not look for it, so an unaware reader sees a bad line,
    never a truncated good one.
    """

    length: int
    crc32: int
    sha256: str
    sha256_lf: str


class LongLineBuilder:
    """Takes the pieces of one over-long line as they stream past; :meth:`line` is its :class:`LongLine`."""

    __slots__ = ("_crc", "_prefix", "_sha", "length")

    def __init__(self, head: bytes = b"") -> None:
        self._prefix = head[:LONG_LINE_PREFIX]
        self._crc = zlib.crc32(head)
        self._sha = hashlib.sha256(head)
        self.length = len(head)

    def add(self, piece: bytes) -> None:
        if len(self._prefix) < LONG_LINE_PREFIX:
            self._prefix += piece[: LONG_LINE_PREFIX - len(self._prefix)]
        self._crc = zlib.crc32(piece, self._crc)
        self._sha.update(piece)
        self.length += len(piece)

    @property
    def prefix(self) -> bytes:
        return self._prefix

    def sha256_with(self, suffix: bytes) -> str:
        """Hex SHA-256 of the line's bytes followed by ``suffix`` (its terminator, say)."""
        h = self._sha.copy()
        h.update(suffix)
        return h.hexdigest()

    def line(self) -> LongLine:
        out = LongLine(self._prefix)
        out.length = self.length
        out.crc32 = self._crc
        out.sha256 = self._sha.hexdigest()
        out.sha256_lf = self.sha256_with(b"\n")
        return out


def iter_bounded_lines(
    read: Callable[[int], bytes],
    size: int | None = None,
    *,
    chunk_bytes: int = 1 << 20,
    max_line: int = MAX_LINE_BYTES,
    tap: Callable[[bytes], None] | None = None,
) -> Iterator[tuple[int, bytes, bool]]:
    """Yield ``(offset_bytes, raw, terminated)`` for each physical line ``read`` returns.

    ``read(n)`` returns up to ``n`` bytes (b"" at the end); ``size``: stop after that many bytes (the
    size the file had when it was opened: a writer appending meanwhile cannot make a reader see a
    half-written line; a file that shrank ends early). ``raw`` excludes the LF and keeps a CR; a final
    fragment without LF has ``terminated=False``. A line longer than ``max_line`` is a
    :class:`LongLine`. ``tap`` receives every chunk read, in order (a running digest of the file).
    """
    remaining = size
    base = 0  # file offset of chunk[0]
    pieces: list[bytes] = []  # the start of a line begun in an earlier chunk
    held = 0  # bytes in pieces
    start = 0  # file offset of the current line
    long: LongLineBuilder | None = None  # the current line is over the bound: streamed, not held
    while remaining is None or remaining > 0:
        chunk = read(chunk_bytes if remaining is None else min(chunk_bytes, remaining))
        if not chunk:
            break
        if tap is not None:
            tap(chunk)
        if remaining is not None:
            remaining -= len(chunk)
        n = len(chunk)
        pos = 0
        while pos < n:
            end = chunk.find(b"\n", pos)
            stop = n if end < 0 else end
            if long is not None:
                long.add(chunk[pos:stop])
                if end < 0:
                    break
                yield start, long.line(), True
                long = None
            elif held + stop - pos > max_line:  # the line just passed the bound: stream the rest
                long = LongLineBuilder(b"".join(pieces) + chunk[pos:stop])
                pieces, held = [], 0
                if end < 0:
                    break
                yield start, long.line(), True
                long = None
            elif end < 0:
                pieces.append(chunk[pos:])
                held += n - pos
                break
            elif pieces:
                pieces.append(chunk[pos:end])
                yield start, b"".join(pieces), True
                pieces, held = [], 0
            else:
                yield start, chunk[pos:end], True
            pos = end + 1
            start = base + pos
        base += n
    if long is not None:
        yield start, long.line(), False
    elif pieces:
        yield start, b"".join(pieces), False
