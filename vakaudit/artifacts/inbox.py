"""Inbox: every gateway push (summaries, approvals, alerts, digests) and the ack tombstones of reads.

Lives at ``<home>/inbox.jsonl`` with the lock ``<home>/inbox.dedupe.lock`` (both belong to this
kind; the lock gives no rows). Written by vak-core ``inbox.rs`` on every ``gateway::deliver``: one
``write_all`` of the whole line with O_APPEND, no fsync. Reading an entry appends an ack line
``{"ack_of": id, "ts": …}``; lines are never edited. With a ``dedupe_key`` the writer holds a
create-new lock file (200 × 5 ms retries) around check-and-append. ``inbox::list`` reads only the
trailing ``MAX_SCAN = 10 000`` lines (home.md §4.7). ``row_type`` is ``ack`` when ``ack_of`` is
present, else ``entry``.

In a 7.0 home it is a record chain (baseline7.md §3.7, §9.2): ``inbox/`` (and ``agents/<a>/inbox/``); entries naming a session seal ``title`` and ``body``.
"""

from __future__ import annotations

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import Baseline7, Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._chain import chain_card, chain_patterns
from vakaudit.artifacts._columns import col, ts_cols
from vakaudit.artifacts._rowspec import RowSpec

ROWS = RowSpec(
    (
        col("row_type", decl.string(), lambda o: "ack" if "ack_of" in o else "entry"),
        col("id", decl.string()),
        col("ack_of", decl.string()),
        *ts_cols(),
        col("kind", decl.string()),
        col("title", decl.string()),
        col("body", decl.string()),
        col("session_id", decl.string()),
        col("task_id", decl.string()),
        col("result_id", decl.string()),
        col("dedupe_key", decl.string()),
    )
)

KIND = ROWS.kind(
    __doc__,
    name="inbox",
    title="Inbox",
    patterns=("**/inbox.jsonl", "**/inbox.dedupe.lock"),
    card=WriteCard(
        writer="inbox::push / ack — vak-core, from gateway::deliver",
        trigger="every gateway push and every read (ack tombstone)",
        discipline="append, no fsync; acks are new lines, never edits; create-new lock for dedupe keys",
        barriers_per_write=0,
        read="inbox reads the trailing MAX_SCAN = 10 000 lines only",
        bound="reads bounded; files are not",
        group=WriteGroup.SERVER,
        read_class="flat",
        time_column="ts_at",
        time_rank=10,
        style=Discipline.APPEND,
    ),
    v7=Baseline7(
        chain_patterns('**/inbox'),
        (42,),
        vak_class="Record",
        owner='vak-core',
        card=chain_card(
            "RecordChain::append — vak-core",
            'an inbox entry or its acknowledgement',
            'InboxEntry 90 d (sealed segments)',
            WriteGroup.SERVER,
        ),
    ),
    registry_class=RegistryClass.LEDGER,
    names=("inbox.jsonl",),
    append_only=True,
    priority=12,  # its lock file beats the generic `*.lock` of `locks`; its 7.0 segments beat the `**/*.log` catch-all
)
