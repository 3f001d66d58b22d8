"""Tenant workspaces: run environments and non-built-in Agents' working trees of a 7.0 tenant.

``tenants/<t>/environments/<run id>/`` holds a run's worktree, task copy or staging tree (removed 7
days after the run settles); ``tenants/<t>/workspaces/<spc_…>/<agent>/`` an Agent's working tree,
with a ``space-root`` file naming the project (baseline7.md §2.2). Plain files written by whatever
the run or Agent does; rebuilt, not backed up. Sized, never read.
"""

from __future__ import annotations

from vakaudit.artifacts._base import Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._tenant import tenant_kind

KIND = tenant_kind(
    __doc__,
    name="tenant_workspaces",
    title="Environments and Agent workspaces",
    paths=("environments/**", "workspaces/**"),
    card=WriteCard(
        writer="paths::environment_dir / paths::agent_workspace users — vak-config",
        trigger="a run starts in its own environment; a non-built-in Agent works in a space",
        discipline="plain files",
        barriers_per_write=0,
        read="by the run or Agent working there",
        bound="Environment 7 d after the run settles; workspaces live as long as (space, Agent)",
        group=WriteGroup.OTHER,
        read_class="flat",
        style=Discipline.FILES,
    ),
    registry_class=RegistryClass.EPHEMERAL,
    entries=(7, 8),
    vak_class="Workspace",
    owner="vak-config",
)
