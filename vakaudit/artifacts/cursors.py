"""Cursors: the 7.0 record chain of stream cursor gaps, ``cursors/`` at the data root.

Rows ``{owner, stream, at, from?, to, reason, trace?, actor?}`` (gap rows only; the cursors
themselves are ``cur/`` refs) (baseline7.md §5.4, §9.2).
"""

from __future__ import annotations

from vakaudit.artifacts._chain import chain_kind

KIND = chain_kind(
    __doc__,
    name="cursors",
    title="Cursor gaps",
    dirs=("cursors",),
    entries=(38,),
    owner="vak-session",
    trigger="a stream cursor skips a gap",
)
