"""The data-baseline scorecard as a CI gate on a 7.0 home (the committed 7.0 sample home, copied)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

import vakaudit.cli

runner = CliRunner()


def cli(*args: object):
    return runner.invoke(vakaudit.cli.app, [str(a) for a in args])


def test_a_7_0_baseline_records_the_scorecard_and_check_fails_a_criterion_beyond_its_bound(
    tmp_path: Path, sample_homes: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(sample_homes / "v7", home, symlinks=True)
    baseline = tmp_path / "baseline.json"
    r = cli("baseline", home, "-o", baseline, "--scan-out", tmp_path / "scan0")
    assert r.exit_code == 0, r.output
    card = json.loads(baseline.read_text(encoding="utf-8"))["scorecard"]
    assert set(card) == {"record_growth_per_turn", "syncs_per_turn", "history_reads", "undeclared_files",
                         "ephemeral_files", "settled_delivery_files"}  # fmt: skip
    # a keyless 7.0 home: per-turn figures need keys; the sample home has no runtime files
    assert card["syncs_per_turn"]["status"] == "needs_keys"
    assert card["ephemeral_files"] == {"figure": 0.0, "bound": 0.0, "status": "pass"}

    r = cli("check", home, "--baseline", baseline, "--scan-out", tmp_path / "scan1", "--json")
    assert r.exit_code == 0, r.output

    # an execution that never settled leaves its runtime root behind
    left = home / "runtime" / "executions" / "exe_1" / "stdout"
    left.parent.mkdir(parents=True)
    left.write_bytes(b"partial output\n")
    r = cli("check", home, "--baseline", baseline, "--scan-out", tmp_path / "scan2", "--json")
    assert r.exit_code == 1, r.output
    failed = {row["metric"]: row for row in json.loads(r.output)["rows"] if row["status"] == "fail"}
    assert set(failed) == {"scorecard.ephemeral_files"}, failed
    row = failed["scorecard.ephemeral_files"]
    assert (row["baseline"], row["current"], row["group"]) == (0.0, 1.0, "scorecard")
    assert "beyond its bound" in row["cause"]

    # the rule can be switched off in a budget file
    budget = tmp_path / "budget.toml"
    budget.write_text("[rules]\nscorecard = false\n", encoding="utf-8")
    r = cli("check", home, "--baseline", baseline, "--scan-out", tmp_path / "scan3", "--budget", budget)
    assert r.exit_code == 0, r.output
