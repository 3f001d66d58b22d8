"""Secrets: the encrypted credential store and its key, sized and never opened.

Lives in the Shared root (``<H>/vak-home/`` with ``VAK_HOME``, else ``~/vak-home/``):
``credentials.enc``, ``.credential_key`` and ``.credential_key.lock`` (G2). Written by vak-config when
an operator stores or rotates a credential. Registry: Secret, Untouched, never backed up (a built-in
test enforces it). vakaudit must not read them (home.md §10): the walk records their size only.
"""

from __future__ import annotations

from vakaudit.artifacts._base import ArtifactKind, Baseline7, Discipline, RegistryClass, WriteCard, WriteGroup

KIND = ArtifactKind(
    name="secrets",
    title="Secrets",
    patterns=("**/credentials.enc", "**/.credential_key", "**/.credential_key.lock"),
    card=WriteCard(
        writer="vak-config credential store",
        trigger="an operator stores or rotates a credential",
        discipline="encrypted file rewrite (never inspected by vakaudit)",
        barriers_per_write=0,
        read="on demand by vak-config",
        bound="size follows configuration, not usage",
        group=WriteGroup.SECRET,
        read_class="flat",
        style=Discipline.REWRITE,
    ),
    v7=Baseline7(('credentials.enc', 'credentials.enc.tmp', '.credential_key', '.credential_key.lock', 'vak-home/.env'), (55, 56, 57, 58), vak_class='Secret', owner='vak-config'),
    registry_class=RegistryClass.SECRET,
    description=__doc__,
    secret=True,
    priority=100,  # wins everywhere: a secret is never handed to a reader
)
