"""``refs.db`` is read from a private copy: rows still only in its ``-wal`` are seen, and a path that
is not a regular file (a symlink out of the home, a FIFO) is a finding, never followed or waited on.
The databases are written here with the sqlite3 module, rows known by construction."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from vakaudit.storage.refs import REFS_TABLE, read_refs


def _db(path: Path, rows: list[tuple[str, int, int, bytes]], *, keep_open: bool = False) -> sqlite3.Connection | None:
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute(REFS_TABLE)
    con.executemany("INSERT INTO refs VALUES (?, ?, ?, ?)", rows)
    con.commit()
    if keep_open:
        return con
    con.close()
    return None


def test_rows_only_in_the_wal_are_read(tmp_path: Path) -> None:
    db = tmp_path / "refs.db"
    con = _db(db, [("doc/a", 1, 0, b"\x01" * 32), ("req/s/x", 1, 0, b"t")], keep_open=True)
    try:
        assert (tmp_path / "refs.db-wal").stat().st_size > 0  # the rows are in the log, not the file
        refs, findings = read_refs(db)
        assert findings == []
        assert refs == [("doc/a", 1, 0, b"\x01" * 32), ("req/s/x", 1, 0, b"t")]
        # nothing was created beside the database by the reader
        assert sorted(p.name for p in tmp_path.iterdir()) == ["refs.db", "refs.db-shm", "refs.db-wal"]
    finally:
        con.close()


def test_a_symlink_out_of_the_home_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.db"
    _db(outside, [("doc/secret", 1, 0, b"s")])
    home = tmp_path / "store"
    home.mkdir()
    (home / "refs.db").symlink_to(outside)
    refs, findings = read_refs(home / "refs.db", "store/refs.db")
    assert refs == []
    assert [(f.code, f.rel_path) for f in findings] == [("refs_db_unreadable", "store/refs.db")]


def test_a_fifo_is_a_finding_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "refs.db"
    os.mkfifo(fifo)
    refs, findings = read_refs(fifo)
    assert refs == [] and [f.code for f in findings] == ["refs_db_unreadable"]
