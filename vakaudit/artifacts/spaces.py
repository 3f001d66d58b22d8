"""Spaces: the 7.0 registry of bound project folders (``tenants/<t>/spaces.toml``, ``spaces.lock``).

``spaces.toml`` holds table ``spaces`` keyed by ``spc_<uuidv7>`` id, each with ``bindings``
(canonical paths), ``name``, ``forgotten`` and ``last_opened``; the space id is the directory name
every space-keyed store (session ledgers, memory) uses. Written by vak-config ``spaces::bind``
under the ``spaces.lock`` flock: ``spaces.toml.<pid>`` + fsync + rename (baseline7.md §2.3).
"""

from __future__ import annotations

from vakaudit.artifacts._base import Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._tenant import tenant_kind

KIND = tenant_kind(
    __doc__,
    name="spaces",
    title="Spaces (spaces.toml)",
    paths=("spaces.toml", "spaces.toml.*", "spaces.lock"),
    card=WriteCard(
        writer="spaces::bind — vak-config",
        trigger="a project folder is bound, renamed, forgotten or opened",
        discipline="spaces.toml.<pid> + fsync + rename under the spaces.lock flock",
        barriers_per_write=1,
        read="whole file on every path-to-space lookup",
        bound="one entry per bound folder",
        group=WriteGroup.CONFIG,
        read_class="flat",
        style=Discipline.REPLACE,
    ),
    registry_class=RegistryClass.CONFIG,
    entries=(5, 6),
    vak_class="Desired",
    owner="vak-config (spaces)",
)
