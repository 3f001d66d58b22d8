"""What the kinds under a 7.0 tenant directory (``tenants/<tenant>/``, baseline7.md §2.2) share.

Everything under ``tenants/`` is vak's tenant tree: its kinds outrank every catch-all pattern of
the JSONL era (``**/*.log``, ``**/.vak/**``, ``**/checkpoints/**``), since a workspace or an
environment under it may hold any file name. No I/O here.
"""

from __future__ import annotations

from vakaudit.artifacts._base import ArtifactKind, Baseline7, RegistryClass, WriteCard

#: One directory component: the tenant id (``ten_<uuid>``; ``{tenant}`` in the REGISTRY).
TENANT = "tenants/*"
PRIORITY = 50


def tenant_kind(
    doc: str | None,
    *,
    name: str,
    title: str,
    paths: tuple[str, ...],
    card: WriteCard,
    registry_class: RegistryClass,
    entries: tuple[int, ...],
    vak_class: str,
    owner: str,
    secret: bool = False,
) -> ArtifactKind:
    """A kind of the tenant tree; ``paths`` are relative to ``tenants/<tenant>/``."""
    return ArtifactKind(
        name=name,
        title=title,
        patterns=(),
        card=card,
        registry_class=registry_class,
        description=doc or "",
        secret=secret,
        priority=PRIORITY,
        v7=Baseline7(tuple(f"{TENANT}/{p}" for p in paths), entries, vak_class=vak_class, owner=owner),
    )
