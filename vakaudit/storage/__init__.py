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

from vakaudit.storage.chain import ChainRead, ChainWalk, iter_frames, read_chain
from vakaudit.storage.frames import GENESIS, MAX_FRAME, Frame, read_frame
from vakaudit.storage.keys import KeyRing, TenantKeys, WrappedKey
from vakaudit.storage.objects import Store
from vakaudit.storage.segments import (
    SealEntry,
    SegmentRead,
    SegmentsRead,
    SegmentWalk,
    iter_segments,
    read_segments,
)

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
