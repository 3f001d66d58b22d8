"""Cost log: estimated USD per settled paid dispatch, keyed by session and model.

Lives at ``<sessions_home>/cost-log.jsonl`` and at the data root (the admin FinOps view merges
both). Written by vak-core ``FinOpsLedger::append`` via ``CoreSpendGate::record_settled``: one stat
then append, no fsync. When the file is >= 5 MiB an append rewrites it keeping 90 days, through
``cost-log.jsonl.compact.tmp`` + rename (the temp file belongs to this kind and gives no rows), so
this ledger is NOT append-only (doc 73 D19). Budget caps come from in-memory counters; the file is
read once per UTC day for the day baseline and in full by the admin chart and digests (home.md §4.2).
``usd`` is left out when the model has no price: null means unknown, not zero.

In a 7.0 home it is a record chain (baseline7.md §3.7, §9.2): ``agents/<a>/cost-log/`` and ``cost-log/``, no compaction; sealed segments age out after 400 days.
"""

from __future__ import annotations

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import Baseline7, Bound, Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._chain import chain_card, chain_patterns
from vakaudit.artifacts._columns import col, ts_cols
from vakaudit.artifacts._rowspec import RowSpec

ROWS = RowSpec(
    (
        *ts_cols(),
        col("model", decl.string()),
        col("provider", decl.string()),  # "" on legacy rows without the key: kept null here
        col("input_tokens", decl.int64()),
        col("output_tokens", decl.int64()),
        col("cache_read_input_tokens", decl.int64()),
        col("usd", decl.float64()),
        col("source", decl.string()),
        col("session_id", decl.string()),
    )
)

KIND = ROWS.kind(
    __doc__,
    name="cost_log",
    title="Cost log",
    patterns=("**/cost-log.jsonl", "**/cost-log.jsonl.compact.tmp"),
    card=WriteCard(
        writer="FinOpsLedger::append via CoreSpendGate — vak-core",
        trigger="once per settled paid dispatch",
        discipline="one metadata() stat per append; when > 5 MB, rewrites keeping 90 days (tmp + rename)",
        barriers_per_write=0,
        read="day baseline loaded once per day into DayBudget; digests and the admin chart stream it",
        bound="5 MB · 90 days",
        group=WriteGroup.EVIDENCE,
        read_class="flat",
        time_column="ts_at",
        time_rank=3,
        limits=Bound(bytes=5 * 1024 * 1024, days=90),
        style=Discipline.APPEND_COMPACT,
    ),
    v7=Baseline7(
        chain_patterns('**/cost-log'),
        (16, 39),
        vak_class="Record",
        owner='vak-core',
        card=chain_card(
            "RecordChain::append — vak-core",
            'once per settled paid dispatch',
            'ActivitySegment 400 d (sealed segments)',
            WriteGroup.EVIDENCE,
        ),
    ),
    priority=12,  # its 7.0 segments (seg-*.log) beat the `**/*.log` catch-all of `logs`
    registry_class=RegistryClass.LEDGER,
    names=("cost-log.jsonl",),
)
