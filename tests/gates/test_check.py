"""`vakaudit baseline` and `vakaudit check` through the real CLI on copies of the sample home.

Expected growth is computed here from the bytes appended and the ledger sizes on disk (stat), not from
vakaudit's figures.
"""

from __future__ import annotations

import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

import vakaudit.cli
from vakaudit.ledger import SessionLog

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replay"))
from replay_ledgers import BASH, FIND_TOOLS, READ, WRITE, Plan, write_ledger  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def cli(*args: object):
    return runner.invoke(vakaudit.cli.app, [str(a) for a in args])


def ledgers(home: Path) -> list[Path]:
    return sorted(p for p in home.rglob("*.jsonl") if "sessions" in p.relative_to(home).parts)


def turns_of(home: Path) -> int:
    """Turns counted by hand: one per intent entry."""
    return sum(json.loads(line)["kind"] == "intent" for p in ledgers(home) for line in p.read_bytes().splitlines())


@pytest.fixture(scope="module")
def tiny_baseline(tmp_path_factory, sample_homes: Path) -> tuple[Path, dict]:
    work = tmp_path_factory.mktemp("gates")
    home = work / "home"
    shutil.copytree(sample_homes / "tiny", home, symlinks=True)
    out = work / "baseline.json"
    r = cli("baseline", home, "-o", out, "--scan-out", work / "scan")
    assert r.exit_code == 0, r.output
    return out, json.loads(out.read_text(encoding="utf-8"))


