"""vak's 7.0 storage substrate, read side, plus a writer for tests and synthetic homes.

Frames and record chains (``codec``: zstd and AES-GCM; ``frames``, ``chain``), segment
directories (``segments``), the tenant store's objects, grants and blobs (``objects``), refs
(``refs``), Documents (``documents``) and keys (``keys``); the severity of each finding code
(``policy``); writers for tests and synthetic homes (``writer``: chains and segment sets;
``tenant_writer``: store, keys, key files); derived ids and names (``ids``). The format facts are baseline7.md §3–§7; each is
defined once here.

Reading never raises on bad data: problems are :class:`vakaudit.findings.Finding` rows and the
rest is still read. Nothing here writes, locks, truncates or repairs anything it reads (a
``refs.db`` is opened as a private copy). Key material never appears in a repr, str, exception
or finding.
"""

from __future__ import annotations

from vakaudit._lazy import lazy_exports

# Names resolve on first use (PEP 562), as in vakaudit.ledger: importing one small module of this
# package (ids, policy, frames) does not import the key ring, the object store and their crypto.
_LAZY: dict[str, str] = {
    "ChainRead": "vakaudit.storage.chain",
    "ChainWalk": "vakaudit.storage.chain",
    "iter_frames": "vakaudit.storage.chain",
    "read_chain": "vakaudit.storage.chain",
    "GENESIS": "vakaudit.storage.frames",
    "MAX_FRAME": "vakaudit.storage.frames",
    "Frame": "vakaudit.storage.frames",
    "read_frame": "vakaudit.storage.frames",
    "KeyRing": "vakaudit.storage.keys",
    "TenantKeys": "vakaudit.storage.keys",
    "WrappedKey": "vakaudit.storage.keys",
    "Store": "vakaudit.storage.objects",
    "SealEntry": "vakaudit.storage.segments",
    "SegmentRead": "vakaudit.storage.segments",
    "SegmentsRead": "vakaudit.storage.segments",
    "SegmentWalk": "vakaudit.storage.segments",
    "iter_segments": "vakaudit.storage.segments",
    "read_segments": "vakaudit.storage.segments",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())


__all__ = [
    "GENESIS",
    "MAX_FRAME",
    "ChainRead",
    "ChainWalk",
    "Frame",
    "KeyRing",
    "SealEntry",
    "SegmentRead",
    "SegmentWalk",
    "SegmentsRead",
    "Store",
    "TenantKeys",
    "WrappedKey",
    "iter_frames",
    "iter_segments",
    "read_chain",
    "read_frame",
    "read_segments",
]
