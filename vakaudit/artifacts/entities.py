"""Entities: the typed entity graph per workspace (``entities/<wskey>/``) and global (``entities/global/``).

Lives at ``<sessions_home>/entities/<wskey|global>/ENTITIES.jsonl``. Written by vak-core
``entities.rs`` ``upsert_entity`` / ``delete_entity``: every change rewrites the whole file via
``ENTITIES.tmp`` + rename, flushed but not fsynced, no lock (the temp file belongs to this kind and
gives no rows). Read whole; blank and corrupt lines skipped (home.md §7.2). A document: current
state, not history. ``entities_scope`` is the directory name (a workspace key or ``global``); each
relation is an edge ``id`` -> ``target_entity_id`` (kept as JSON in ``relations``).
"""

from __future__ import annotations

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._columns import FileCol, col, count_of, ts_cols
from vakaudit.artifacts._files import parent_dir
from vakaudit.artifacts._rowspec import RowSpec

ROWS = RowSpec(
    (
        col("id", decl.string()),
        col("name", decl.string()),
        col("entity_type", decl.string()),
        col("summary", decl.string()),
        col("attribute_count", decl.int64(), count_of("attributes")),
        col("attributes", decl.string(), json=True),
        col("relation_count", decl.int64(), count_of("relations")),
        col("relations", decl.string(), json=True),
        *ts_cols("updated_at"),
    ),
    trace=False,
    file_cols=(FileCol(decl.field("entities_scope", decl.string()), parent_dir),),
)

KIND = ROWS.kind(
    __doc__,
    name="entities",
    title="Entities",
    patterns=("**/entities/*/ENTITIES.jsonl", "**/entities/*/ENTITIES.tmp", "**/entities/**"),
    card=WriteCard(
        writer="upsert_entity / delete_entity — vak-core",
        trigger="the model or operator adds, changes or deletes an entity",
        discipline="whole-file rewrite via tmp + rename on each change",
        barriers_per_write=0,
        read="whole file",
        bound="none",
        group=WriteGroup.MEMORY,
        read_class="flat",
        style=Discipline.REPLACE,
    ),
    registry_class=RegistryClass.DOCUMENT,
    names=("ENTITIES.jsonl",),
    priority=5,  # the whole tree is this kind's
)
