"""Unclassified: any file in a home that no declared artifact kind claims.

Not a vak artifact: the place the registry sends every path no other kind matches, so that every
byte of a home lands in exactly one kind and byte shares add up to 100 %. Each such file is reported
as an ``undeclared_file`` finding; it is sized, never read. vak's own REGISTRY test fails a build on
a file nobody declared, yet real homes hold many (home.md §3.1, D10).
"""

from __future__ import annotations

from vakaudit.artifacts._base import ArtifactKind, Discipline, RegistryClass, WriteCard, WriteGroup

KIND = ArtifactKind(
    name="unclassified",
    title="Unclassified files",
    patterns=(),  # matches nothing by itself: classify() falls back to it
    card=WriteCard(
        writer="unknown",
        trigger="unknown",
        discipline="unknown",
        barriers_per_write=0,
        read="not read by vak as far as the registry knows",
        bound="unknown",
        group=WriteGroup.OTHER,
        read_class="flat",
        style=Discipline.UNKNOWN,
    ),
    registry_class=RegistryClass.UNDECLARED,
    description=__doc__,
    priority=-1_000,
)
