"""Canvas: one rewritten Canvas file per conversation, ``agents/<a>/canvas/<session id>.json`` (7.0).

Written by vak-server when a conversation's Canvas changes: the whole file is rewritten (REGISTRY
class Document, though it is a file, unlike the tenant-store Documents). Read whole when the Canvas
is shown (baseline7.md §2.4).
"""

from __future__ import annotations

from vakaudit.artifacts._base import (
    ArtifactKind,
    Baseline7,
    Discipline,
    RegistryClass,
    WriteCard,
    WriteGroup,
    stem_session_id,
)

KIND = ArtifactKind(
    name="canvas",
    title="Canvas",
    patterns=(),
    card=WriteCard(
        writer="vak-server Canvas store",
        trigger="a conversation's Canvas changes",
        discipline="whole-file rewrite",
        barriers_per_write=0,
        read="whole file when the Canvas is shown",
        bound="one file per conversation",
        group=WriteGroup.MEMORY,
        read_class="session",
        style=Discipline.REWRITE,
    ),
    registry_class=RegistryClass.DOCUMENT,
    description=__doc__,
    priority=12,
    session_id_of=stem_session_id,
    v7=Baseline7(("agents/*/canvas/**",), entries=(23,), vak_class="Document", owner="vak-server"),
)
