"""Lifecycle: the 7.0 record chain of retention actions, ``lifecycle/`` at the data root.

Rows ``{at, key, class, item, does, reason, bytes, files, state, error_kind?}``; ``started`` is
written before anything is touched, then ``committed`` or ``failed`` (baseline7.md §9.1-§9.2).
"""

from __future__ import annotations

from vakaudit.artifacts._chain import chain_kind

KIND = chain_kind(
    __doc__,
    name="lifecycle",
    title="Lifecycle actions",
    dirs=("lifecycle",),
    entries=(35,),
    owner="vak-core",
    trigger="the lifecycle pass removes, trashes or evicts an item",
)
