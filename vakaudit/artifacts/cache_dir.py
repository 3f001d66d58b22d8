"""Cache directory: everything in the Cache root other than ``store.db`` (which has its own kind).

Lives at ``<H>/cache/`` with ``VAK_HOME`` (else ``$XDG_CACHE_HOME/vak`` or ``~/Library/Caches/vak``,
outside the data home). Registry: Cache root, owner vak-store, Derived, Rebuilt, not backed up: every
byte here can be deleted and rebuilt (home.md §1, §3.2). No rows.
"""

from __future__ import annotations

from vakaudit.artifacts._base import ArtifactKind, Baseline7, Discipline, RegistryClass, WriteCard, WriteGroup

KIND = ArtifactKind(
    name="cache_dir",
    title="Cache directory",
    patterns=("cache/**",),
    card=WriteCard(
        writer="vak-store and other caches",
        trigger="rebuilt on demand",
        discipline="derived data; may be deleted at any time",
        barriers_per_write=0,
        read="by its writer",
        bound="rebuildable",
        group=WriteGroup.DERIVED,
        read_class="flat",
        style=Discipline.DERIVED,
    ),
    v7=Baseline7(('cache/**',), (69,), vak_class='Derived', owner='vak-core'),
    registry_class=RegistryClass.DERIVED,
    description=__doc__,
    priority=4,
)
