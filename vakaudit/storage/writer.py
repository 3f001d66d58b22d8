"""Write vak 7.0 storage bytes: frames, chains, segment sets (for tests and synthetic homes).

Output is what vak's storage writes, byte for byte where the format allows it: with
``compress="raw"`` payloads are raw-block zstd frames, whose bytes depend on nothing but the
entry; ``compress="zstd"`` uses libzstd level 3 as vak does (equal bytes with the same libzstd).
AES-GCM nonces are random in vak; here they come from ``nonces`` so output can be deterministic.

This writes only where it is told to (a fresh directory of the caller's); it never touches a
home it reads.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from vakaudit.storage.codec import NONCE_LEN, seal, u64le, zstd_level3, zstd_raw
from vakaudit.storage.frames import GENESIS, MAX_FRAME, SEALED, link
from vakaudit.storage.segments import (
    COMPRESSED,
    KEY,
    LOCK,
    SEALED_MAGIC,
    SEALS_LOG,
    VERBATIM,
    seal_entry_text,
    segment_name,
)

__all__ = ["Compress", "encode_frame", "ChainWriter", "write_segment_set", "SegmentSpec", "sealed_segment_bytes",
           "SegmentAppender"]

Compress = Literal["raw", "zstd"]
Nonces = Callable[[], bytes]


def _compress(data: bytes, compress: Compress) -> bytes:
    return zstd_raw(data) if compress == "raw" else zstd_level3(data)


def encode_frame(
    prev: bytes,
    entry: bytes,
    *,
    offset: int = 0,
    key: bytes | None = None,
    nonce: bytes | None = None,
    compress: Compress = "raw",
) -> tuple[bytes, bytes]:
    """``(frame bytes, link hash)`` of ``entry`` chained after ``prev`` at byte ``offset``.

    With ``key`` the payload is sealed (flags 1) with AAD = ``offset`` as u64 LE.
    """
    payload = _compress(entry, compress)
    flags = 0
    if key is not None:
        payload = seal(key, nonce if nonce is not None else os.urandom(NONCE_LEN), u64le(offset), payload)
        flags = SEALED
    body = bytes([flags]) + payload
    if len(body) > MAX_FRAME:
        raise ValueError("entry too large")
    h = link(prev, body)
    return struct.pack("<I", len(body)) + body + h, h


class ChainWriter:
    """Append frames to an in-memory chain; ``data`` is the chain's bytes, ``head`` its head."""

    def __init__(self, prev: bytes = GENESIS, *, key: bytes | None = None, compress: Compress = "raw",
                 nonces: Nonces | None = None) -> None:
        self.head = prev
        self.key = key
        self.compress: Compress = compress
        self._nonces = nonces or (lambda: os.urandom(NONCE_LEN))
        self._parts: list[bytes] = []
        self.offset = 0
        self.entries = 0
        self.sealed_frames = 0

    def append(self, entry: bytes) -> bytes:
        """Append one frame; returns its bytes."""
        nonce = self._nonces() if self.key is not None else None
        frame, self.head = encode_frame(self.head, entry, offset=self.offset, key=self.key, nonce=nonce,
                                        compress=self.compress)
        self._parts.append(frame)
        self.offset += len(frame)
        self.entries += 1
        if self.key is not None:
            self.sealed_frames += 1
        return frame

    def extend(self, entries: Iterable[bytes]) -> None:
        for e in entries:
            self.append(e)

    @property
    def data(self) -> bytes:
        return b"".join(self._parts)


def sealed_segment_bytes(frames: bytes, any_sealed: bool) -> bytes:
    """A ``.sealed`` file: magic, flag, then level-3 zstd of the frames (flag 1) or the frames (flag 0)."""
    if any_sealed:
        return SEALED_MAGIC + bytes([VERBATIM]) + frames
    return SEALED_MAGIC + bytes([COMPRESSED]) + zstd_level3(frames)


@dataclass(frozen=True, slots=True)
class SegmentSpec:
    """One segment to write: its entries, whether it is sealed, and whether its file is kept."""

    entries: Sequence[bytes]
    sealed: bool = True
    dropped: bool = False  # sealed, then removed by retention (its seal entry stays)


