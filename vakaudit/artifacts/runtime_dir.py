"""Runtime root: execution temp files, tool caches and drafts (``runtime/`` under ``VAK_HOME``, 7.0).

With ``VAK_HOME`` the Runtime root is ``<home>/runtime`` (else ``$XDG_RUNTIME_DIR/vak`` or
``<cache>/runtime``): ``executions/<space-key>/<agent>/`` with ``cache/`` and drafts, the
Agent-network socket and locks. The whole root is Ephemeral: removed when an execution settles
(baseline7.md §2.5, REGISTRY entry 67). Sized, never read.
"""

from __future__ import annotations

from vakaudit.artifacts._base import ArtifactKind, Baseline7, Discipline, RegistryClass, WriteCard, WriteGroup

KIND = ArtifactKind(
    name="runtime_dir",
    title="Runtime root",
    patterns=(),
    card=WriteCard(
        writer="vak-core executions and tools",
        trigger="an execution runs; tools cache and draft",
        discipline="plain files, no fsync",
        barriers_per_write=0,
        read="by the execution that wrote them",
        bound="removed when the execution settles",
        group=WriteGroup.OTHER,
        read_class="flat",
        style=Discipline.FILES,
    ),
    registry_class=RegistryClass.EPHEMERAL,
    description=__doc__,
    priority=40,  # the whole root: above the ``**/*.log`` and ``**/*.lock`` catch-alls
    v7=Baseline7(("runtime/**",), entries=(67,), vak_class="Ephemeral", owner="vak-core"),
)
