"""The growth projection against hand-computed values (bounds from home.md §4.2, §4.3, §5.1)."""

from __future__ import annotations

import pytest

from vakaudit.analyze.projection import ArtifactGrowth, HomeRates, project

MIB = 1024 * 1024


def _rates(turns: int = 10, sessions: int = 2, span_days: float = 1.0, ledger: int = 10_000) -> HomeRates:
    return HomeRates(turns=turns, sessions=sessions, span_days=span_days, ledger_bytes=ledger)


def _row(p, name):
    return next(r for r in p.rows if r.artifact == name)


def test_linear_artifact_is_bytes_per_turn_times_n() -> None:
    p = project([ArtifactGrowth("routing_evidence", 1000, rows=23)], _rates(), turns=(1000, 10000))
    row = _row(p, "routing_evidence")
    assert row.per_turn_bytes == 100.0
    assert row.projected_bytes == {"1000": 100_000.0, "10000": 1_000_000.0}
    assert row.bound == "none"


def test_cost_log_stops_at_five_mib_when_ninety_days_fit_under_it() -> None:
    # 360 B/turn, 10 turns/day: 90 days = 324 000 B < 5 MiB, so the file saw-tooths under 5 MiB
    p = project([ArtifactGrowth("cost_log", 3600, rows=10)], _rates(), turns=(1000, 100_000))
    row = _row(p, "cost_log")
    assert row.projected_bytes["1000"] == 360_000.0
    assert row.projected_bytes["100000"] == pytest.approx(5 * MIB, rel=1e-6)


def test_cost_log_keeps_ninety_days_when_they_exceed_five_mib() -> None:
    # 10 turns in 0.01 day = 1000 turns/day: 90 days = 360 * 1000 * 90 = 32.4 MB > 5 MiB
    p = project([ArtifactGrowth("cost_log", 3600, rows=10)], _rates(span_days=0.01), turns=(100_000,))
    assert _row(p, "cost_log").projected_bytes["100000"] == pytest.approx(32_400_000, rel=1e-6)


def test_checkpoints_follow_sessions_and_the_ring_of_twenty() -> None:
    # 4 snapshots of 100 B over 10 turns in 2 sessions: 5 turns/session, 0.4 snapshots/turn,
    # 2 per session (under the ring); at 1000 turns: 200 sessions x 2 x 100 B = 40 000 B
    p = project([ArtifactGrowth("checkpoints", 400, rows=4)], _rates(), turns=(1000,))
    assert _row(p, "checkpoints").projected_bytes["1000"] == 40_000.0
    # one 100-turn session with 40 snapshots: the ring keeps 20 per session;
    # at 1000 turns: 10 sessions x 20 x 100 B = 20 000 B
    p = project(
        [ArtifactGrowth("checkpoints", 4000, rows=40)], _rates(turns=100, sessions=1, ledger=1), turns=(1000,)
    )
    assert _row(p, "checkpoints").projected_bytes["1000"] == 20_000.0


def test_store_db_keeps_its_share_of_the_ledger_and_constants_stay() -> None:
    arts = [
        ArtifactGrowth("session_ledger", 10_000, rows=130),
        ArtifactGrowth("store_db", 1_200),
        ArtifactGrowth("tasks", 500, grows=False),
    ]
    p = project(arts, _rates(), turns=(1000,), ledger_without_bindings_bytes=3_000)
    assert _row(p, "store_db").projected_bytes["1000"] == 120_000.0  # 12% of 1 000 000
    assert _row(p, "tasks").projected_bytes["1000"] == 500.0
    assert _row(p, "tasks").per_turn_bytes is None
    assert _row(p, "session_ledger_without_repeated_bindings").projected_bytes["1000"] == 300_000.0
    assert p.total_bytes["1000"] == 1_000_000 + 120_000 + 500
    assert p.estimate is True and p.method.startswith("estimate:")


def test_days_until_a_size_at_the_observed_turn_rate() -> None:
    # 10 000 B/turn at 10 turns/day reaches 1 GB (10^9 B) at 100 000 turns: (100 000 - 100) / 10 days
    arts = [ArtifactGrowth("session_ledger", 1_000_000, rows=1300)]
    p = project(arts, _rates(turns=100, sessions=4, span_days=10.0, ledger=1_000_000), turns=(1000,), gb=(1,))
    (d,) = p.days_until
    assert d["turns"] == 100_000
    assert d["days"] == pytest.approx(9990.0, rel=1e-4)
    assert p.turns_per_day == 10.0


def test_days_until_is_none_when_only_bounded_kinds_remain() -> None:
    p = project([ArtifactGrowth("budget_alerts", 100, rows=1)], _rates(), turns=(1000,), gb=(1,))
    assert p.days_until[0]["turns"] is None and p.days_until[0]["days"] is None


def test_a_home_without_turns_projects_nothing() -> None:
    p = project([ArtifactGrowth("session_ledger", 5000, rows=7)], _rates(turns=0, sessions=1), turns=(1000,))
    assert p.rows == [] and p.total_bytes == {} and p.days_until == []
    assert "nothing to project" in p.method
