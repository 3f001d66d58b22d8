"""docs/tables.md documents every view of the scan's DuckDB connection, and its example queries run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vakaudit.analyze import open_scan
from vakaudit.cli import app

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "tables.md"
SQL_BLOCK = re.compile(r"^```sql\n(.*?)\n```$", re.S | re.M)


@pytest.fixture(scope="module")
def sample_tiny_scan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vakaudit.scan import scan_home

    out = tmp_path_factory.mktemp("views-doc") / "scan"
    scan_home(ROOT / "sample_homes" / "tiny", out=out, jobs=1)
    return out


def _sections() -> dict[str, str]:
    """``## `name` `` heading -> the section's text."""
    parts = re.split(r"^## `([a-z_]+)`$", DOC.read_text(encoding="utf-8"), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_every_view_and_table_of_the_connection_is_documented(sample_tiny_scan: Path) -> None:
    con = open_scan(sample_tiny_scan)
    try:
        names = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
        names |= {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    finally:
        con.close()
    names = {n for n in names if not n.startswith("_")}  # _empty_<table>: the empty relation behind a table with no rows
    assert {"artifact_writes", "ledger_entry", "ledger_file", "ledger_turn", "write_cards"} <= names
    sections = _sections()
    assert sorted(names - set(sections)) == []
    for name in names:
        assert "```sql" in sections[name], f"{name} has no example query"


def test_every_example_query_in_the_tables_doc_runs_on_the_tiny_sample_home(sample_tiny_scan: Path) -> None:
    queries = SQL_BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert len(queries) == len(_sections())  # one example per section
    con = open_scan(sample_tiny_scan)
    try:
        for q in queries:
            con.execute(q).fetchall()  # raises on any error: the failing query is in the traceback
        # the sample home has 6 session ledgers (sample_homes/tiny/**/sessions/*/*.jsonl)
        ledger_files = con.execute(next(q for q in queries if "FROM ledger_file" in q)).fetchall()
    finally:
        con.close()
    ledgers = sorted(ROOT.joinpath("sample_homes", "tiny").glob("**/sessions/*/*.jsonl"))
    assert len(ledger_files) == len(ledgers) == 6


def test_sql_error_keeps_duckdbs_whole_message_with_candidate_bindings(sample_tiny_scan: Path) -> None:
    res = CliRunner().invoke(app, ["sql", str(sample_tiny_scan), "select turns from sessions"])
    assert res.exit_code == 2
    assert res.output.startswith("vakaudit: query failed: Binder Error")
    assert "Candidate bindings" in res.output
    assert res.output.count("vakaudit:") == 1
