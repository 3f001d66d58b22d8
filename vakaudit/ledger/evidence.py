"""Read-only file access to evidence (ledgers, side files): never write, lock, follow a symlink or bump an atime.

Files are opened ``O_RDONLY | O_NOFOLLOW`` and, where the kernel allows it (the caller owns the file or
is root), ``O_NOATIME``, so verifying a home leaves every timestamp of it as it was. Lines are framed
from large reads (not ``readline``) and only up to the size the file had when it was opened: a writer
appending meanwhile cannot make a verification read a half-written line.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Callable, Iterator

from vakaudit.ledger.framing import iter_bounded_lines

__all__ = ["open_evidence", "iter_framed_lines", "CHUNK_BYTES"]

CHUNK_BYTES = 1 << 20

_NOATIME = getattr(os, "O_NOATIME", 0)
_BASE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def open_evidence(path: str | os.PathLike) -> int:
    """Open ``path`` read-only without following a final symlink; returns a descriptor.

    Raises ``OSError`` (``ELOOP`` for a symlink, ``EACCES`` when unreadable, ...). Refuses anything
    but a regular file with ``IsADirectoryError``/``OSError``. ``~`` is expanded.
    """
    path = os.path.expanduser(os.fspath(path))
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
    fd: int, size: int, chunk_bytes: int = CHUNK_BYTES, tap: Callable[[bytes], None] | None = None
) -> Iterator[tuple[int, int, bytes, bool]]:
    """Yield ``(line_no, offset_bytes, raw, terminated)`` for the first ``size`` bytes of ``fd``.

    ``raw`` excludes the LF but keeps a CR (callers decide about CRLF). A final fragment without LF is
    yielded with ``terminated=False``; a line over :data:`~vakaudit.ledger.framing.MAX_LINE_BYTES` as a
    :class:`~vakaudit.ledger.framing.LongLine`. ``tap`` sees every chunk read. Memory: one chunk plus
    the longest line held. (No mmap: a file truncated by someone else while mapped would kill the
    process with SIGBUS.)
    """
    os.lseek(fd, 0, os.SEEK_SET)
    line_no = 0
    for off, raw, terminated in iter_bounded_lines(
        functools.partial(os.read, fd), size, chunk_bytes=chunk_bytes, tap=tap
    ):
        line_no += 1
        yield line_no, off, raw, terminated

