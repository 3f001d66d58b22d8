"""``vakaudit scan`` and ``vakaudit kinds`` through typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import vakaudit.cli

runner = CliRunner()


def test_scan_json_summary(small_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = runner.invoke(vakaudit.cli.app, ["scan", str(small_home), "--out", str(out), "--json", "--jobs", "1"])
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["out"] == str(out) and s["layout"] == "g1"
    assert s["tables"]["sessions"] == 2 and s["tables"]["cost_log"] == 1
    assert s["tables"]["entries"] == (1 + 3 * 5) + (1 + 2 * 5)  # a header + 5 entries per turn, per ledger
    assert s["findings"]["undeclared_file"] == 1 and s["findings"]["nested_home"] == 1
    assert s["bytes_scanned"] > 0 and s["files"]["total"] == 4
    assert (out / "manifest.json").is_file() and (out / "entries").is_dir()
    again = json.loads(
        runner.invoke(vakaudit.cli.app, ["scan", str(small_home), "--out", str(out), "--json"]).stdout
    )
    assert again["files"]["unchanged"] == 3 and again["bytes_read"] == 0


def test_scan_text_and_quiet(small_home: Path, tmp_path: Path) -> None:
    r = runner.invoke(vakaudit.cli.app, ["scan", str(small_home), "--out", str(tmp_path / "o1")])
    assert r.exit_code == 0 and "entries" in r.stdout and "undeclared_file 1" in r.stdout
    q = runner.invoke(vakaudit.cli.app, ["scan", str(small_home), "--out", str(tmp_path / "o2"), "--quiet"])
    assert q.exit_code == 0 and q.stdout == ""


def test_scan_uses_vak_home_when_no_home_is_given(small_home: Path, tmp_path: Path) -> None:
    r = runner.invoke(
        vakaudit.cli.app, ["scan", "--out", str(tmp_path / "o"), "--json"], env={"VAK_HOME": str(small_home)}
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["home"] == str(small_home)


def test_scan_caller_errors_exit_2(small_home: Path, tmp_path: Path) -> None:
    r = runner.invoke(vakaudit.cli.app, ["scan", str(small_home), "--out", str(small_home / "inside")])
    assert r.exit_code == 2
    assert "inside the home" in r.output
    r = runner.invoke(vakaudit.cli.app, ["scan", str(tmp_path / "nope"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    assert "not a directory" in r.output


def test_kinds_lists_every_kind(tmp_path: Path) -> None:
    r = runner.invoke(vakaudit.cli.app, ["kinds", "--json"])
    assert r.exit_code == 0
    kinds = {k["name"]: k for k in json.loads(r.stdout)["kinds"]}
    assert kinds["session_ledger"]["table"] == "entries"
    assert kinds["session_ledger"]["card"]["barriers_per_write"] == 1
    assert kinds["unclassified"]["registry_class"] == "Undeclared"
    assert kinds["cost_log"]["patterns"] == ["**/cost-log.jsonl", "**/cost-log.jsonl.compact.tmp"]
    text = runner.invoke(vakaudit.cli.app, ["kinds"]).stdout
    assert "session_ledger" in text and "**/sessions/*/*.jsonl" in text


def test_kinds_third_column_is_the_write_discipline_under_a_header_row() -> None:
    r = runner.invoke(vakaudit.cli.app, ["kinds"])
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    header = lines[0]
    assert header.split()[:2] == ["kind", "class"]
    starts = [header.index(h) for h in ("kind", "class", "write discipline", "layouts", "path patterns")]
    rows = {}
    for line in lines[1:]:
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        rows[cells[0]] = cells
    # cost_log.py's write-map card: vak stats the file before each append and compacts past 5 MB
    assert rows["cost_log"][1] == "Ledger"
    assert rows["cost_log"][2] == "one metadata() stat per append; when > 5 MB, rewrites keeping 90 days (tmp + rename)"
    assert rows["cost_log"][3] == "g1,g2,g3"
    assert rows["cost_log"][4] == "**/cost-log.jsonl, **/cost-log.jsonl.compact.tmp, **/cost-log/*"
    assert rows["session_ledger"][2].startswith("one writeln! + sync_data() per entry")
    assert len(rows) == len(json.loads(runner.invoke(vakaudit.cli.app, ["kinds", "--json"]).stdout)["kinds"])
