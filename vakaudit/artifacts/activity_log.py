"""Activity log: duration and success of every provider dispatch, hook run and tool call.

Lives at ``<sessions_home>/activity-log.jsonl`` and/or the data root (the top-level one is
undeclared in G1, D10; the FinOps view reads both). Written by vak-core ``ActivityLedger::append``
from three closures in the run path: append, no fsync, no compaction, no bound. Read whole by
``all_rows()`` for digests and the FinOps page (home.md §4.4). ``kind`` is an open set: ``provider``
and ``mcp`` are confirmed, hook and built-in tool strings are unconfirmed; ``None`` fields may be
left out or written as null (both accepted).

In a 7.0 home it is a record chain (baseline7.md §3.7, §9.2): ``agents/<a>/activity-log/`` and ``activity-log/``, appended without a sync of its own (telemetry rows).
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
        col("kind", decl.string()),
        col("name", decl.string()),
        col("success", decl.bool_()),
        col("duration_ms", decl.int64()),
        col("session_id", decl.string()),
        col("plugin", decl.string()),
        col("tool_use_id", decl.string()),
    )
)

KIND = ROWS.kind(
    __doc__,
    name="activity_log",
    title="Activity log",
    patterns=("**/activity-log.jsonl",),
    card=WriteCard(
        writer="ActivityLedger::append — vak-core, from three closures in the run path",
        trigger="every provider dispatch, hook run and tool call",
        discipline="append, no fsync, no compaction (the FinOps ledger beside it has one)",
        barriers_per_write=0,
        read="all_rows() — whole file — for digests",
        bound="none",
        group=WriteGroup.EVIDENCE,
        read_class="flat",
        time_column="ts_at",
        time_rank=2,
        style=Discipline.APPEND,
        levers=("sidecar_bounds",),  # "Give every append-only sidecar a size bound"
    ),
    v7=Baseline7(
        chain_patterns('**/activity-log'),
        (17, 25),
        vak_class="Record",
        owner='vak-core',
        card=chain_card(
            "RecordChain::append — vak-core",
            'tool calls, plugin runs and other telemetry rows',
            'not aged (unconfirmed)',
            WriteGroup.EVIDENCE,
            relaxed=True,
        ),
    ),
    priority=12,  # its 7.0 segments (seg-*.log) beat the `**/*.log` catch-all of `logs`
    registry_class=RegistryClass.LEDGER,
    append_only=True,
)
