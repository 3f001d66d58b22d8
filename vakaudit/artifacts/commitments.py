"""Commitments: lifecycle events of durable commitments (opened, episodes, suspensions, closure).

Lives at ``<sessions_home>/commitments.jsonl`` (per agent; sometimes at the data root); undeclared in
G1 (D10). Written by vak-commit ``CommitmentLedger::append``: take the lock, replay the whole file to
project the commitment, check legality, append one line, unlock; no fsync. Early builds used a
create-new ``commitments.jsonl.lock`` broken after 2 s (constant unconfirmed); later builds an OS lock
on ``commitments.lock``, created once and never deleted. Both lock names belong to this kind and give
no rows. Every append and every scheduler pass replays the whole file (home.md §4.8). Variant fields
are flattened into the row; shapes marked unconfirmed in the spec are kept as JSON text.

In a 7.0 home it is a record chain (baseline7.md §3.7, §9.2): ``agents/<a>/commitments/`` (rows naming a session keep only ids, ts and kind; the rest is sealed).
"""

from __future__ import annotations

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import Baseline7, Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._chain import chain_card, chain_patterns
from vakaudit.artifacts._columns import col, ts_cols
from vakaudit.artifacts._rowspec import RowSpec

ROWS = RowSpec(
    (
        col("event_id", decl.string()),
        col("commitment_id", decl.string()),
        *ts_cols(),
        col("kind", decl.string()),  # kebab-case: opened, episode-started, closed, ...
        col("objective", decl.string(), ("spec", "objective")),
        col("cwd", decl.string(), ("spec", "cwd")),
        col("episode_id", decl.string()),
        col("session_id", decl.string()),
        col("spend_usd", decl.float64()),
        col("advancement_kind", decl.string(), ("advancement", "kind")),
        col("suspension_kind", decl.string(), ("suspension", "kind")),
        col("criterion_id", decl.string()),
        col("strength", decl.string()),
        col("verdict", decl.string()),
        col("reason", decl.string()),
        col("by", decl.string()),
        col("spec", decl.string(), json=True),
        col("advancement", decl.string(), json=True),
        col("suspension", decl.string(), json=True),
        col("evidence", decl.string(), json=True),
    )
)

KIND = ROWS.kind(
    __doc__,
    name="commitments",
    title="Commitments",
    patterns=("**/commitments.jsonl", "**/commitments.lock", "**/commitments.jsonl.lock"),
    card=WriteCard(
        writer="CommitmentLedger::append — vak-commit",
        trigger="commitment lifecycle events: open, episodes, suspensions, criteria, closure",
        discipline="lock -> get() -> append; create-new lock broken after 2 s (later: OS lock); no fsync",
        barriers_per_write=0,
        read="every append replays the whole file to project one commitment; open() replays it again",
        bound="none",
        group=WriteGroup.EVIDENCE,
        read_class="home",
        time_column="ts_at",
        time_rank=8,
        style=Discipline.APPEND,
    ),
    v7=Baseline7(
        chain_patterns('**/commitments'),
        (12,),
        vak_class="Record",
        owner='vak-commit',
        card=chain_card(
            "RecordChain::append — vak-commit",
            'every commitment event',
            'rollup Document commitments-rollup',
            WriteGroup.SERVER,
        ),
    ),
    registry_class=RegistryClass.LEDGER,
    names=("commitments.jsonl",),
    append_only=True,
    priority=12,  # its lock files beat the generic `*.lock` of `locks`; its 7.0 segments beat the `**/*.log` catch-all
)
