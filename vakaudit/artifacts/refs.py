"""Refs: the 7.0 tenant store's SQLite table of named pointers (``tenants/<t>/store/refs.db``).

One table ``refs(name, generation, epoch, target)``: ``doc/<name>`` -> a Document's current version
object, ``req/<session>/<digest>`` admissions, ``proc/``, ``trg/``, ``eff/``, ``cur/`` and ``lc/ses/``
claims and states, and the store's own ``_store/commit`` and ``_store/epoch``. Written by vak-storage
``RefStore::cas`` in an IMMEDIATE transaction, ``journal_mode=WAL``, ``synchronous=FULL``, so
``refs.db-wal`` and ``refs.db-shm`` sit beside it (baseline7.md §5). vakaudit reads a copy, never
the file itself.
"""

from __future__ import annotations

from vakaudit.artifacts._base import Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._tenant import tenant_kind

KIND = tenant_kind(
    __doc__,
    name="refs",
    title="Tenant refs (refs.db)",
    paths=("store/refs.db", "store/refs.db-wal", "store/refs.db-shm", "store/refs.db-journal"),
    card=WriteCard(
        writer="RefStore::cas — vak-storage (for vak-session)",
        trigger="every Document save, admission, claim, cursor move and mutating store call",
        discipline="SQLite WAL, synchronous=FULL, one IMMEDIATE transaction per compare-and-swap",
        barriers_per_write=1,
        read="point lookups by name; prefix scans for claims",
        bound="one row per live name",
        group=WriteGroup.LEDGER,
        read_class="flat",
        style=Discipline.DATABASE,
    ),
    registry_class=RegistryClass.RECORD,
    entries=(2,),
    vak_class="Object",
    owner="vak-session",
)
