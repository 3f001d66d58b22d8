"""Routing evidence: one row per provider attempt, the input of the route ladder's ordering.

Lives at ``<sessions_home>/routing-evidence.jsonl`` (normally ``agents/<id>/``; also seen at the data
root and in nested homes). Written by vak-core ``EvidenceLedger::record_receipts`` after every run:
one row per attempt leg (``Cancelled`` attempts write nothing), open + append + close, no fsync.
Read in full on every turn by ``plan_route_ladder`` -> ``snapshot()``, which drops rows older than
30 days while scanning; the file itself is never shrunk (home.md §4.1).

In a 7.0 home it is a record chain (baseline7.md §3.7, §9.2): ``agents/<a>/routing-evidence/`` and ``routing-evidence/``.
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
        col("provider", decl.string()),
        col("model", decl.string()),
        col("outcome", decl.string()),  # success | failure | unknown
        col("latency_ms", decl.int64()),
    )
)

KIND = ROWS.kind(
    __doc__,
    name="routing_evidence",
    title="Routing evidence",
    patterns=("**/routing-evidence.jsonl",),
    card=WriteCard(
        writer="EvidenceLedger::record_receipts — vak-core",
        trigger="after every run, one row per provider attempt leg",
        discipline="append, no fsync",
        barriers_per_write=0,
        read="full scan on every turn (plan_route_ladder -> snapshot()); 30-day TTL applied at read time only",
        bound="none on disk",
        group=WriteGroup.EVIDENCE,
        read_class="home",
        time_column="ts_at",
        time_rank=4,
        style=Discipline.APPEND,
    ),
    v7=Baseline7(
        chain_patterns('**/routing-evidence'),
        (13, 40),
        vak_class="Record",
        owner='vak-core',
        card=chain_card(
            "RecordChain::append — vak-core",
            'once per provider attempt',
            'ActivitySegment 400 d (sealed segments)',
            WriteGroup.EVIDENCE,
        ),
    ),
    priority=12,  # its 7.0 segments (seg-*.log) beat the `**/*.log` catch-all of `logs`
    registry_class=RegistryClass.LEDGER,
    append_only=True,
)
