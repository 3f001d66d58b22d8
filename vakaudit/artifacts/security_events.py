"""Security events: denials, auth failures, caps, config and key changes (about 39 call sites).

Lives at ``<home>/security-events.jsonl``: the agent home at most call sites, the data root at a
few. Written by vak-core ``security_events::record``: one ``write_all`` of line + LF with O_APPEND,
no fsync, best effort. ``list(home, limit)`` reads the whole file, newest first (home.md §4.6).
``kind`` is an open snake_case set; ``ip`` is left out when unknown.

In a 7.0 home it is a record chain (baseline7.md §3.7, §9.2): ``security-events/`` and ``agents/<a>/security-events/``.
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
        col("label", decl.string()),
        col("detail", decl.string()),
        col("ip", decl.string()),
    )
)

KIND = ROWS.kind(
    __doc__,
    name="security_events",
    title="Security events",
    patterns=("**/security-events.jsonl",),
    card=WriteCard(
        writer="security_events::record — vak-core (39 call sites)",
        trigger="auth failures, rate limits, allowlist decisions, permission denials and caps, config changes",
        discipline="append (one write_all with O_APPEND), no fsync, best effort",
        barriers_per_write=0,
        read="list(home, limit): whole file, reversed, truncated to limit",
        bound="none",
        group=WriteGroup.EVIDENCE,
        read_class="flat",
        time_column="ts_at",
        time_rank=6,
        style=Discipline.APPEND,
        levers=("sidecar_bounds",),  # "Give every append-only sidecar a size bound"
    ),
    v7=Baseline7(
        chain_patterns('**/security-events'),
        (15, 24),
        vak_class="Record",
        owner='vak-core',
        card=chain_card(
            "RecordChain::append — vak-core",
            'auth failures, denials, caps, config and key changes',
            'none',
            WriteGroup.EVIDENCE,
        ),
    ),
    priority=12,  # its 7.0 segments (seg-*.log) beat the `**/*.log` catch-all of `logs`
    registry_class=RegistryClass.LEDGER,
    append_only=True,
)
