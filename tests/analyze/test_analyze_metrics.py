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
    # scan tables are views over Parquet; only the one-row-per-kind write_cards registry is a table
    assert kinds["entries"] == "VIEW" and kinds["files"] == "VIEW"
    assert [n for n, t in kinds.items() if t != "VIEW"] == ["write_cards"]
    plan = "\n".join(r[1] for r in con.execute("EXPLAIN SELECT count(*) FROM entries").fetchall())
    assert "PARQUET" in plan.upper()


def test_clean_value_rounds_to_six_significant_digits() -> None:
    assert clean_value(1 / 3) == 0.333333
    assert clean_value(123456789.0) == 123457000.0
    assert clean_value(float("nan")) is None
    assert clean_value(7) == 7
