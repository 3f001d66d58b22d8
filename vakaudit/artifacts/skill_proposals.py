"""Skill proposals: skills the model proposes for a workspace, waiting to be promoted or rejected.

Lives at ``<sessions_home>/skill-proposals/<wskey>/<uuidv7-simple>.md``. Written by the
``propose_skill`` tool (vak-core ``learning.rs``) with a plain ``fs::write``: front matter with
``name`` (kebab-case), ``description`` and optional ``duplicate-of``, a Markdown body, and a trailing
``<!-- proposed-by: <session> at <rfc3339>; proposal id <id> -->`` line. Promoting copies it to
``skills/<name>/SKILL.md`` and deletes the proposal; rejecting deletes it (home.md §7.3).

Rows: one per proposal file; the body is sized, not stored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import (
    ArtifactKind,
    Discipline,
    ReadContext,
    RegistryClass,
    WriteCard,
    WriteGroup,
)
from vakaudit.artifacts._files import parent_name
from vakaudit.artifacts._timestamps import TIMESTAMP, timestamp

if TYPE_CHECKING:
    import pyarrow as pa

_SCHEMA = decl.schema(
    [
        decl.field("rel_path", decl.string(), nullable=False),
        decl.field("home_scope", decl.string(), nullable=False),
        decl.field("proposals_scope", decl.string()),  # the <wskey> directory
        decl.field("proposal_id", decl.string()),  # file stem, or the id in the trailing comment
        decl.field("name", decl.string()),
        decl.field("description", decl.string()),
        decl.field("duplicate_of", decl.string()),
        decl.field("proposed_by", decl.string()),  # session
        decl.field("proposed_at", TIMESTAMP),
        decl.field("size_bytes", decl.int64(), nullable=False),
        decl.field("line_count", decl.int64(), nullable=False),
    ]
)

_TRAILER = re.compile(r"<!--\s*proposed-by:\s*(\S+)\s+at\s+(\S+?);\s*proposal id\s+(\S+)\s*-->")


def reader(ctx: ReadContext) -> Iterator[pa.RecordBatch]:
    """One row per proposal file."""
    import pyarrow as pa

    if not ctx.rel_path.endswith(".md"):
        return
    from vakaudit.artifacts._markdown import scan_document  # the line reader's side, on the first file read

    doc = scan_document(ctx, b"proposed-by:")
    meta = doc.front_matter
    trailer = _TRAILER.search(doc.last_match) if doc.last_match else None
    stem = ctx.rel_path.rsplit("/", 1)[-1].removesuffix(".md")
    row = {
        "rel_path": ctx.rel_path,
        "home_scope": ctx.home_scope,
        "proposals_scope": parent_name(ctx.rel_path),
        "proposal_id": trailer.group(3) if trailer else stem,
        "name": meta.get("name"),
        "description": meta.get("description"),
        "duplicate_of": meta.get("duplicate-of"),
        "proposed_by": trailer.group(1) if trailer else None,
        "proposed_at": timestamp(trailer.group(2)) if trailer else None,
        "size_bytes": doc.size_bytes,
        "line_count": doc.line_count,
    }
    yield pa.RecordBatch.from_pylist([row], schema=_SCHEMA.arrow())


KIND = ArtifactKind(
    name="skill_proposals",
    title="Skill proposals",
    patterns=("**/skill-proposals/**",),
    card=WriteCard(
        writer="propose_skill tool — vak-core learning.rs",
        trigger="the model proposes a reusable skill",
        discipline="plain fs::write of one file per proposal; promote = copy + delete, reject = delete",
        barriers_per_write=0,
        read="listed on demand",
        bound="none",
        group=WriteGroup.MEMORY,
        read_class="flat",
        style=Discipline.FILES,
    ),
    registry_class=RegistryClass.DOCUMENT,
    description=__doc__,
    declared_schema=_SCHEMA,
    reader=reader,
    priority=5,  # the whole tree is this kind's
)

__getattr__ = decl.exports(__name__, SCHEMA=_SCHEMA)
