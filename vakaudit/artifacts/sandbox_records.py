"""Sandbox records: candidate, environment, preview-preparation and promotion records of the sandbox.

Lives at ``<sessions_home>/sandbox/records.jsonl`` (Record reference v1; rows may carry
``trace``/``actor``). Written by vak-server as the sandbox lifecycle advances: append, no fsync
(unconfirmed beyond "append"). The four record types share one file; whether a discriminator field
exists is unconfirmed, so ``record_type`` is inferred from which keys are present (home.md §6.2):
``receipt`` -> promotion, ``candidate_digest`` + ``command`` -> preview_preparation, ``candidate`` ->
candidate, ``plan`` -> environment, else null.

In a 7.0 home it is a record chain (baseline7.md §3.7, §9.2): ``agents/<a>/sandbox/records/``; a session's records are sealed under its conversation.
"""

from __future__ import annotations

from typing import Any

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import Baseline7, Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._chain import chain_card, chain_patterns
from vakaudit.artifacts._columns import col, ts_cols
from vakaudit.artifacts._rowspec import RowSpec


def record_type(obj: dict[str, Any]) -> str | None:
    for key in ("record_type",):  # an explicit discriminator, should a build write one
        if isinstance(obj.get(key), str):
            return obj[key]
    if "receipt" in obj:
        return "promotion"
    if "command" in obj and "candidate_digest" in obj:
        return "preview_preparation"
    if "candidate" in obj:
        return "candidate"
    if "plan" in obj:
        return "environment"
    return None


ROWS = RowSpec(
    (
        col("record_type", decl.string(), record_type),
        col("record_id", decl.string()),
        col("session_id", decl.string()),
        col("turn_id", decl.string()),
        col("result_id", decl.string()),
        col("execution_id", decl.string()),
        col("environment_id", decl.string()),
        col("candidate_id", decl.string()),
        col("candidate_digest", decl.string()),
        col("state", decl.string()),
        col("verified", decl.bool_()),
        *ts_cols("updated_at"),
    )
)

KIND = ROWS.kind(
    __doc__,
    name="sandbox_records",
    title="Sandbox records",
    patterns=("**/sandbox/records.jsonl",),
    card=WriteCard(
        writer="sandbox record store — vak-server",
        trigger="candidate, environment, preview and promotion state changes",
        discipline="append, no fsync",
        barriers_per_write=0,
        read="whole file",
        bound="none",
        group=WriteGroup.SANDBOX,
        read_class="flat",
        style=Discipline.APPEND,
    ),
    v7=Baseline7(
        chain_patterns('**/sandbox/records'),
        (21,),
        vak_class="Record",
        owner='vak-server',
        card=chain_card(
            "RecordChain::append — vak-server",
            'a candidate, environment, preview or promotion record',
            'none',
            WriteGroup.SANDBOX,
        ),
    ),
    registry_class=RegistryClass.LEDGER,
    append_only=True,
    priority=30,  # beats the generic sandbox working-tree kind
)
