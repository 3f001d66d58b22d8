"""``vakaudit report`` through typer's CliRunner."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from vakaudit.cli import app


def test_report_writes_html_md_and_json(tiny_scan: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    html = tmp_path / "r.html"
    res = runner.invoke(
        app, ["report", str(tiny_scan), "-o", str(html), "-q", "--generated-at", "2026-11-01T12:00:00Z"]
    )
    assert res.exit_code == 0, res.output
    text = html.read_text(encoding="utf-8")
    assert text.startswith("<!doctype html>")
    assert "2026-11-01 12:00 UTC" in text
    res = runner.invoke(app, ["report", str(tiny_scan), "--format", "json", "-q"])
    assert res.exit_code == 0
    assert len(json.loads(res.stdout)["sections"]) == 13
    res = runner.invoke(app, ["report", str(tiny_scan), "--format", "md", "-q"])
    assert res.exit_code == 0
    assert "## The write map" in res.stdout


def test_report_usage_errors_exit_2(tiny_scan: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["report", str(tiny_scan), "--format", "pdf"])
    assert res.exit_code == 2
    out = subprocess.run(
        [sys.executable, "-m", "vakaudit", "report", str(tmp_path / "no-such-home")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("vakaudit: ")
    res = runner.invoke(app, ["report", str(tiny_scan), "--generated-at", "yesterday"])
    assert res.exit_code == 2
