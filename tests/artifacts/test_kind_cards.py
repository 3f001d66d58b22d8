"""Every kind's write card carries what its consumers derive from it (and says how it is written), and every consumer handles
every kind: the analyze ``artifact_writes`` count runs on the kind's table (real DuckDB), the
one-turn timeline places the rows of every kind with a time column, the growth projection applies
the bounds the cards give (cost_log 5 MiB / 90 days, budget_alerts 1 MiB / 2 000 rows: the values in
the cards' discipline texts, vak's compaction thresholds)."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

from vakaudit.analyze import projection
from vakaudit.analyze._open import write_units
from vakaudit.artifacts import Bound, Discipline, all_kinds, get_kind
from vakaudit.report.sections.one_turn import SIDE_TIME_COLUMNS

KINDS = all_kinds()
MIB = 1024 * 1024


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_every_card_says_how_it_is_written(kind) -> None:  # noqa: ANN001
    cards = [kind.card] + ([kind.v7.card] if kind.v7 is not None and kind.v7.card is not None else [])
    for card in cards:
        assert isinstance(card.style, Discipline)
        if card.style is Discipline.UNKNOWN:  # only where the card's text says vak's code is not known
            assert card.discipline.startswith(("unknown", "unconfirmed"))
        if card.style is Discipline.RECORD_CHAIN:
            assert card.discipline.startswith(("record chain", "group commit: frames"))
        if card.style is Discipline.APPEND_COMPACT:
            assert "append" in card.discipline and "rewrite" in card.discipline
    if kind.append_only:  # seal and verify --since treat its files as append-only
        assert kind.card.style is Discipline.APPEND


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_every_consumer_handles_the_kind(kind) -> None:  # noqa: ANN001
    card = kind.card
    assert isinstance(card.limits, Bound)
    unit = write_units()[kind.name]
    assert unit == card.write_unit
    if kind.schema is not None and unit is not None:
        con = duckdb.connect()
        con.register("t", pa.Table.from_batches([], schema=kind.schema))
        assert con.execute(f"SELECT {unit} AS n FROM t").fetchone() == (0,)
    has_ts = kind.schema is not None and "ts_at" in kind.schema.names
    if card.time_column is not None:
        assert kind.schema is not None
        assert pa.types.is_timestamp(kind.schema.field(card.time_column).type)
    assert (card.time_column is not None) == has_ts  # a table with row times is on the timeline
    if kind.name != "session_ledger":
        assert ((kind.name, card.time_column) in SIDE_TIME_COLUMNS) == (card.time_column is not None)
        if card.time_column is not None:  # a rank of its own: ties on the timeline sort one way
            assert card.time_rank > 0
            assert [k.card.time_rank for k in KINDS].count(card.time_rank) == 1


def test_the_write_units_by_hand() -> None:
    con = duckdb.connect()
    rows = pa.table(
        {"rel_path": ["a", "a", "b", "c"], "format": ["json", "blob", "json", "blob"]}
    )  # two snapshot files (a, b) and a blob-only one (c)
    con.register("checkpoints", rows)
    assert con.execute(f"SELECT {get_kind('checkpoints').card.write_unit} FROM checkpoints").fetchone() == (
        2,
    )
    assert get_kind("store_db").card.write_unit is None  # a write of store.db is counted as a file
    assert get_kind("cost_log").card.write_unit == "count(*)"


def test_the_projection_applies_the_cards_bounds() -> None:
    assert get_kind("cost_log").card.limits == Bound(bytes=5 * MIB, days=90)
    assert get_kind("budget_alerts").card.limits == Bound(bytes=MIB, rows=2000)
    rates = projection.HomeRates(turns=10, sessions=1, span_days=None, ledger_bytes=0)
    side = [
        projection.ArtifactGrowth("cost_log", size_bytes=10 * MIB),
        projection.ArtifactGrowth("budget_alerts", size_bytes=10 * MIB),
    ]
    got = {r.artifact: r.projected_bytes for r in projection.project(side, rates, turns=[1000]).rows}
    # 1 MiB per turn for 1000 turns, capped: cost_log at its 5 MiB threshold (no turn rate: no
    # 90-day window), budget_alerts at 1 MiB (the projection rounds to 6 significant digits)
    assert got["cost_log"]["1000"] == pytest.approx(5 * MIB, rel=1e-5)
    assert got["budget_alerts"]["1000"] == pytest.approx(MIB, rel=1e-5)


def test_the_sidecar_bound_lever_acts_on_the_reference_reports_sidecars() -> None:
    """"Give every append-only sidecar a size bound" names ActivityLedger, MisreadLedger, security
    events, the sandbox execution log and the outbox (write-paths-and-growth.txt); the report's
    as-is -> to-be section takes them from the cards."""
    from vakaudit.report.sections.levers import LEVER_TITLES, SIDECARS

    assert set(SIDECARS) == {"activity_log", "intent_evidence", "security_events", "sandbox_executions",
                             "delivery_jobs"}  # fmt: skip
    assert all(get_kind(k).card.style is Discipline.APPEND for k in SIDECARS)
    for kind in KINDS:  # every lever a card names is one of the report's
        assert set(kind.card.levers) <= set(LEVER_TITLES)
