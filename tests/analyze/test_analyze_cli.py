"""``vakaudit analyze`` and ``vakaudit sql`` through typer's CliRunner, on real scans."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from vakaudit.cli import app


def _ledger_lines(home: Path) -> int:
    n = 0
    for p in home.rglob("*.jsonl"):
        if p.parent.parent.name == "sessions":
            n += sum(1 for line in p.read_bytes().split(b"\n") if line.strip())
    return n


def test_analyze_json_of_a_scan(tiny_scan: Path, tiny_analysis) -> None:
    res = CliRunner().invoke(app, ["analyze", str(tiny_scan), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc.pop("schema_version") == "1.1"
    assert doc == json.loads(tiny_analysis.to_json())


def test_analyze_scans_a_home_first(tiny_home: Path, tmp_path: Path, tiny_analysis) -> None:
    out = tmp_path / "scan"
    res = CliRunner().invoke(app, ["analyze", str(tiny_home), "--json", "--scan-out", str(out)])
    assert res.exit_code == 0, res.output
    assert (out / "manifest.json").is_file()
    assert json.loads(res.output)["headline"] == json.loads(tiny_analysis.to_json())["headline"]


def test_analyze_text_lists_every_metric_and_the_estimate(tiny_scan: Path) -> None:
    from vakaudit.analyze import metric_names

    res = CliRunner().invoke(app, ["analyze", str(tiny_scan), "--turns", "500,2000"])
    assert res.exit_code == 0, res.output
    for name in metric_names():
        assert f"[{name}]" in res.output
    assert "Growth projection (estimate)" in res.output
    assert "500 turns | 2000 turns" in res.output


def test_analyze_missing_path_is_a_caller_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["analyze", str(tmp_path / "nope")])
    assert res.exit_code == 2
    assert "does not exist" in res.output


def test_analyze_rejects_bad_turns(tiny_scan: Path) -> None:
    res = CliRunner().invoke(app, ["analyze", str(tiny_scan), "--turns", "ten"])
    assert res.exit_code == 2
    assert "--turns" in res.output


def test_sql_runs_over_the_same_views(tiny_scan: Path, tiny_home: Path) -> None:
    q = "SELECT count(*) AS n FROM ledger_entry"
    res = CliRunner().invoke(app, ["sql", str(tiny_scan), q, "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output) == [{"n": _ledger_lines(tiny_home)}]
    res = CliRunner().invoke(
        app, ["sql", str(tiny_scan), "SELECT kind FROM write_cards WHERE kind = 'cost_log'"]
    )
    assert res.exit_code == 0, res.output
    assert res.output.splitlines() == ["kind", "cost_log"]


def test_sql_error_is_a_usage_error(tiny_scan: Path) -> None:
    res = CliRunner().invoke(app, ["sql", str(tiny_scan), "SELECT nope FROM nowhere"])
    assert res.exit_code == 2
    assert "query failed" in res.output


def test_analyze_accepts_a_scan_result(tiny_home: Path, tmp_path: Path, tiny_analysis) -> None:
    from vakaudit.analyze import analyze
    from vakaudit.scan import scan_home

    result = scan_home(tiny_home, out=tmp_path / "scan", jobs=1)
    assert analyze(result).headline == tiny_analysis.headline
