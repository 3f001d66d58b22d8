"""Sync state: this machine's view of its remote folder (``sync/`` at the data root, 7.0).

Declared by the 7.0 REGISTRY as Derived, owned by vak-core; its format is not confirmed
(baseline7.md §2.6 entry 32, §14). Rebuilt from the remote at will; sized, never read.
"""

from __future__ import annotations

from vakaudit.artifacts._base import ArtifactKind, Baseline7, Discipline, RegistryClass, WriteCard, WriteGroup

KIND = ArtifactKind(
    name="sync_state",
    title="Sync state",
    patterns=(),
    card=WriteCard(
        writer="vak-core sync",
        trigger="a sync with the remote folder",
        discipline="unconfirmed (rebuilt from the remote)",
        barriers_per_write=0,
        read="by sync",
        bound="rebuildable",
        group=WriteGroup.DERIVED,
        read_class="flat",
        style=Discipline.UNKNOWN,
    ),
    registry_class=RegistryClass.DERIVED,
    description=__doc__,
    priority=12,
    v7=Baseline7(("sync/**",), entries=(32,), vak_class="Derived", owner="vak-core"),
)
