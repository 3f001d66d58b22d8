"""The data-baseline scorecard on homes built to pass and to fail each criterion.

Expected figures are computed here from what each test wrote (entries per turn counted by hand,
file sizes from stat), never from vakaudit's own tables.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from vakaudit.analyze import analyze
from vakaudit.analyze.scorecard import Bounds, Status
from vakaudit.ledger import SessionLog

SESSION = "agents/vak/sessions/2599eb06cf360587/s-card.jsonl"


def write_home(root: Path, *, turns: int, extra_per_turn: int = 0, pad: int = 0) -> Path:
    """A JSONL-era home of one session: per turn an intent, a user and an assistant message, and
    ``extra_per_turn`` activities (each ``pad`` bytes of payload)."""
    home = root / "home"
    header = {"session_id": "s-card", "created_at": "2026-01-01T00:00:00Z", "cwd": "/w", "app_version": "3.5.1"}
    log = SessionLog.create(home / SESSION, header, fsync=False)
    try:
        for k in range(turns):
            log.append_message({"role": "user", "content": [{"type": "text", "text": f"turn {k}"}]})
            log.append("intent", {"reading": f"r{k}", "strands": [], "engagement": "direct", "provenance": "model"})
            for j in range(extra_per_turn):
                log.append_activity(f"a{k}-{j}", "diagnostic", "succeeded", "pad", data={"pad": "x" * pad})
            log.append_message({"role": "assistant", "content": [{"type": "text", "text": f"answer {k}"}]})
    finally:
        log.close()
    return home


def card_of(home: Path, tmp_path: Path):
    result = analyze(home, scan_out=tmp_path / "scan")
    assert result.scorecard is not None
    return result.scorecard


def ledger_bytes(home: Path) -> int:
    return (home / SESSION).stat().st_size


def test_a_small_quiet_home_passes_growth_and_syncs(tmp_path: Path) -> None:
    home = write_home(tmp_path, turns=5)
    card = card_of(home, tmp_path)
    growth = card.criterion("record_growth_per_turn")
    # the only growing file is the ledger: its size over the 5 intents
    assert growth.figure == pytest.approx(ledger_bytes(home) / 5, abs=0.1)
    assert growth.status is Status.PASS
    syncs = card.criterion("syncs_per_turn")
    # JSONL era: one sync per entry; 1 header + 3 entries per turn over 5 turns
    assert syncs.figure == pytest.approx((1 + 3 * 5) / 5, abs=0.01)
    assert syncs.status is Status.PASS
    assert card.turns == 5 and card.layout in ("g1", "g2")


def test_many_entries_per_turn_fail_syncs_and_name_the_ledger(tmp_path: Path) -> None:
    home = write_home(tmp_path, turns=3, extra_per_turn=6)
    syncs = card_of(home, tmp_path).criterion("syncs_per_turn")
    assert syncs.figure == pytest.approx((1 + 9 * 3) / 3, abs=0.01)  # 9.33 > 6
    assert syncs.status is Status.FAIL
    assert syncs.contributors[0]["artifact"] == "session_ledger"


def test_large_entries_fail_growth(tmp_path: Path) -> None:
    home = write_home(tmp_path, turns=2, extra_per_turn=1, pad=30_000)
    growth = card_of(home, tmp_path).criterion("record_growth_per_turn")
    assert growth.figure == pytest.approx(ledger_bytes(home) / 2, abs=0.1)
    assert growth.figure > 20 * 1024 and growth.status is Status.FAIL
    assert growth.contributors[0]["kind"] == "session_ledger"


def test_history_reads_pass_for_a_ledger_and_fail_for_a_whole_file_read(tmp_path: Path) -> None:
    home = write_home(tmp_path, turns=3)
    reads = card_of(home, tmp_path).criterion("history_reads")
    # a session ledger is read per session, never as the whole home's history
    assert (reads.figure, reads.status) == (0.0, Status.PASS)
    # the JSONL era's routing evidence is read whole on every routed turn (home.md)
    ev = home / "agents/vak/routing-evidence.jsonl"
    ev.write_text('{"ts":"2026-01-01T00:00:00Z","provider":"p","model":"m","outcome":"success"}\n', encoding="utf-8")
    reads = card_of(home, tmp_path / "again").criterion("history_reads")
    assert (reads.figure, reads.status, reads.contributors) == (1.0, Status.FAIL, [{"kind": "routing_evidence"}])


def test_a_stranger_file_fails_every_path_declared(tmp_path: Path) -> None:
    home = write_home(tmp_path, turns=1)
    assert card_of(home, tmp_path / "a").criterion("undeclared_files").status is Status.PASS
    (home / "stranger.bin").write_bytes(b"?")
    c = card_of(home, tmp_path / "b").criterion("undeclared_files")
    assert (c.figure, c.status) == (1.0, Status.FAIL)
    assert c.contributors == [{"rel_path": "stranger.bin", "kind": "unclassified"}]


def test_runtime_files_fail_no_ephemeral_state(tmp_path: Path) -> None:
    home = write_home(tmp_path, turns=1)
    (home / "tenants").mkdir()  # a 7.0 home (tenants/): its runtime root is an Ephemeral kind
    (home / "runtime" / "executions" / "x").mkdir(parents=True)
    (home / "runtime" / "executions" / "x" / "state.json").write_text("{}")
    c = card_of(home, tmp_path).criterion("ephemeral_files")
    assert (c.figure, c.status) == (1.0, Status.FAIL)
    assert c.contributors[0]["rel_path"] == "runtime/executions/x/state.json"


def _job(state: str, *, history: tuple[str, ...] = ()) -> bytes:
    lines = []
    for s in (*history, state):
        lines.append(json.dumps({"schema_version": 1, "job": {"job_id": "j", "target": "t:1", "kind": "k",
                                 "content": {"type": "text", "markdown": "m"}}, "state": s, "attempts": 0,
                                 "created_at_ms": 1, "updated_at_ms": 2, "packet": None, "last_error": None}))  # fmt: skip
    return ("\n".join(lines) + "\n").encode()


def test_settled_delivery_jobs_left_as_files_fail(tmp_path: Path) -> None:
    home = write_home(tmp_path, turns=1)
    jobs = home / "delivery" / "jobs"
    jobs.mkdir(parents=True)
    (jobs / "6a31.json").write_bytes(_job("pending"))
    c = card_of(home, tmp_path / "a").criterion("settled_delivery_files")
    assert (c.figure, c.status) == (0.0, Status.PASS)
    # a job whose last line says delivered is settled; one that went pending -> delivered -> (torn) too
    (jobs / "6a32.json").write_bytes(_job("delivered", history=("pending",)))
    (jobs / "6a33.json").write_bytes(_job("dead_letter", history=("pending",)) + b'{"state":"pend')
    c = card_of(home, tmp_path / "b").criterion("settled_delivery_files")
    assert (c.figure, c.status) == (2.0, Status.FAIL)
    assert sorted(x["rel_path"] for x in c.contributors) == ["delivery/jobs/6a32.json", "delivery/jobs/6a33.json"]


def test_a_home_without_turns_says_so_and_a_locked_7_0_home_needs_keys(tmp_path: Path, sample_homes: Path) -> None:
    keyless = card_of(sample_homes / "v7", tmp_path / "keyless")
    assert keyless.locked and keyless.layout == "g3"
    for name in ("record_growth_per_turn", "syncs_per_turn"):
        assert keyless.criterion(name).status is Status.NEEDS_KEYS
    assert keyless.passed is not True
    home = tmp_path / "empty"
    (home / "agents" / "vak" / "sessions").mkdir(parents=True)
    (home / "cost-log.jsonl").write_bytes(b"")
    empty = card_of(home, tmp_path / "e")
    assert empty.criterion("record_growth_per_turn").status is Status.NO_TURNS


def test_bounds_are_parameters(tmp_path: Path) -> None:
    from vakaudit.analyze import open_scan
    from vakaudit.analyze.scorecard import build_scorecard

    home = write_home(tmp_path, turns=2)
    result = analyze(home, scan_out=tmp_path / "scan")
    con = open_scan(tmp_path / "scan")
    try:
        strict = build_scorecard(con, result.metrics, layout="g2", bounds=Bounds(syncs_per_turn=1.0))
    finally:
        con.close()
    assert strict.criterion("syncs_per_turn").status is Status.FAIL
    assert result.scorecard.criterion("syncs_per_turn").status is Status.PASS


def test_home_untouched(tmp_path: Path) -> None:
    home = write_home(tmp_path, turns=2)
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in home.rglob("*") if p.is_file()}
    card_of(home, tmp_path)
    after = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in home.rglob("*") if p.is_file()}
    assert before == after and not any(os.path.basename(p).endswith("-wal") for p in after)
