"""store_db on a real SQLite file with the v1 schema of home.md §8.1, in WAL mode.

The reader must leave every byte and mtime alone and create no -wal/-shm file.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from artifact_kind_helpers import run_reader

V1_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE entries(
  entry_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, project_hash TEXT NOT NULL, parent_id TEXT,
  ts TEXT NOT NULL, kind TEXT NOT NULL, role TEXT, provider TEXT, model TEXT, tool_name TEXT,
  content_text TEXT NOT NULL DEFAULT '', is_error INTEGER NOT NULL DEFAULT 0);
CREATE INDEX idx_entries_session ON entries(session_id);
CREATE INDEX idx_entries_project ON entries(project_hash);
CREATE INDEX idx_entries_kind ON entries(kind);
CREATE INDEX idx_entries_ts ON entries(ts);
CREATE INDEX idx_entries_role ON entries(role);
CREATE VIRTUAL TABLE entries_fts USING fts5(entry_id UNINDEXED, session_id UNINDEXED,
  project_hash UNINDEXED, ts UNINDEXED, kind UNINDEXED, role UNINDEXED, content,
  tokenize='porter unicode61');
"""

ROWS = [  # (entry_id, kind, role, content_text): the header row has no text, so no FTS row
    ("e1", "header", None, ""),
    ("e2", "message", "user", "fix the failing parser test"),
    ("e3", "message", "assistant", "[tool:bash] cargo test"),
]


def _insert(con: sqlite3.Connection, rows) -> None:
    for entry_id, kind, role, text in rows:
        con.execute(
            "INSERT INTO entries VALUES (?,?,?,?,?,?,?,?,?,?,?,0)",
            (
                entry_id,
                "s1",
                "9c1d3e5f7a2b4c6d",
                None,
                "2026-08-24T09:15:02+00:00",
                kind,
                role,
                None,
                None,
                None,
                text,
            ),
        )
        if text.strip():
            con.execute(
                "INSERT INTO entries_fts VALUES (?,?,?,?,?,?,?)",
                (entry_id, "s1", "9c1d3e5f7a2b4c6d", "2026-08-24T09:15:02+00:00", kind, role or "", text),
            )
        con.commit()  # v1 commits every insert


def _make_db(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.executescript(V1_SCHEMA)
    con.execute("BEGIN")
    con.execute("INSERT INTO meta VALUES ('version', '1')")
    _insert(con, ROWS)
    return con


def _state(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), os.stat(p).st_mtime_ns) for p in sorted(directory.iterdir())}


def test_closed_wal_db_rows_and_no_companion_files(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    _make_db(cache / "store.db").close()  # last close checkpoints and removes -wal/-shm
    before = _state(cache)
    assert list(before) == ["store.db"]

    rows, findings = run_reader("store_db", tmp_path, "cache/store.db")

    assert _state(cache) == before  # same names, bytes and mtimes: nothing created or touched
    assert findings == []
    by_name = {r["object_name"]: r for r in rows}
    assert by_name["entries"]["row_count"] == 3
    assert by_name["meta"]["row_count"] == 1
    assert by_name["entries_fts"]["object_type"] == "virtual"
    assert by_name["entries_fts_content"]["object_type"] == "shadow"
    assert by_name["entries_fts_content"]["tbl_name"] == "entries_fts"
    assert by_name["entries_fts_content"]["row_count"] == 2  # two entries with non-blank text
    assert by_name["entries_fts_docsize"]["row_count"] == 2
    for index in (
        "idx_entries_session",
        "idx_entries_project",
        "idx_entries_kind",
        "idx_entries_ts",
        "idx_entries_role",
    ):
        assert (by_name[index]["object_type"], by_name[index]["tbl_name"], by_name[index]["row_count"]) == (
            "index",
            "entries",
            None,
        )
    assert {r["size_method"] for r in rows} == {"dbstat"}
    assert {r["schema_version"] for r in rows} == {"1"}
    assert {r["rel_path"] for r in rows} == {"cache/store.db"}
    assert {r["home_scope"] for r in rows} == {"cache"}
    assert {r["wal_bytes"] for r in rows} == {None}  # no -wal file beside it
    # every page of the file belongs to exactly one row: b-trees + freelist = the file size
    assert sum(r["size_bytes"] for r in rows) == (cache / "store.db").stat().st_size


def test_live_wal_db_is_read_without_touching_wal_or_shm(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    writer = _make_db(cache / "store.db")
    try:
        writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # three entries now in the main file
        _insert(writer, [("e4", "message", "user", "and the lexer"), ("e5", "receipt", None, "")])
        before = _state(cache)
        assert set(before) == {"store.db", "store.db-wal", "store.db-shm"}

        rows, findings = run_reader("store_db", tmp_path, "cache/store.db")
        rows_wal, _ = run_reader("store_db", tmp_path, "cache/store.db-wal")
        rows_shm, _ = run_reader("store_db", tmp_path, "cache/store.db-shm")

        assert _state(cache) == before
        assert findings == []
        assert (rows_wal, rows_shm) == ([], [])
        # immutable=1 sees only the main file: the two rows still in the WAL are not counted
        by_name = {r["object_name"]: r for r in rows}
        assert by_name["entries"]["row_count"] == 3
        assert {r["wal_bytes"] for r in rows} == {(cache / "store.db-wal").stat().st_size}
        assert rows[0]["wal_bytes"] > 0
    finally:
        writer.close()


def test_a_file_that_is_not_sqlite_is_a_finding(tmp_path: Path) -> None:
    (tmp_path / "store.db").write_bytes(b"not a database at all" * 100)
    rows, findings = run_reader("store_db", tmp_path, "store.db")
    assert rows == []
    assert [f.code for f in findings] == ["unreadable_file"]
