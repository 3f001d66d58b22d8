"""The metric registry: one .sql file per metric, each with its provenance header, all run by analyze."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from vakaudit.analyze import metric_names, open_scan
from vakaudit.analyze.metrics import clean_value, load_metrics
from vakaudit.errors import HomeNotFoundError, ScanError


def test_every_query_file_is_one_metric_with_provenance() -> None:
    files = sorted(
        p.name[:-4]
        for p in resources.files("vakaudit.analyze").joinpath("queries").iterdir()
        if p.name.endswith(".sql")
    )
    assert sorted(metric_names()) == files
    for spec in load_metrics():
        assert spec.title and spec.measured, spec.name
        body = "\n".join(line for line in spec.sql.splitlines() if not line.lstrip().startswith("--"))
        assert ";" not in body.strip().rstrip(";"), f"{spec.name}.sql holds more than one statement"


def test_analysis_holds_every_metric(tiny_analysis) -> None:
    assert list(tiny_analysis.metrics) == metric_names()
    for name in metric_names():
        assert tiny_analysis[name].name == name


def test_open_scan_refuses_what_is_not_a_scan(tmp_path: Path) -> None:
    with pytest.raises(HomeNotFoundError):
        open_scan(tmp_path / "missing")
    with pytest.raises(ScanError):
        open_scan(tmp_path)


def test_views_read_parquet_lazily(tiny_scan: Path) -> None:
    con = open_scan(tiny_scan)
    kinds = {
        r[0]: r[1]
        for r in con.execute("SELECT table_name, table_type FROM information_schema.tables").fetchall()
    }
    # scan tables are views over Parquet; the only tables are the one-row-per-kind write_cards
    # registry and, for the tables this scan has no rows of, their empty schemas (no rows loaded)
    assert kinds["entries"] == "VIEW" and kinds["files"] == "VIEW"
    tables = [n for n, t in kinds.items() if t != "VIEW"]
    assert "write_cards" in tables
    empty = [n for n in tables if n != "write_cards"]
    assert all(n.startswith("_empty_") and kinds[n[len("_empty_"):]] == "VIEW" for n in empty), empty
    assert all(con.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] == 0 for n in empty)
    plan = "\n".join(r[1] for r in con.execute("EXPLAIN SELECT count(*) FROM entries").fetchall())
    assert "PARQUET" in plan.upper()


def test_clean_value_rounds_to_six_significant_digits() -> None:
    assert clean_value(1 / 3) == 0.333333
    assert clean_value(123456789.0) == 123457000.0
    assert clean_value(float("nan")) is None
    assert clean_value(7) == 7


def test_metrics_on_cursors_give_what_one_connection_gives(tiny_scan: Path, monkeypatch) -> None:  # noqa: ANN001
    import threading

    import vakaudit.analyze as analyze_mod
    from vakaudit.analyze import analyze

    monkeypatch.setattr(analyze_mod, "METRIC_THREADS", 1)
    serial = analyze(tiny_scan).to_dict()
    seen: set[int] = set()
    run = analyze_mod.run_metric

    def recorded(con, name):  # noqa: ANN001, ANN202 - run_metric's own arguments and result
        seen.add(threading.get_ident())
        return run(con, name)

    monkeypatch.setattr(analyze_mod, "METRIC_THREADS", 2)
    monkeypatch.setattr(analyze_mod, "run_metric", recorded)
    monkeypatch.setattr(analyze_mod.os, "cpu_count", lambda: 2)
    threaded = analyze(tiny_scan).to_dict()
    assert threading.get_ident() not in seen and seen  # every metric ran on the pool's cursors
    assert threaded == serial


def test_no_query_or_view_file_spells_the_ledger_kinds_name() -> None:
    from vakaudit.artifacts import LEDGER_KIND

    root = resources.files("vakaudit.analyze")
    files = [root.joinpath("base_views.sql"), *(p for p in root.joinpath("queries").iterdir() if p.name.endswith(".sql"))]
    assert len(files) > 10
    for f in files:
        assert LEDGER_KIND not in f.read_text(encoding="utf-8"), f.name


def test_ledger_kind_macro_and_ledger_file_view_name_the_kind_defined_in_python(tiny_scan: Path, tiny_home: Path) -> None:
    from vakaudit.artifacts import LEDGER_KIND

    con = open_scan(tiny_scan)
    try:
        assert con.execute("SELECT ledger_kind()").fetchone()[0] == LEDGER_KIND
        files = con.execute("SELECT rel_path, kind FROM ledger_file ORDER BY rel_path").fetchall()
    finally:
        con.close()
    ledgers = sorted(p.relative_to(tiny_home).as_posix() for p in tiny_home.glob("**/sessions/*/*.jsonl"))
    assert [r[0] for r in files] == ledgers and {r[1] for r in files} == {LEDGER_KIND}


def test_sidecar_growth_lists_the_sidecars_of_a_home_without_session_ledgers(tmp_path: Path) -> None:
    # regression: the query excluded the ledger by the kind of any ledger_file row, NULL in such a home,
    # so it listed nothing at all
    from vakaudit.analyze import analyze
    from vakaudit.scan import scan_home

    home = tmp_path / "home"
    home.mkdir()
    rows = b'{"ts":"2026-08-17T10:00:00Z","provider":"p","model":"m","cost_usd":0.1}\n' * 3
    (home / "cost-log.jsonl").write_bytes(rows)
    scan_home(home, out=tmp_path / "scan", jobs=1)
    got = analyze(tmp_path / "scan")["sidecar_growth"].rows
    assert [(r["artifact"], r["rows"], r["size_bytes"]) for r in got] == [("cost_log", 3, len(rows))]
    assert got[0]["rows_per_turn"] is None  # no intents: no turns to divide by
