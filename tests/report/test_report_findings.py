"""Findings name the exact file (relative to the home) and line, as the committed broken homes say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def broken(sample_homes: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_homes / "broken" / "prev_hash_edited" / "home"


def _findings(doc: dict) -> dict:
    return next(s["context"] for s in doc["sections"] if s["name"] == "findings")


def test_prev_hash_mismatch_at_line_4(broken: Path, tmp_path: Path, clock) -> None:
    from vakaudit.report import build_report

    doc = json.loads(build_report(broken, format="json", clock=clock, scan_out=tmp_path / "scan"))
    ctx = _findings(doc)
    hits = [r for r in ctx["rows"] if r["code"] == "prev_hash_mismatch"]
    # sample_homes/README.md: "one hex digit of line 4's prev_hash changed" -> prev_hash_mismatch (line 4)
    # the scan's own chain check also flags line 5 (its prev_hash names the edited line 4's old digest)
    assert hits and hits[0]["line_no"] == 4
    assert hits[0]["rel_path"].endswith(".jsonl") and not hits[0]["rel_path"].startswith("/")
    assert (broken / hits[0]["rel_path"]).is_file()
    assert ctx["chain_ok_sessions"] < ctx["sessions"]


def test_link_base_makes_findings_links(broken: Path, tmp_path: Path, clock) -> None:
    from vakaudit.report import build_report

    html = build_report(broken, clock=clock, scan_out=tmp_path / "scan", link_base="../home/")
    doc = json.loads(build_report(tmp_path / "scan", format="json", clock=clock))
    rel = next(r["rel_path"] for r in _findings(doc)["rows"] if r["code"] == "prev_hash_mismatch")
    assert f'href="../home/{rel}#L4"' in html


def test_verify_adds_the_forensic_cross_checks(sample_homes: Path, tmp_path: Path, clock) -> None:
    import shutil

    from vakaudit.report import build_report

    home = tmp_path / "home"
    shutil.copytree(sample_homes / "broken" / "branched" / "home", home, symlinks=True)
    # a cost row of a session with no ledger: only the cross-artifact checks of --verify can see it
    (home / "agents/vak/cost-log.jsonl").write_bytes(
        b'{"ts":"2026-09-20T10:00:05Z","model":"m1","provider":"anthropic","input_tokens":5,'
        b'"output_tokens":2,"usd":0.01,"source":"estimated","session_id":"ghost"}\n'
    )
    kw = dict(format="json", clock=clock)
    plain = _findings(json.loads(build_report(home, scan_out=tmp_path / "s1", **kw)))
    verified = _findings(json.loads(build_report(tmp_path / "s1", verify=True, **kw)))
    # the abandoned branch is the ledger's verdict: the scan reports it, and --verify does not again
    assert [(r["code"], r["line_no"], r["source"]) for r in plain["rows"]] == [("abandoned_branch", 7, "scan")]
    got = [(r["code"], r["source"]) for r in verified["rows"]]
    assert got.count(("abandoned_branch", "scan")) == 1 and ("sidecar_row_unmatched", "verify") in got
    assert {code for code, source in got if source == "verify"} <= {"sidecar_row_unmatched", "receipt_unaccounted"}
    assert verified["verified"] is True and plain["verified"] is False


def test_report_verify_shows_an_edited_line_once(sample_homes: Path, tmp_path: Path, clock) -> None:
    # an edited payload was prev_hash_mismatch at line 3 in the scan and line_modified at line 2 in
    # verify, so the report's --verify listed the one defect twice
    from vakaudit.report import build_report

    home = sample_homes / "broken" / "payload_byte_changed" / "home"
    kw = dict(format="json", clock=clock)
    build_report(home, scan_out=tmp_path / "s1", **kw)
    verified = _findings(json.loads(build_report(tmp_path / "s1", verify=True, **kw)))
    assert [(r["code"], r["line_no"]) for r in verified["rows"]] == [("line_modified", 2)]


def test_report_counts_folded_findings_exactly(sample_homes: Path, tmp_path: Path, clock) -> None:
    # 250 garbage cost-log rows: 100 listed in full, 150 folded into one row; the report counts 250
    import shutil

    from vakaudit.report import build_report

    home = tmp_path / "home"
    shutil.copytree(sample_homes / "broken" / "clean" / "home", home, symlinks=True)
    (home / "agents/vak/cost-log.jsonl").write_bytes(b"garbage\n" * 250)
    ctx = _findings(json.loads(build_report(home, format="json", clock=clock, scan_out=tmp_path / "s")))
    assert [(c["code"], c["count"]) for c in ctx["codes"]] == [("sidecar_unparseable_row", 250)]
    assert ctx["total"] == 250 and ctx["listed"] == 101
