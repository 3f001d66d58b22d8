"""The report renders for any home: empty, legacy layout, torn or empty ledgers, undeclared files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

# sample_homes/README.md: home -> the finding code it must show
BROKEN = {
    "torn_last_line": "torn_last_line",
    "empty_ledger": "empty_ledger",
    "undeclared_file": "undeclared_file",
    "g1_layout": None,
}


def test_empty_home_renders_every_format(tmp_path: Path, clock) -> None:
    from vakaudit.report import build_report

    home = tmp_path / "home"
    (home / "agents").mkdir(parents=True)  # an empty but real home (an empty folder is no home)
    html = build_report(home, clock=clock, scan_out=tmp_path / "scan")
    assert "No turn (intent entry) was found in this home" in html
    assert "nothing to project" in html
    doc = json.loads(build_report(tmp_path / "scan", format="json", clock=clock))
    assert doc["sections"][0]["context"]["turns"] == 0
    assert "## Findings" in build_report(tmp_path / "scan", format="md", clock=clock)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_sample_home_renders_with_its_finding(
    name: str, sample_homes: Path, tmp_path: Path, clock
) -> None:
    from vakaudit.report import build_report

    doc = json.loads(
        build_report(sample_homes / "broken" / name / "home", format="json", clock=clock, scan_out=tmp_path)
    )
    assert len(doc["sections"]) == 13
    findings = next(s["context"] for s in doc["sections"] if s["name"] == "findings")
    if BROKEN[name]:
        assert BROKEN[name] in {c["code"] for c in findings["codes"]}
