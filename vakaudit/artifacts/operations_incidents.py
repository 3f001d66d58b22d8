"""Operations incidents: incident events of the Operations Center (opened, observed, reopened, resolved).

Lives at ``<server sessions_home>/operations/incidents.jsonl``. Written by vak-server
``operations.rs`` ``reconcile`` whenever the Operations Center snapshot refreshes: an event when an
incident opens, at most once per minute while it is still observed, when it reopens and when it
resolves; single ``write_all`` append, no fsync, best effort. Readers parse the whole file and fold
by ``incident.id``, last line wins (home.md §6.3). One row per event; fold with ``incident_id``.

In a 7.0 home it is a record chain (baseline7.md §3.7, §9.2): ``operations/incidents/``.
"""

from __future__ import annotations

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import Baseline7, Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._chain import chain_card, chain_patterns
from vakaudit.artifacts._columns import col, ts_cols
from vakaudit.artifacts._rowspec import RowSpec
from vakaudit.artifacts._timestamps import TIMESTAMP


def _inc(key: str) -> tuple[str, str]:
    return ("incident", key)


ROWS = RowSpec(
    (
        *ts_cols(),
        col("event", decl.string()),  # opened | observed | reopened | resolved
        col("incident_id", decl.string(), _inc("id")),
        col("fingerprint", decl.string(), _inc("fingerprint")),
        col("severity", decl.string(), _inc("severity")),
        col("status", decl.string(), _inc("status")),
        col("source", decl.string(), _inc("source")),
        col("title", decl.string(), _inc("title")),
        col("detail", decl.string(), _inc("detail")),
        col("first_seen_at", TIMESTAMP, _inc("first_seen")),
        col("last_seen_at", TIMESTAMP, _inc("last_seen")),
        col("occurrences", decl.int64(), _inc("occurrences")),
        col("workspace", decl.string(), _inc("workspace")),
        col("evidence", decl.string(), _inc("evidence"), json=True),
        col("resolution", decl.string(), _inc("resolution")),
    )
)

KIND = ROWS.kind(
    __doc__,
    name="operations_incidents",
    title="Operations incidents",
    patterns=("**/operations/incidents.jsonl",),
    card=WriteCard(
        writer="operations::reconcile — vak-server",
        trigger="Operations Center snapshot refresh: open, ≤ 1 update per incident per minute, reopen, resolve",
        discipline="append for events (one write_all), no fsync, best effort",
        barriers_per_write=0,
        read="parse the whole file and fold by incident.id; last line wins",
        bound="none",
        group=WriteGroup.SERVER,
        read_class="flat",
        time_column="ts_at",
        time_rank=12,
        style=Discipline.APPEND,
    ),
    v7=Baseline7(
        chain_patterns('**/operations/incidents'),
        (43,),
        vak_class="Record",
        owner='vak-server',
        card=chain_card(
            "RecordChain::append — vak-server",
            'an incident is opened, seen again or resolved',
            'Incident 400 d (sealed segments)',
            WriteGroup.SERVER,
        ),
    ),
    priority=12,  # its 7.0 segments (seg-*.log) beat the `**/*.log` catch-all of `logs`
    registry_class=RegistryClass.LEDGER,
    append_only=True,
)
