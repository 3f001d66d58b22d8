"""Skills: promoted skills (``skills/<name>/SKILL.md`` plus any files a skill ships) of a home.

Lives at ``<data>/skills/``, ``agents/<id>/skills/`` (G2) and the shared layer ``.vak/skills/``.
Written when a skill proposal is promoted (vak-core ``learning.rs`` copies the proposal) and by the
seeding of the shared layer; edited by people. Config, ``AdditiveOnly`` on update (home.md §3, §7.3).

Rows: one per ``SKILL.md`` (front-matter ``name`` and ``description``, size); other files of a skill
only count in the file table.
"""

from __future__ import annotations

from typing import Any

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import (
    ArtifactKind,
    Baseline7,
    Discipline,
    ReadContext,
    RegistryClass,
    WriteCard,
    WriteGroup,
    one_row_reader,
)
from vakaudit.artifacts._files import parent_name

_SCHEMA = decl.schema(
    [
        decl.field("rel_path", decl.string(), nullable=False),
        decl.field("home_scope", decl.string(), nullable=False),
        decl.field("skill_dir", decl.string()),  # the <name> directory
        decl.field("name", decl.string()),
        decl.field("description", decl.string()),
        decl.field("size_bytes", decl.int64(), nullable=False),
        decl.field("line_count", decl.int64(), nullable=False),
    ]
)


def _row_of(ctx: ReadContext) -> dict[str, Any] | None:
    """The row of one SKILL.md (None: another file), its findings emitted."""
    if ctx.rel_path.rsplit("/", 1)[-1] != "SKILL.md":
        return None
    from vakaudit.artifacts._markdown import scan_document  # the line reader's side, on the first file read

    doc = scan_document(ctx)
    meta = doc.front_matter
    row = {
        "rel_path": ctx.rel_path,
        "home_scope": ctx.home_scope,
        "skill_dir": parent_name(ctx.rel_path),
        "name": meta.get("name"),
        "description": meta.get("description"),
        "size_bytes": doc.size_bytes,
        "line_count": doc.line_count,
    }
    return row


reader = one_row_reader(_row_of, _SCHEMA, "One row per SKILL.md.")


KIND = ArtifactKind(
    name="skills",
    title="Skills",
    patterns=("**/skills/**",),
    card=WriteCard(
        writer="skill promotion (learning.rs) and shared-layer seeding — vak-core",
        trigger="a proposal is promoted; an operator adds or edits a skill",
        discipline="file copy / plain write; edited by people",
        barriers_per_write=0,
        read="skill index on demand",
        bound="size follows configuration, not usage",
        group=WriteGroup.MEMORY,
        read_class="flat",
        style=Discipline.FILES,
    ),
    v7=Baseline7(('**/skills/**',), (11, 54, 60), vak_class='Desired', owner='vak-core'),
    registry_class=RegistryClass.CONFIG,
    description=__doc__,
    declared_schema=_SCHEMA,
    reader=reader,
    priority=6,  # the whole tree is this kind's, `.vak/skills` included (beats the .vak config tree)
)

__getattr__ = decl.exports(__name__, SCHEMA=_SCHEMA)
