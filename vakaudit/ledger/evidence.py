"""Read-only file access to evidence (ledgers, side files): never write, lock, follow a symlink or bump an atime.

Files are opened ``O_RDONLY | O_NOFOLLOW`` and, where the kernel allows it (the caller owns the file or
is root), ``O_NOATIME``, so verifying a home leaves every timestamp of it as it was. Lines are framed
from large reads (not ``readline``) and only up to the size the file had when it was opened: a writer
appending meanwhile cannot make a verification read a half-written line.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

__all__ = ["open_evidence", "iter_framed_lines", "CHUNK_BYTES"]

CHUNK_BYTES = 1 << 20

_NOATIME = getattr(os, "O_NOATIME", 0)
_BASE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def open_evidence(path: str | os.PathLike) -> int:
    """Open ``path`` read-only without following a final symlink; returns a descriptor.

    Raises ``OSError`` (``ELOOP`` for a symlink, ``EACCES`` when unreadable, ...). Refuses anything
    but a regular file with ``IsADirectoryError``/``OSError``.
    """
    try:
        fd = os.open(path, _BASE_FLAGS | _NOATIME)
    except PermissionError:
        if not _NOATIME:
            raise
        fd = os.open(path, _BASE_FLAGS)  # O_NOATIME needs ownership: plain read-only then
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{os.fspath(path)} is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def iter_framed_lines(
    fd: int, size: int, chunk_bytes: int = CHUNK_BYTES
) -> Iterator[tuple[int, int, bytes, bool]]:
    """Yield ``(line_no, offset_bytes, raw, terminated)`` for the first ``size`` bytes of ``fd``.

    ``raw`` excludes the LF but keeps a CR (callers decide about CRLF). A final fragment without LF is
    yielded with ``terminated=False``. Memory: one chunk plus the longest line. (No mmap: a file
    truncated by someone else while mapped would kill the process with SIGBUS.)
    """
    os.lseek(fd, 0, os.SEEK_SET)
    remaining = size
    pieces: list[bytes] = []  # the start of a line that began in an earlier chunk
    start = 0  # file offset of the current line's first byte
    base = 0  # file offset of the current chunk's first byte
    line_no = 0
    while remaining > 0:
        chunk = os.read(fd, min(chunk_bytes, remaining))
        if not chunk:
            break  # the file shrank while we read it; stop at what is there
        remaining -= len(chunk)
        find = chunk.find
        pos = 0
        if pieces:
            end = find(b"\n")
            if end < 0:
                pieces.append(chunk)
                base += len(chunk)
                continue
            pieces.append(chunk[:end])
            line_no += 1
            yield line_no, start, b"".join(pieces), True
            pieces = []
            pos = end + 1
        while True:
            end = find(b"\n", pos)
            if end < 0:
                break
            line_no += 1
            yield line_no, base + pos, chunk[pos:end], True
            pos = end + 1
        if pos < len(chunk):
            pieces.append(chunk[pos:])
            start = base + pos
        base += len(chunk)
    if pieces:
        yield line_no + 1, start, b"".join(pieces), False