@pytest.fixture
def fresh(tmp_path, sample_homes: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(sample_homes / "tiny", home, symlinks=True)
    return home


def check(home: Path, baseline: Path, *extra: object):
    return cli("check", home, "--baseline", baseline, "--scan-out", home.parent / "scan", *extra)


def grow_by(home: Path, fraction: float) -> tuple[int, int]:
    """Append one activity entry to the first ledger so the home's ledgers grow by ~``fraction``;
    returns (bytes added, ledger bytes before), both from stat."""
    before = sum(p.stat().st_size for p in ledgers(home))
    target = ledgers(home)[0]
    size0 = target.stat().st_size
    pad = "x" * int(before * fraction - 300)  # 300: roughly the envelope and the other fields
    with SessionLog.open(target) as log:
        log.append_activity("ci-gate-test", "note", "succeeded", "padding", data={"pad": pad})
    return target.stat().st_size - size0, before


def failed_rows(doc: dict) -> dict[str, dict]:
    return {r["metric"]: r for r in doc["rows"] if r["status"] == "fail"}


def test_unchanged_home_passes_with_one_line(tiny_baseline, fresh) -> None:
    base, doc = tiny_baseline
    r = check(fresh, base)
    assert r.exit_code == 0, r.output
    assert r.output.startswith("check: pass: ") and len(r.output.splitlines()) == 1
    # the baseline holds what a CI gate compares, measured independently where it can be
    assert doc["turns"] == turns_of(fresh)
    assert doc["metrics"]["bytes_per_turn"] == pytest.approx(
        sum(p.stat().st_size for p in ledgers(fresh)) / turns_of(fresh), rel=1e-5
    )
    assert set(doc) >= {"metrics", "findings", "undeclared_files", "replay", "readscale", "scorecard"}


def test_same_home_gives_the_same_baseline_bytes(tiny_baseline, fresh, tmp_path) -> None:
    base, _ = tiny_baseline
    out = tmp_path / "again.json"
    assert cli("baseline", fresh, "-o", out, "--scan-out", tmp_path / "scan2").exit_code == 0
    assert out.read_bytes() == base.read_bytes()
    assert str(fresh) not in out.read_text(encoding="utf-8") and "/tmp" not in out.read_text(encoding="utf-8")


def test_bytes_per_turn_grown_6_percent_fails_naming_the_kind(tiny_baseline, fresh) -> None:
    base, _ = tiny_baseline
    added, before = grow_by(fresh, 0.06)
    growth = added / before  # bytes per turn = ledger bytes / turns; turns unchanged (no intent added)
    assert 0.055 < growth < 0.065
    r = check(fresh, base, "--json")
    assert r.exit_code == 1, r.output
    doc = json.loads(r.output)
    jsonschema.validate(doc, json.loads((REPO / "docs" / "schemas" / "check.json").read_text(encoding="utf-8")))
    row = failed_rows(doc)["bytes_per_turn"]
    assert row["change"] == f"{growth:+.1%}"
    assert row["bound"] == "growth <= 5%"
    assert row["cause"].startswith("kind activity ")
    # the table names it too
    text = check(fresh, base).output
    assert "bytes_per_turn" in text and "kind activity" in text and "check: FAIL" in text


def test_bytes_per_turn_grown_4_percent_passes(tiny_baseline, fresh) -> None:
    base, _ = tiny_baseline
    added, before = grow_by(fresh, 0.04)
    assert 0.035 < added / before < 0.045
    r = check(fresh, base)
    assert r.exit_code == 0, r.output
    assert r.output.startswith("check: pass")


def test_new_undeclared_file_fails_with_its_own_row(tiny_baseline, fresh) -> None:
    base, _ = tiny_baseline
    (fresh / "notes-left-behind.txt").write_text("scratch\n", encoding="utf-8")
    r = check(fresh, base, "--json")
    assert r.exit_code == 1
    rows = failed_rows(json.loads(r.output))
    assert rows["undeclared_files"]["cause"] == "new: notes-left-behind.txt"
    assert not any(m.startswith("replay.") or m == "chain_findings" for m in rows)


def test_new_chain_finding_fails_with_its_own_row(tiny_baseline, fresh) -> None:
    base, _ = tiny_baseline
    target = ledgers(fresh)[0]
    lines = target.read_bytes().split(b"\n")
    # one digit of the 4th line's timestamp changed: still valid JSON, but not the bytes line 5 chained to
    i = lines[3].index(b'"ts":"') + len(b'"ts":"2026-08-0')
    lines[3] = lines[3][:i] + (b"2" if lines[3][i : i + 1] != b"2" else b"3") + lines[3][i + 1 :]
    target.write_bytes(b"\n".join(lines))
    r = check(fresh, base, "--json")
    assert r.exit_code == 1
    rows = failed_rows(json.loads(r.output))
    assert rows["chain_findings"]["baseline"] == 0 and rows["chain_findings"]["current"] >= 1
    assert rows["chain_findings"]["bound"] == "<= 0"


def test_replay_check_that_starts_failing_fails_with_its_own_row(tmp_path) -> None:
    wider = [FIND_TOOLS, READ, BASH, WRITE]

    def home(name: str, plan: Plan) -> Path:
        root = tmp_path / name
        write_ledger(root / "sessions" / "0123456789abcdef" / "s1.jsonl", plan)
        return root

    good = home("good", Plan(tools_by_turn={3: wider, 4: wider}))
    bad = home("bad", Plan(tools_by_turn={3: wider, 4: wider}, skip_activity={3}))
    base = tmp_path / "b.json"
    assert cli("baseline", good, "-o", base, "--scan-out", tmp_path / "s1").exit_code == 0
    r = cli("check", bad, "--baseline", base, "--scan-out", tmp_path / "s2", "--json")
    assert r.exit_code == 1, r.output
    rows = failed_rows(json.loads(r.output))
    assert rows["replay.prefix_changed_activity"]["baseline"] == 0
    assert rows["replay.prefix_changed_activity"]["current"] == 1
    assert "chain_findings" not in rows


def test_junit_file_parses_as_junit_with_one_case_per_metric(tiny_baseline, fresh, tmp_path) -> None:
    base, _ = tiny_baseline
    grow_by(fresh, 0.06)
    junit = tmp_path / "out" / "check.xml"
    r = check(fresh, base, "--junit", junit, "--json")
    assert r.exit_code == 1
    doc = json.loads(r.output)
    root = ET.parse(junit).getroot()
    # the JUnit XSD's structure: testsuites > testsuite(name, tests, failures, errors) > testcase(name, classname)
    assert root.tag == "testsuites"
    (suite,) = list(root)
    assert suite.tag == "testsuite"
    assert {"name", "tests", "failures", "errors"} <= set(suite.attrib)
    cases = suite.findall("testcase")
    assert len(cases) == int(suite.get("tests")) == doc["checked"]
    assert sorted(c.get("name") for c in cases) == sorted(r["metric"] for r in doc["rows"])
    failing = [c for c in cases if c.find("failure") is not None]
    assert len(failing) == int(suite.get("failures")) == doc["failed"]
    for c in cases:
        assert c.get("classname", "").startswith("vakaudit.check.")
        assert {child.tag for child in c} <= {"failure", "system-out"}
    bpt = next(c for c in failing if c.get("name") == "bytes_per_turn").find("failure")
    assert "kind activity" in bpt.get("message") and bpt.get("type") == "regression"


def test_budget_file_overrides_defaults_and_bad_input_is_exit_2(tiny_baseline, fresh, tmp_path) -> None:
    base, doc = tiny_baseline
    strict = tmp_path / "budget.toml"
    strict.write_text(f"[max]\nbarriers_per_turn = {doc['metrics']['barriers_per_turn'] - 1}\n", encoding="utf-8")
    r = check(fresh, base, "--budget", strict, "--json")
    assert r.exit_code == 1
    assert set(failed_rows(json.loads(r.output))) == {"barriers_per_turn"}
    loose = tmp_path / "loose.toml"
    loose.write_text("[tolerance]\nbytes_per_turn = 0.10\n", encoding="utf-8")
    grow_by(fresh, 0.06)
    assert check(fresh, base, "--budget", loose).exit_code == 0
    bad = tmp_path / "bad.toml"
    bad.write_text("[tolerances]\nx = 1\n", encoding="utf-8")
    r = check(fresh, base, "--budget", bad)
    assert r.exit_code == 2 and "unknown section" in r.output
    assert check(fresh, tmp_path / "missing.json").exit_code == 2


def test_output_inside_the_home_is_refused(tiny_baseline, fresh) -> None:
    base, _ = tiny_baseline
    r = cli("baseline", fresh, "-o", fresh / "b.json", "--scan-out", fresh.parent / "scan")
    assert r.exit_code == 2 and "inside the home" in r.output
    assert not (fresh / "b.json").exists()
    r = check(fresh, base, "--junit", fresh / "agents" / "j.xml")
    assert r.exit_code == 2 and not (fresh / "agents" / "j.xml").exists()
