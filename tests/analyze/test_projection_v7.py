"""Growth projection with 7.0 bounds (baseline7.md §9.1, §3.6); expectations computed by hand."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from vakaudit.analyze.projection import ArtifactGrowth, HomeRates, project
from vakaudit.cli import app
from vakaudit.storage.tenant_writer import json_key_file_text
from vakaudit.synth import build_home

KIB = 1024
RATES = HomeRates(turns=100, sessions=4, span_days=10.0, ledger_bytes=50_000)  # 10 turns a day, 25 per session


def _rows(layout):
    arts = [ArtifactGrowth("cost_log", 4000), ArtifactGrowth("checkpoints", 800, rows=8),
            ArtifactGrowth("inbox", 1000), ArtifactGrowth("session_ledger", 50_000),
            ArtifactGrowth("catalog_db", 5000), ArtifactGrowth("budget_alerts", 700)]
    p = project(arts, RATES, turns=(100, 1000, 100_000), layout=layout)
    return {r.artifact: r for r in p.rows}, p


def test_v7_bounds_by_hand() -> None:
    rows, p = _rows("g3")
    # cost-log: 40 B/turn; 400 d at 10 turns/day = 160 000 B, plus the newest sealed and the open segment
    # (2 x 256 KiB) = 684 288 B
    assert rows["cost_log"].projected_bytes == {"100": 4000.0, "1000": 40000.0, "100000": 684288.0}
    # inbox: 10 B/turn, 90 d: 9 000 + 524 288 = 533 288
    assert rows["inbox"].projected_bytes["100000"] == 533288.0
    # checkpoints: 200 B per session; 10 turns/day x 30 d / 25 turns per session = 12 live sessions -> 2 400
    assert rows["checkpoints"].projected_bytes == {"100": 800.0, "1000": 2400.0, "100000": 2400.0}
    # session ledgers have no retention class: linear, 500 B/turn
    assert rows["session_ledger"].projected_bytes["100000"] == 50_000_000.0
    # catalog.db: derived, 10 % of ledger bytes
    assert rows["catalog_db"].projected_bytes["100000"] == 5_000_000.0
    # budget alerts are a record chain in 7.0: no 1 MiB compaction, linear
    assert rows["budget_alerts"].projected_bytes["100000"] == 700_000.0
    assert "baseline7.md" in p.method


def test_jsonl_layouts_keep_their_bounds() -> None:
    rows, _p = _rows("g2")
    assert rows["cost_log"].rule == "cost_log"
    assert rows["checkpoints"].rule == "checkpoints"


def test_projection_of_a_small_synth_v7_home(tmp_path) -> None:
    home = tmp_path / "v7"
    result = build_home(home, profile="tiny", seed=2, layout="v7", fsync=False)
    keys = tmp_path / "k.json"
    keys.write_text(json_key_file_text({0: result.keys.kek}, result.keys.id_key), encoding="utf-8")
    runner = CliRunner()
    r = runner.invoke(app, ["scan", str(home), "--out", str(tmp_path / "s"), "--keys", str(keys), "--quiet"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["analyze", str(tmp_path / "s"), "--json", "--turns", "100000"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    p = doc["projection"]
    t, rate = doc["headline"]["turns"], p["turns_per_day"]
    assert t == result.turns and rate  # the writer's own count of turns
    rows = {x["artifact"]: x for x in p["rows"]}
    for kind, days in (("cost_log", 400), ("routing_evidence", 400), ("intent_evidence", 400)):
        per_turn = rows[kind]["observed_bytes"] / t
        want = min(per_turn * 100_000, per_turn * rate * days + 2 * 256 * KIB)
        assert rows[kind]["projected_bytes"]["100000"] == pytest.approx(want, rel=1e-5), kind
    assert rows["session_ledger"]["rule"] == "linear"
