"""Hostile SQLite in a home: odd folder names, a view where vak writes a table, endless queries, big tables.

vakaudit opens only a private copy of a home's database, and bounds every read of it.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from tests.hostile_homes import tiny_copy, verify_findings
from vakaudit._sqlite import open_private_copy

ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)"


def _tree(home: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(home):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            out[str(p.relative_to(home))] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture
def home(tmp_path):
    return tiny_copy(tmp_path / "home")


@pytest.mark.parametrize("folder", ["evil#frag", "q?mode=rwc&x=", "a%20b", "semi;colon"])
def test_verify_and_scan_create_nothing_beside_a_store_db_in_an_odd_folder(home, tmp_path, folder) -> None:
    from vakaudit.scan import scan_home

    d = home / "cache" / folder
    d.mkdir()
    (d / "store.db").write_bytes((home / "cache" / "store.db").read_bytes())
    before = _tree(home)
    verify_findings(home)
    scan_home(home, tmp_path / "scan", jobs=1)
    assert _tree(home) == before  # no cache/evil, no -wal/-shm/-journal, no changed mtime


def _store_with_entries_view(path: Path, view_sql: str) -> None:
    path.unlink()
    con = sqlite3.connect(path)
    con.executescript(f"CREATE TABLE meta(key TEXT, value TEXT); CREATE VIEW entries AS {view_sql};")
    con.commit()
    con.close()


def test_entries_view_with_endless_recursive_query_is_database_not_table(home) -> None:
    _store_with_entries_view(home / "cache" / "store.db",
                             f"{ENDLESS} SELECT x AS entry_id, 's' AS session_id, 'message' AS kind FROM c")  # fmt: skip
    found = [f for f in verify_findings(home) if f["rel_path"] == "cache/store.db"]
    assert [(f["code"], f["expected"], f["actual"]) for f in found] == [("database_not_table", "table", "view")]


def test_verify_memory_stays_bounded_on_an_endless_entries_view(home, tmp_path) -> None:
    from tests.hostile_homes import run_measured

    _store_with_entries_view(home / "cache" / "store.db",
                             f"{ENDLESS} SELECT x AS entry_id, 's' AS session_id, 'message' AS kind FROM c")  # fmt: skip
    rc, peak_kib, _out, err = run_measured("verify", str(home), "--json", cwd=tmp_path)  # that process's own peak
    assert rc in (0, 1), err.decode()
    assert peak_kib < 400 * 1024  # it went past 4 GiB before


def test_a_query_past_its_time_budget_is_interrupted_and_flagged(tmp_path) -> None:
    db_path = tmp_path / "x.db"
    con = sqlite3.connect(db_path)
    con.execute("CREATE TABLE t(x)")
    con.commit()
    con.close()
    with open_private_copy(db_path, budget_s=0.2) as db:
        with pytest.raises(sqlite3.OperationalError, match="interrupted"):
            db.rows(f"{ENDLESS} SELECT x FROM c WHERE x < 0")  # runs forever without a row
        assert db.timed_out


def test_rows_past_the_row_limit_are_flagged_and_not_read(tmp_path) -> None:
    db_path = tmp_path / "x.db"
    con = sqlite3.connect(db_path)
    con.execute("CREATE TABLE t(x)")
    con.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(25)])
    con.commit()
    con.close()
    with open_private_copy(db_path) as db:
        assert db.rows("SELECT x FROM t ORDER BY x", limit=25) == [(i,) for i in range(25)]
        assert not db.row_limited
        assert db.rows("SELECT x FROM t ORDER BY x", limit=10) == [(i,) for i in range(10)]
        assert db.row_limited


def test_private_copy_of_a_fifo_is_refused_without_blocking(tmp_path) -> None:
    os.mkfifo(tmp_path / "store.db")
    with pytest.raises(OSError, match="not a regular file"):
        with open_private_copy(tmp_path / "store.db"):
            pass


def test_scan_of_store_db_that_is_a_view_only_database_does_not_hang(home, tmp_path) -> None:
    from vakaudit.scan import open_scan, scan_home

    _store_with_entries_view(home / "cache" / "store.db", f"{ENDLESS} SELECT x, 's', 'k' FROM c")
    scan_home(home, tmp_path / "scan", jobs=1)
    rows = open_scan(tmp_path / "scan").table("store_db").to_pylist()
    assert {r["object_name"] for r in rows} >= {"meta"}
    assert "entries" not in {r["object_name"] for r in rows}  # a view has no b-tree
