"""Catalog: the 7.0 data catalog and search index (``tenants/<t>/catalog/catalog.db``).

Replaces the JSONL era's ``store.db``. Nodes, edges, grants, calls, texts (FTS5), per-session
``entries`` and ``jumps``, turn records and per-source ingest cursors. Written by vak-catalog ingest,
one transaction per source with its cursor, ``journal_mode=WAL``, ``synchronous=NORMAL``; rebuilt
from the chains at will, VACUUMed after an erasure (baseline7.md §10). Derived: sized here, never
opened in place.
"""

from __future__ import annotations

from vakaudit.artifacts._base import Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._tenant import tenant_kind

KIND = tenant_kind(
    __doc__,
    name="catalog_db",
    title="Catalog (catalog.db)",
    paths=("catalog/**",),
    card=WriteCard(
        writer="catalog ingest — vak-catalog",
        trigger="a source (session, runs, effects, ...) has frames past its cursor",
        discipline="SQLite WAL, synchronous=NORMAL, one transaction per source",
        barriers_per_write=0,
        # every turn-path query is indexed (baseline7.md §10: primary keys (session, entry_id), nodes_session,
        # edges_dst, turn_records (session, turn_id), FTS5): a B-tree's cost grows with the log of the home,
        # not with it, so the read is flat like refs.db's point lookups
        read="indexed: session entry lookups by key (session, entry_id), graph edges by index, search via FTS5",
        bound="rebuildable; VACUUM after erasure",
        group=WriteGroup.DERIVED,
        read_class="flat",
        style=Discipline.DATABASE,
    ),
    registry_class=RegistryClass.DERIVED,
    entries=(3,),
    vak_class="Derived",
    owner="vak-catalog",
)
