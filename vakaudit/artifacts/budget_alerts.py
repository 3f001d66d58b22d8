"""Budget alerts: one row each time the day's spend crosses 80 % or 100 % of the day cap.

Lives at ``<home>/budget-alerts.jsonl`` next to the cost log; undeclared in the G1/G2 REGISTRY
(D10). Written by vak-core ``finops.rs`` ``record_alert``, once per threshold window: append, no
fsync; when the file is >= 1 MiB an append keeps only the last 2000 lines through
``budget-alerts.jsonl.compact.tmp`` + rename (this kind owns the temp file; it gives no rows).
Readers skip rows whose ``kind`` is not ``budget_alert`` (home.md §4.3).

In a 7.0 home it is a record chain (baseline7.md §3.7, §9.2): ``budget-alerts/``.
"""

from __future__ import annotations

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import Baseline7, Bound, Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._chain import chain_card, chain_patterns
from vakaudit.artifacts._columns import col, ts_cols
from vakaudit.artifacts._rowspec import RowSpec

ROWS = RowSpec(
    (
        col("kind", decl.string()),  # always "budget_alert"
        *ts_cols(),
        col("level", decl.string()),  # eighty | full
        col("day_total_usd", decl.float64()),
        col("session_id", decl.string()),
    )
)

KIND = ROWS.kind(
    __doc__,
    name="budget_alerts",
    title="Budget alerts",
    patterns=("**/budget-alerts.jsonl", "**/budget-alerts.jsonl.compact.tmp"),
    card=WriteCard(
        writer="finops.rs record_alert — vak-core",
        trigger="day spend crosses 80 % or 100 % of the day cap, once per threshold window",
        discipline="append, no fsync; at 1 MiB rewrites keeping the last 2000 rows (tmp + rename)",
        barriers_per_write=0,
        read="not on the turn path",
        bound="1 MiB · 2000 rows",
        group=WriteGroup.EVIDENCE,
        read_class="flat",
        time_column="ts_at",
        time_rank=7,
        limits=Bound(bytes=1024 * 1024, rows=2000),
        style=Discipline.APPEND_COMPACT,
    ),
    v7=Baseline7(
        chain_patterns('budget-alerts'),
        (27,),
        vak_class="Record",
        owner='vak-core',
        card=chain_card(
            "RecordChain::append — vak-core",
            'a day total crosses 80 % or 100 % of the budget',
            'none',
            WriteGroup.EVIDENCE,
        ),
    ),
    priority=12,  # its 7.0 segments (seg-*.log) beat the `**/*.log` catch-all of `logs`
    registry_class=RegistryClass.UNDECLARED,
    names=("budget-alerts.jsonl",),
)
