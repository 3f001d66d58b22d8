"""Hostile text from a home renders as text: in the Markdown report (raw HTML from ``app_version``
and file names was copied in) and in the CSV timeline (cells a spreadsheet runs as formulas)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vakaudit.cli import app
from vakaudit.report.filters import md_escape
from vakaudit.synth import build_one_session

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
FORMULAS = ["=HYPERLINK(1)", "+SUM(1)", "-2+3", "@SUM(1)", "\tTAB", "\rCR"]


@pytest.fixture(scope="module")
def hostile_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("hostile") / "home"
    ledger = build_one_session(home, app_version="3.5.1", turns=2)
    # a header whose app_version is markup (the hash chain breaks there: a finding, still read)
    first, rest = ledger.read_bytes().split(b"\n", 1)
    assert first.count(b'"app_version":"3.5.1"') == 1
    ledger.write_bytes(first.replace(b'"3.5.1"', SCRIPT.replace("/", "\\/").join('""').encode()) + b"\n" + rest)
    (home / f"{IMG}.txt").write_text("undeclared")
    (home / "a|b`c[d](e).txt").write_text("undeclared")
    for name in FORMULAS:
        (home / f"{name}.txt").write_text("undeclared")
    return home


def test_markdown_report_holds_no_raw_html_from_the_home(hostile_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.md"
    result = CliRunner().invoke(
        app,
        [
            "report",
            str(hostile_home),
            "--scan-out",
            str(tmp_path / "scan"),
            "-o",
            str(out),
            "--format",
            "md",
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    # the hostile values are in the report, as text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "&lt;img src=x onerror=alert(1)&gt;.txt" in text
    assert "a\\|b&#96;c\\[d\\](e).txt" in text
    lowered = text.lower()
    assert "<script" not in lowered and "<img" not in lowered
    # every table row keeps its column count: no value split a cell
    for block in text.split("\n\n"):
        rows = [r for r in block.splitlines() if r.startswith("|")]
        if rows:
            widths = {len(r.replace("\\|", "").split("|")) for r in rows}
            assert len(widths) == 1, rows


def test_md_escape_by_hand() -> None:
    assert md_escape("<b>&</b>") == "&lt;b&gt;&amp;&lt;/b&gt;"
    assert md_escape("x|y`z") == "x\\|y&#96;z"
    assert md_escape("[a](javascript:x)") == "\\[a\\](javascript:x)"
    assert md_escape("two\nlines\r") == "two lines "
    assert md_escape(12) == 12


def test_csv_timeline_has_no_formula_cell(hostile_home: Path, tmp_path: Path) -> None:
    # timeline --format csv wrote cells starting with = from file names (formula injection)
    out = tmp_path / "t.csv"
    result = CliRunner().invoke(app, ["timeline", str(hostile_home), "-o", str(out), "--format", "csv"])
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(io.StringIO(out.read_bytes().decode("utf-8"), newline="")))
    cells = [c for row in rows for c in row]
    assert [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")] == []
    paths = {row[rows[0].index("rel_path")] for row in rows[1:]}
    for name in FORMULAS:
        assert f"'{name}.txt" in paths  # kept, behind a quote a spreadsheet shows as text
