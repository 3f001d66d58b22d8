"""Intent evidence: did the reading hold? One row per turn, plus one when a sliced capability is asked for.

Lives at ``<sessions_home>/intent-evidence.jsonl`` (per agent). Written by vak-core
``MisreadLedger::record``: best-effort append, errors swallowed, no fsync. Read whole with a 30-day
TTL at read time, aggregated per cell; not on the turn path (home.md §4.5). The row has no session
id (D8). ``sliced`` exists only in later G2 builds (default false when missing: kept null here).

In a 7.0 home it is a record chain (baseline7.md §3.7, §9.2): ``agents/<a>/intent-evidence/``.
"""

from __future__ import annotations

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import Baseline7, Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._chain import chain_card, chain_patterns
from vakaudit.artifacts._columns import col, ts_cols
from vakaudit.artifacts._rowspec import RowSpec

ROWS = RowSpec(
    (
        *ts_cols(),
        col("act", decl.string()),
        col("stakes", decl.string()),
        col("tier", decl.string()),
        col("resolver_version", decl.int64()),
        col("outcome", decl.string()),  # held | escalated | overridden | restated | abandoned
        col("wanted", decl.string()),
        col("sliced", decl.bool_()),
    )
)

KIND = ROWS.kind(
    __doc__,
    name="intent_evidence",
    title="Intent evidence",
    patterns=("**/intent-evidence.jsonl",),
    card=WriteCard(
        writer="MisreadLedger::record — vak-core",
        trigger="one row per turn, plus one when a sliced capability was later asked for",
        discipline="best-effort append, no fsync",
        barriers_per_write=0,
        read="full scan, 30-day TTL at read time; not on the turn path",
        bound="none on disk",
        group=WriteGroup.EVIDENCE,
        read_class="flat",
        time_column="ts_at",
        time_rank=1,
        style=Discipline.APPEND,
        levers=("sidecar_bounds",),  # "Give every append-only sidecar a size bound"
    ),
    v7=Baseline7(
        chain_patterns('**/intent-evidence'),
        (14,),
        vak_class="Record",
        owner='vak-core',
        card=chain_card(
            "RecordChain::append — vak-core",
            'once per resolved intent',
            'ActivitySegment 400 d (sealed segments)',
            WriteGroup.EVIDENCE,
        ),
    ),
    priority=12,  # its 7.0 segments (seg-*.log) beat the `**/*.log` catch-all of `logs`
    registry_class=RegistryClass.LEDGER,
    append_only=True,
)
