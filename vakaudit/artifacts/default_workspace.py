"""Default workspace: the Shared root inside a ``VAK_HOME`` tree (``<H>/vak-home/``).

With ``VAK_HOME`` set, the Shared root ("default workspace") is ``<H>/vak-home``; it holds the shared
``.vak/`` layer (config kind), the secrets (secrets kind) and whatever the person works on when no
project is chosen — files vak's tools write on the user's behalf, not vak's own state. Registry:
``vak-home`` (Data, vak-config, Config, AdditiveOnly, not backed up) (home.md §1, §3.2). No rows.
"""

from __future__ import annotations

from vakaudit.artifacts._base import ArtifactKind, Baseline7, Discipline, RegistryClass, WriteCard, WriteGroup

KIND = ArtifactKind(
    name="default_workspace",
    title="Default workspace (vak-home)",
    patterns=("**/vak-home/**",),
    card=WriteCard(
        writer="the person, and vak's tools acting in the default workspace",
        trigger="work done without a chosen project",
        discipline="ordinary workspace files",
        barriers_per_write=0,
        read="by tools on demand",
        bound="none",
        group=WriteGroup.OTHER,
        read_class="flat",
        style=Discipline.FILES,
    ),
    v7=Baseline7(('**/vak-home/**',), (66,), vak_class='Workspace', owner='vak-config'),
    registry_class=RegistryClass.CONFIG,
    description=__doc__,
    priority=3,  # its .vak layer (config, 4), skills (6) and secrets (100) win
)
