"""Gateway deliveries: the gateway's append-only log of outgoing chat deliveries.

Lives at ``<data>/gateway/deliveries.jsonl``. Written by vak-server gateway ``deliver_log``: one
``write_all`` per line, no fsync (home.md §10). The row fields are unconfirmed, so the likely ones
are typed when present (``ts``, ``kind``, ``target``, ``surface``, ``session_id``, ``job_id``,
``state``, ``ok``/``success``)
and ``keys`` lists every top-level key of the row (names only, no values).

In a 7.0 home it is a record chain (baseline7.md §3.7, §9.2): ``gateway/deliveries/``.
"""

from __future__ import annotations

from typing import Any

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import Baseline7, Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._chain import chain_card, chain_patterns
from vakaudit.artifacts._columns import col, ts_cols
from vakaudit.artifacts._rowspec import RowSpec


def _first(*keys: str):
    def get(obj: dict[str, Any]) -> Any:
        for key in keys:
            if key in obj:
                return obj[key]
        return None

    return get


ROWS = RowSpec(
    (
        *ts_cols(),
        col("kind", decl.string()),
        col("target", decl.string(), _first("target", "key", "chat")),
        col("surface", decl.string()),
        col("session_id", decl.string()),
        col("job_id", decl.string()),
        col("state", decl.string()),
        col("ok", decl.bool_(), _first("ok", "success", "delivered")),
        col("keys", decl.string(), lambda o: sorted(o), json=True),
    )
)

KIND = ROWS.kind(
    __doc__,
    name="gateway_deliveries",
    title="Gateway delivery log",
    patterns=("**/gateway/deliveries.jsonl",),
    card=WriteCard(
        writer="gateway deliver_log — vak-server",
        trigger="every gateway delivery",
        discipline="append (one write_all per line), no fsync",
        barriers_per_write=0,
        read="not on the turn path",
        bound="none",
        group=WriteGroup.SERVER,
        read_class="flat",
        time_column="ts_at",
        time_rank=9,
        style=Discipline.APPEND,
    ),
    v7=Baseline7(
        chain_patterns('**/gateway/deliveries'),
        (46,),
        vak_class="Record",
        owner='vak-server',
        card=chain_card(
            "RecordChain::append — vak-server",
            'a gateway delivery attempt',
            'none',
            WriteGroup.SERVER,
        ),
    ),
    registry_class=RegistryClass.CONFIG,  # declared only as part of the `gateway` Config entry
    append_only=True,
    priority=12,  # beats config_files' `gateway/*`; its 7.0 segments beat the `**/*.log` catch-all
)
