"""Operations actions: one receipt per operator action on a service or the outbox.

Lives at ``<server sessions_home>/operations/actions.jsonl``. Written by vak-server ``operations.rs``
(``ActionReceipt``): append, no fsync. Read newest first, up to a limit (home.md §6.3).

In a 7.0 home it is a record chain (baseline7.md §3.7, §9.2): ``operations/actions/``.
"""

from __future__ import annotations

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import Baseline7, Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._chain import chain_card, chain_patterns
from vakaudit.artifacts._columns import col, ts_cols
from vakaudit.artifacts._rowspec import RowSpec

ROWS = RowSpec(
    (
        col("receipt_id", decl.string()),
        col("service", decl.string()),
        col("action", decl.string()),
        *ts_cols("requested_at"),
        *ts_cols("completed_at"),
        col("succeeded", decl.bool_()),
        col("persisted", decl.bool_()),
        col("verification_status", decl.string(), ("verification", "status")),
        col("verification", decl.string(), json=True),
    )
)

KIND = ROWS.kind(
    __doc__,
    name="operations_actions",
    title="Operations actions",
    patterns=("**/operations/actions.jsonl",),
    card=WriteCard(
        writer="operations action receipts — vak-server",
        trigger="each operator action on a service or the outbox",
        discipline="append, no fsync",
        barriers_per_write=0,
        read="newest first, up to a limit",
        bound="none",
        group=WriteGroup.SERVER,
        read_class="flat",
        style=Discipline.APPEND,
    ),
    v7=Baseline7(
        chain_patterns('**/operations/actions'),
        (43,),
        vak_class="Record",
        owner='vak-server',
        card=chain_card(
            "RecordChain::append — vak-server",
            'an operations action completes',
            'Incident 400 d (sealed segments)',
            WriteGroup.SERVER,
        ),
    ),
    priority=12,  # its 7.0 segments (seg-*.log) beat the `**/*.log` catch-all of `logs`
    registry_class=RegistryClass.LEDGER,
    append_only=True,
)
