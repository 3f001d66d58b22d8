"""The scorecard section: rendered from real homes, its figures checked against counts made here."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import vakaudit.cli

runner = CliRunner()


def settled_jobs(home: Path) -> int:
    """Delivery job files whose last parseable line says delivered or dead_letter (home.md §6.4)."""
    n = 0
    for p in sorted((home / "delivery" / "jobs").glob("*.json")):
        state = None
        for line in p.read_bytes().splitlines():
            try:
                state = json.loads(line).get("state", state)
            except ValueError:
                continue
        n += state in ("delivered", "dead_letter")
    return n


def test_scorecard_section_in_every_format(tmp_path: Path, sample_homes: Path) -> None:
    home = sample_homes / "tiny"
    r = runner.invoke(vakaudit.cli.app, ["report", str(home), "--format", "json", "--scan-out", str(tmp_path / "s")])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    (section,) = [s for s in doc["sections"] if s["name"] == "scorecard"]
    rows = {row["name"]: row for row in section["context"]["rows"]}
    expected = settled_jobs(home)
    assert expected > 0
    assert rows["settled_delivery_files"]["figure"] == expected
    assert rows["settled_delivery_files"]["status"] == "fail"
    assert not section["context"]["v7"]

    md = tmp_path / "r.md"
    r = runner.invoke(vakaudit.cli.app, ["report", str(tmp_path / "s"), "-o", str(md), "--format", "md"])
    assert r.exit_code == 0, r.output
    text = md.read_text(encoding="utf-8")
    assert "## Data-baseline scorecard" in text
    assert f"| No file left by a settled delivery job (`settled_delivery_files`) | {expected} files | 0 | fail |" in text


def test_a_keyless_7_0_home_says_per_turn_figures_need_keys(tmp_path: Path, sample_homes: Path) -> None:
    out = tmp_path / "r.html"
    r = runner.invoke(vakaudit.cli.app, ["report", str(sample_homes / "v7"), "-o", str(out), "--scan-out", str(tmp_path / "s")])
    assert r.exit_code == 0, r.output
    html = out.read_text(encoding="utf-8")
    start = html.index('id="scorecard"')
    part = html[start:html.index("</section>", start)]
    assert "This is a 7.0 data-baseline home" in part
    assert part.count("needs --keys") >= 2 and "vakaudit scan HOME --keys FILE" in part
