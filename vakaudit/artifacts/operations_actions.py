"""Operations actions: one receipt per operator action on a service or the outbox.

Lives at ``<server sessions_home>/operations/actions.jsonl``. Written by vak-server ``operations.rs``
(``ActionReceipt``): append, no fsync. Read newest first, up to a limit (home.md §6.3).
"""

from __future__ import annotations

import pyarrow as pa

from vakaudit.artifacts._base import RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._jsonl import RowSpec, col, ts_cols

ROWS = RowSpec(
    (
        col("receipt_id", pa.string()),
        col("service", pa.string()),
        col("action", pa.string()),
        *ts_cols("requested_at"),
        *ts_cols("completed_at"),
        col("succeeded", pa.bool_()),
        col("persisted", pa.bool_()),
        col("verification_status", pa.string(), ("verification", "status")),
        col("verification", pa.string(), json=True),
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
    ),
    registry_class=RegistryClass.LEDGER,
    append_only=True,
)