def write_segment_set(
    directory: Path,
    segments: Sequence[SegmentSpec],
    *,
    key: bytes | None = None,
    scope: str | None = None,
    compress: Compress = "raw",
    nonces: Nonces | None = None,
    seals_compress: Compress = "raw",
) -> list[tuple[int, int, bytes, bool]]:
    """Write segments 1..n into ``directory`` as vak leaves them; returns the seal entries written.

    Sealed segments get their ``seals.log`` entry (``segment, entries, head, compressed``); the
    last segment may be open (``sealed=False``). ``LOCK`` is created empty; ``KEY`` holds
    ``scope`` when given (frames are sealed with ``key``).
    """
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "LOCK").write_bytes(b"")
    if scope is not None:
        (directory / "KEY").write_text(scope, encoding="utf-8")
    seals = ChainWriter(compress=seals_compress)
    written: list[tuple[int, int, bytes, bool]] = []
    prev = GENESIS
    for number, spec in enumerate(segments, start=1):
        w = ChainWriter(prev, key=key, compress=compress, nonces=nonces)
        w.extend(spec.entries)
        prev = w.head
        if not spec.sealed:
            (directory / segment_name(number, "log")).write_bytes(w.data)
            continue
        compressed = w.sealed_frames == 0
        if not spec.dropped:
            (directory / segment_name(number, "sealed")).write_bytes(sealed_segment_bytes(w.data, not compressed))
        seals.append(seal_entry_text(number, w.entries, w.head, compressed))
        written.append((number, w.entries, w.head, compressed))
    if written:
        (directory / SEALS_LOG).write_bytes(seals.data)
    return written


_fdatasync = getattr(os, "fdatasync", os.fsync)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class SegmentAppender:
    """Append entries to a segment directory one at a time, as vak's writers do (§3.6-§3.8, §8.3).

    Frames go unsynced into the open ``seg-N.log``; ``append(..., sync=True)`` ends with one
    ``fdatasync`` (a commit point). :meth:`seal` seals the open segment the way ``seal_until`` does
    (``.sealing`` copy synced, renamed to ``.sealed``, directory synced, the ``seals.log`` entry
    appended and synced, the ``.log`` removed); with ``rotate_bytes`` an append that leaves the
    ``.log`` at or past that size seals it. ``syncs`` counts every sync point reached (also when
    ``fsync=False`` skips the system calls); :meth:`close` syncs unsynced frames (a dropped writer
    syncs).
    """

    def __init__(self, directory: Path, *, key: bytes | None = None, scope: str | None = None,
                 compress: Compress = "zstd", nonces: Nonces | None = None, rotate_bytes: int | None = None,
                 fsync: bool = True) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / LOCK).touch()
        if scope is not None:
            tmp = self.directory / (KEY + ".tmp")
            tmp.write_text(scope, encoding="utf-8")
            os.replace(tmp, self.directory / KEY)
        self.key, self.compress, self._nonces = key, compress, nonces
        self.rotate_bytes, self.fsync = rotate_bytes, fsync
        self.number = 1
        self._w = ChainWriter(GENESIS, key=key, compress=compress, nonces=nonces)
        self._seals = ChainWriter(compress="raw")
        self._fh = None
        self._dirty = False
        self.syncs = 0
        self.sealed_segments = 0
        self.entries = 0

    @property
    def position(self) -> tuple[int, int]:
        """(open segment number, frames already in it): where the next frame goes."""
        return self.number, self._w.entries

    def _sync(self, fd: int | None = None) -> None:
        self.syncs += 1
        if self.fsync and fd is not None:
            _fdatasync(fd)

    def append(self, entry: bytes, *, sync: bool = False) -> bytes:
        """Append ``entry`` as one frame at the open segment's end; returns the frame bytes."""
        if self._fh is None:
            self._fh = open(self.directory / segment_name(self.number, "log"), "ab")  # noqa: SIM115
        frame = self._w.append(entry)
        self._fh.write(frame)
        self.entries += 1
        self._dirty = True
        if sync:
            self._fh.flush()
            self._sync(self._fh.fileno())
            self._dirty = False
        if self.rotate_bytes is not None and self._w.offset >= self.rotate_bytes:
            self.seal()
        return frame

    def seal(self) -> None:
        """Seal the open segment (nothing to do when it holds no frame)."""
        if self._w.entries == 0:
            return
        self._close_log()
        d, n = self.directory, self.number
        compressed = self._w.sealed_frames == 0
        sealing = d / segment_name(n, "sealing")
        with open(sealing, "wb") as fh:
            fh.write(sealed_segment_bytes(self._w.data, not compressed))
            fh.flush()
            self._sync(fh.fileno())
        os.replace(sealing, d / segment_name(n, "sealed"))
        self._sync()
        if self.fsync:
            _fsync_dir(d)
        frame = self._seals.append(seal_entry_text(n, self._w.entries, self._w.head, compressed))
        with open(d / SEALS_LOG, "ab") as fh:
            fh.write(frame)
            fh.flush()
            self._sync(fh.fileno())
        (d / segment_name(n, "log")).unlink()
        self._sync()
        if self.fsync:
            _fsync_dir(d)
        self.sealed_segments += 1
        self.number += 1
        self._w = ChainWriter(self._w.head, key=self.key, compress=self.compress, nonces=self._nonces)

    def _close_log(self) -> None:
        if self._fh is not None:
            self._fh.flush()
            if self._dirty:
                self._sync(self._fh.fileno())
                self._dirty = False
            self._fh.close()
            self._fh = None

    def close(self) -> None:
        """Sync what is unsynced and close the open segment (it stays open: ``seg-N.log``)."""
        self._close_log()
