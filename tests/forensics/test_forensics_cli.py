"""`vakaudit verify`, `seal` and `timeline` through the CLI: output, JSON fields and exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from vakaudit.cli import app

runner = CliRunner()
FINDING_FIELDS = {
    "code",
    "severity",
    "rel_path",
    "line_no",
    "offset_bytes",
    "entry_id",
    "message",
    "expected",
    "actual",
    "count",
}


def _home(sample_homes: Path, name: str) -> str:
    return str(sample_homes / "broken" / name / "home")


def test_clean_home_exits_0_with_a_summary(sample_homes: Path) -> None:
    res = runner.invoke(app, ["verify", _home(sample_homes, "clean")])
    assert res.exit_code == 0, res.output
    assert "verified 1 ledger(s)" in res.output and "0 error" in res.output


def test_findings_at_the_threshold_exit_1_and_are_tabled(sample_homes: Path) -> None:
    res = runner.invoke(app, ["verify", _home(sample_homes, "payload_byte_changed")])
    assert res.exit_code == 1
    lines = res.output.splitlines()
    assert lines[0].split()[:5] == ["SEVERITY", "CODE", "FILE", "LINE", "OFFSET"]
    row = lines[1].split()
    assert row[:4] == ["error", "line_modified", "agents/vak/sessions/2599eb06cf360587/s-sample.jsonl", "2"]


def test_json_output_carries_the_finding_fields(sample_homes: Path) -> None:
    res = runner.invoke(app, ["verify", _home(sample_homes, "prev_hash_edited"), "--json"])
    assert res.exit_code == 1
    doc = json.loads(res.output)
    assert doc["exit_code"] == 1 and doc["fail_on"] == "error"
    (f,) = doc["findings"]
    assert set(f) == FINDING_FIELDS
    assert f["code"] == "prev_hash_mismatch" and f["line_no"] == 4
    led = doc["ledgers"][0]
    assert led["first_bad_line"] == 4 and led["last_verified_line"] == 3
    # the offset points at the prev_hash value inside line 4
    data = (Path(_home(sample_homes, "prev_hash_edited")) / f["rel_path"]).read_bytes()
    assert data[f["offset_bytes"] : f["offset_bytes"] + 64].decode() == f["actual"]


def test_torn_policies_and_fail_on(sample_homes: Path) -> None:
    home = _home(sample_homes, "torn_last_line")
    assert runner.invoke(app, ["verify", home]).exit_code == 0  # tolerate-tail: a warning
    assert runner.invoke(app, ["verify", home, "--torn", "strict"]).exit_code == 1
    assert runner.invoke(app, ["verify", home, "--fail-on", "warning"]).exit_code == 1
    assert (
        runner.invoke(app, ["verify", _home(sample_homes, "invalid_utf8"), "--torn", "skip"]).exit_code == 0
    )
    assert runner.invoke(app, ["verify", _home(sample_homes, "invalid_utf8")]).exit_code == 1
    assert (
        runner.invoke(app, ["verify", _home(sample_homes, "undeclared_file"), "--fail-on", "info"]).exit_code
        == 1
    )


def test_usage_errors_exit_2(sample_homes: Path, tmp_path: Path) -> None:
    assert runner.invoke(app, ["verify", _home(sample_homes, "clean"), "--torn", "bogus"]).exit_code == 2
    assert runner.invoke(app, ["verify", _home(sample_homes, "clean"), "--fail-on", "fatal"]).exit_code == 2
    for args in (["verify", str(tmp_path / "missing")], ["verify", _home(sample_homes, "clean"), "--since",
                 str(tmp_path / "no-seal.json")]):  # fmt: skip
        out = subprocess.run([sys.executable, "-m", "vakaudit", *args], capture_output=True, text=True)
        assert out.returncode == 2, out.stderr
        assert out.stderr.startswith("vakaudit: ")


def test_help_documents_the_exit_codes() -> None:
    res = runner.invoke(app, ["verify", "--help"])
    assert res.exit_code == 0
    for text in (
        "0  no finding at or above --fail-on",
        "1  findings at or above",
        "2  usage error",
        "tolerate-tail",
    ):
        assert text in res.output


def test_seal_then_verify_since_names_the_rewritten_file(sample_homes: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(_home(sample_homes, "clean"), home)
    seal = tmp_path / "seal.json"
    res = runner.invoke(app, ["seal", str(home), "-o", str(seal)])
    assert res.exit_code == 0 and "sealed 1 append-only file(s)" in res.output
    assert runner.invoke(app, ["verify", str(home), "--since", str(seal)]).exit_code == 0
    ledger = next(home.rglob("*.jsonl"))
    data = ledger.read_bytes()
    ledger.write_bytes(
        data.replace(b'"prefix-changed"', b'"prefix-chAnged"')
    )  # last line: the chain cannot see it
    assert runner.invoke(app, ["verify", str(home)]).exit_code == 0
    res = runner.invoke(app, ["verify", str(home), "--since", str(seal), "--json"])
    assert res.exit_code == 1
    (f,) = json.loads(res.output)["findings"]
    assert f["code"] == "append_only_violation" and f["line_no"] == 7
    assert f["offset_bytes"] == sum(len(x) + 1 for x in data.split(b"\n")[:6])


def test_seal_and_timeline_refuse_to_write_into_the_home(sample_homes: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(_home(sample_homes, "clean"), home)
    for cmd in ("seal", "timeline"):
        out = subprocess.run([sys.executable, "-m", "vakaudit", cmd, str(home), "-o", str(home / "x.json")],
                             capture_output=True, text=True)  # fmt: skip
        assert out.returncode == 2 and "inside the home" in out.stderr
        assert not (home / "x.json").exists()


def test_timeline_cli_writes_jsonl_and_csv(sample_homes: Path, tmp_path: Path) -> None:
    home = _home(sample_homes, "clean")
    res = runner.invoke(app, ["timeline", home, "-o", str(tmp_path / "t.jsonl")])
    assert res.exit_code == 0 and "wrote 9 timeline row(s)" in res.output
    rows = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert len(rows) == 9
    res = runner.invoke(app, ["timeline", home, "-o", str(tmp_path / "t.csv"), "--format", "csv"])
    assert res.exit_code == 0
    header = (tmp_path / "t.csv").read_text().splitlines()[0]
    assert header == "datetime,timestamp,timestamp_desc,source,message,rel_path,line_no,entry_id"
