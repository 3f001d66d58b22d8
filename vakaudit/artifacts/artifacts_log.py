"""Artifacts: the 7.0 record chain of artifact events, ``artifacts/`` at the data root.

Rows ``{artifact, at, trace?, actor?, step, …}``: declared, versioned, removed, proposed, promoted,
renamed, starred, archived, trashed, erased, saved, downloaded, commented; ``path``, ``title``,
``summary`` and comment text are sealed under the artifact's scope; version bytes are objects
(baseline7.md §9.2). The kind is called ``artifacts_log`` so as not to read as vakaudit's own
``artifacts`` package.
"""

from __future__ import annotations

from vakaudit.artifacts._chain import chain_kind

KIND = chain_kind(
    __doc__,
    name="artifacts_log",
    title="Artifact events",
    dirs=("artifacts",),
    entries=(36,),
    owner="vak-core",
    trigger="an artifact is declared, versioned, promoted, commented or otherwise changed",
    bound="drafts: DraftVersion 60 d -> trash",
)
