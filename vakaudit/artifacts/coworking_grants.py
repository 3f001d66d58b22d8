"""Coworking grants: audience grants that let another principal into a conversation.

Lives at ``<sessions_home>/coworking/grants.jsonl`` (G2 ``agents/{agent}/coworking``, a Ledger).
Written by vak-server (``AudienceGrant``, Record reference v1): append, no fsync (unconfirmed
beyond "append"). ``token_hash`` is a digest, never a token (home.md §6.2).

In a 7.0 home it is a record chain (baseline7.md §3.7, §9.2): ``grants/`` at the data root (coworking grants moved there, M8.2).
"""

from __future__ import annotations

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import Baseline7, Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._chain import chain_card, chain_patterns
from vakaudit.artifacts._columns import col, count_of, ts_cols
from vakaudit.artifacts._rowspec import RowSpec

ROWS = RowSpec(
    (
        col("grant_id", decl.string()),
        col("principal_id", decl.string()),
        col("display_name", decl.string()),
        col("conversation_id", decl.string()),
        col("audience_id", decl.string()),
        col("capability_count", decl.int64(), count_of("capabilities")),
        col("capabilities", decl.string(), json=True),
        col("token_hash", decl.string()),
        *ts_cols("created_at"),
        *ts_cols("expires_at"),
    )
)

KIND = ROWS.kind(
    __doc__,
    name="coworking_grants",
    title="Coworking grants",
    patterns=("**/coworking/grants.jsonl",),
    card=WriteCard(
        writer="coworking AudienceGrant — vak-server",
        trigger="an operator grants an audience access to a conversation",
        discipline="append, no fsync",
        barriers_per_write=0,
        read="whole file",
        bound="none",
        group=WriteGroup.SERVER,
        read_class="flat",
        style=Discipline.APPEND,
    ),
    v7=Baseline7(
        chain_patterns('grants'),
        (30,),
        vak_class="Record",
        owner='vak-core',
        card=chain_card(
            "RecordChain::append — vak-core",
            'a grant is made, revoked, or inheritance broken or restored',
            'none',
            WriteGroup.SERVER,
        ),
    ),
    registry_class=RegistryClass.LEDGER,
    append_only=True,
    priority=12,  # beats config_files' `coworking/**`; its 7.0 segments beat the `**/*.log` catch-all
)
