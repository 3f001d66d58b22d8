"""Sandbox working trees: candidate, staging, revision, preview and promotion copies of workspaces.

Lives under ``<sessions_home>/sandbox/`` — ``candidates/``, ``staging/``, ``revisions/``,
``previews/`` and ``promotions/`` (the last undeclared, D10) — plus any other file directly in
``sandbox/`` (``records.jsonl`` and ``executions/`` have their own kinds). Written by vak-server while
it prepares, verifies and promotes sandboxed changes: working trees and objects, not rows (home.md
§6.2). Whatever a file inside is called, it is a copy, so this kind outranks every name-based kind.
"""

from __future__ import annotations

from vakaudit.artifacts._base import ArtifactKind, Baseline7, Discipline, RegistryClass, WriteCard, WriteGroup

KIND = ArtifactKind(
    name="sandbox_files",
    title="Sandbox working trees",
    patterns=(
        "**/sandbox/candidates/**",
        "**/sandbox/staging/**",
        "**/sandbox/revisions/**",
        "**/sandbox/previews/**",
        "**/sandbox/promotions/**",
        "**/sandbox/*",
    ),
    card=WriteCard(
        writer="sandbox preparation and promotion — vak-server",
        trigger="a sandboxed execution produces a candidate, preview or promotion",
        discipline="working-tree copies and objects",
        barriers_per_write=0,
        read="per candidate / preview",
        bound="none found",
        group=WriteGroup.SANDBOX,
        read_class="flat",
        style=Discipline.FILES,
    ),
    v7=Baseline7(('**/sandbox/candidates/**', '**/sandbox/*'), (21,), vak_class='Record', owner='vak-server'),
    registry_class=RegistryClass.LEDGER,
    description=__doc__,
    priority=28,  # below the two sandbox row kinds (30), above checkpoints and session ledgers
)
