"""Every command that scans a 7.0 home takes --keys, and unlocks what the keyless scan cannot read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

import vakaudit.cli

runner = CliRunner()


def cli(*args: object):
    return runner.invoke(vakaudit.cli.app, [str(a) for a in args])


def test_analyze_report_baseline_check_unlock_a_sealed_home(tmp_path: Path, sample_homes: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(sample_homes / "v7", home, symlinks=True)
    keys = sample_homes / "v7-keys.json"
    key_hex = json.loads(keys.read_text(encoding="utf-8"))["keks"]

    locked = json.loads(cli("analyze", home, "--json", "--scan-out", tmp_path / "a0").stdout)
    unlocked = json.loads(cli("analyze", home, "--json", "--scan-out", tmp_path / "a1", "--keys", keys).stdout)
    assert locked["scorecard"]["locked"] is True and unlocked["scorecard"]["locked"] is False
    kinds = lambda doc: {r["kind"] for r in doc["metrics"]["ledger_bytes_by_kind"]["rows"]}  # noqa: E731
    # the sample home's frames hold header, message, turn_capabilities_bound and evidence_body entries
    assert {"header", "message", "turn_capabilities_bound", "evidence_body"} <= kinds(unlocked)
    assert not kinds(locked) - {None}

    r = cli("report", home, "--format", "json", "--scan-out", tmp_path / "r1", "--keys", keys)
    assert r.exit_code == 0, r.output
    (card,) = [s for s in json.loads(r.stdout)["sections"] if s["name"] == "scorecard"]
    assert card["context"]["locked"] is False

    base = tmp_path / "b.json"
    r = cli("baseline", home, "-o", base, "--scan-out", tmp_path / "b1", "--keys", keys)
    assert r.exit_code == 0, r.output
    r = cli("check", home, "--baseline", base, "--scan-out", tmp_path / "c1", "--keys", keys)
    assert r.exit_code == 0, r.output

    # key material never reaches an output
    for out in (base, *(tmp_path / "r1").rglob("*"), *(tmp_path / "a1").rglob("*")):
        if out.is_file():
            data = out.read_bytes()
            for hexkey in key_hex.values():
                assert hexkey.encode() not in data and bytes.fromhex(hexkey) not in data, out


def test_keys_with_a_scan_directory_is_a_usage_error(tmp_path: Path, sample_homes: Path) -> None:
    scan = tmp_path / "s"
    assert cli("scan", sample_homes / "v7", "--out", scan, "--quiet").exit_code == 0
    for cmd in ("analyze", "report"):
        r = cli(cmd, scan, "--keys", sample_homes / "v7-keys.json")
        assert r.exit_code == 2, (cmd, r.output)
        assert "--keys applies to a home" in r.output
    r = cli("analyze", sample_homes / "v7", "--keys", tmp_path / "missing.json", "--scan-out", tmp_path / "x")
    assert r.exit_code == 2 and "no such file" in r.output
