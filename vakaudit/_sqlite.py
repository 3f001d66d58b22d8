"""Bounded reads of a SQLite database vakaudit did not write (a home's ``store.db``, a 7.0 tenant's
``refs.db`` and ``catalog.db``).

The only way vakaudit opens SQLite on a home file. The file is first copied (a read-only, no-follow,
non-blocking open of a regular file, up to the size it had when opened) into a private temporary
folder outside the home, and SQLite opens the copy: whatever the home's path holds (``#``, ``?``, a
``mode=rwc`` that would cut off ``mode=ro`` in a URI), SQLite never sees it, takes no lock in the home
and creates no ``-wal``/``-shm``/``-journal`` there. Pages still only in the home's ``-wal`` are not
seen (the copy is opened ``immutable``), unless the caller asks for them (``with_wal``: the
``-wal`` is copied the same way beside the copy, which SQLite then opens normally, in the private
folder, and reads through the log: a vak store commits in WAL mode, so its newest rows may be
there).

Every statement runs under one time budget per database (a progress handler interrupts it), and
:meth:`BoundedDb.rows` reads at most a row limit, streaming with ``fetchmany``. :meth:`BoundedDb.kind`
tells a table from a view, so a caller refuses a view where vak writes a table (a view can be an
endless recursive query). The caller turns each limit it hit into a finding.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

__all__ = ["BoundedDb", "open_private_copy", "ROW_LIMIT", "TIME_BUDGET_S"]

#: Rows read from one table of a database vakaudit did not write (vak's index holds one per entry).
ROW_LIMIT = 5_000_000
#: Seconds all statements on one such database may take together.
TIME_BUDGET_S = 60.0
_COPY_CHUNK = 1 << 20


class BoundedDb:
    """A connection to a private copy, with its time budget; records which limit stopped a read."""

    def __init__(self, con: sqlite3.Connection, budget_s: float) -> None:
        self.con = con
        self.timed_out = False
        self.row_limited = False
        deadline = time.monotonic() + budget_s

        def over_budget() -> int:
            if time.monotonic() > deadline:
                self.timed_out = True
                return 1  # SQLite aborts the statement: OperationalError "interrupted"
            return 0

        con.set_progress_handler(over_budget, 10_000)

    def kind(self, name: str) -> str | None:
        """``'table'``, ``'view'``, … for a schema object named ``name``; None when there is none."""
        row = self.con.execute("SELECT type FROM sqlite_master WHERE name = ? COLLATE NOCASE", (name,)).fetchone()
        return row[0] if row else None

    def rows(self, sql: str, params: tuple = (), limit: int = ROW_LIMIT) -> list[tuple]:
        """At most ``limit`` rows of ``sql`` (``row_limited`` set when more were there). Raises
        ``sqlite3.Error``; after an interrupt by the budget ``timed_out`` is set."""
        cur = self.con.execute(sql, params)
        out: list[tuple] = []
        try:
            while len(out) < limit:
                batch = cur.fetchmany(min(10_000, limit - len(out)))
                if not batch:
                    return out
                out.extend(batch)
            if cur.fetchone() is not None:
                self.row_limited = True
            return out
        finally:
            cur.close()


def _copy(src: Path, dest: Path) -> None:
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(src, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{src} is not a regular file")
        remaining = st.st_size
        with open(dest, "wb") as out:
            while remaining > 0:
                chunk = os.read(fd, min(_COPY_CHUNK, remaining))
                if not chunk:
                    break  # it shrank meanwhile: the copy holds what was there
                out.write(chunk)
                remaining -= len(chunk)
    finally:
        os.close(fd)


@contextmanager
def open_private_copy(path: str | os.PathLike, *, budget_s: float = TIME_BUDGET_S,
                      with_wal: bool = False) -> Iterator[BoundedDb]:
    """A :class:`BoundedDb` on a copy of the SQLite file ``path``, removed on exit; ``with_wal``:
    with the committed pages of its ``-wal`` too (see the module's text).

    Raises ``OSError`` when the file (or its ``-wal``) cannot be copied and ``sqlite3.Error`` when
    the copy does not open.
    """
    tmp = tempfile.mkdtemp(prefix="vakaudit-db-")
    try:
        copy = Path(tmp) / "copy.db"
        _copy(Path(path), copy)
        wal = Path(f"{os.fspath(path)}-wal")
        if with_wal and os.path.lexists(wal):
            _copy(wal, Path(f"{copy}-wal"))
            con = sqlite3.connect(copy, check_same_thread=False)  # the private copy: its -shm goes there
        else:
            con = sqlite3.connect(f"file:{quote(str(copy))}?mode=ro&immutable=1", uri=True, check_same_thread=False)
        try:
            yield BoundedDb(con, budget_s)
        finally:
            con.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
