"""One frame of a vak 7.0 record chain: layout, link hash, decoding (baseline7.md §3.1–§3.4).

The single definition of the frame format in vakaudit: ``len u32 LE || flags || payload || hash``
with ``len = 1 + payload length`` and ``hash = SHA-256(prev || len || flags || payload)``. A
plaintext payload is ``zstd(entry)``; a sealed one (flags bit 0) is AES-256-GCM of that under the
chain's scope key with the frame's byte offset in its segment (u64 LE) as associated data.

No I/O here, and nothing raises on bad bytes: a frame that cannot be decoded says so in
:attr:`Frame.problem`.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

from vakaudit.findings import FindingCode
from vakaudit.storage.codec import CodecError, u64le, unseal, unzstd

__all__ = [
    "GENESIS",
    "HASH_LEN",
    "HEADER_LEN",
    "OVERHEAD",
    "MAX_FRAME",
    "SEALED",
    "Frame",
    "link",
    "frame_size",
    "length_ok",
    "decode_payload",
    "read_frame",
]

#: ``prev`` of the first frame of segment 1 and of every standalone chain (``seals.log``).
GENESIS = bytes(32)
HASH_LEN = 32
HEADER_LEN = 5  # len (4) + flags (1)
OVERHEAD = 4 + HASH_LEN  # bytes of a frame that ``len`` does not count: the length field and the hash
#: Largest ``len`` vak writes or reads (64 MiB).
MAX_FRAME = 64 * 1024 * 1024
#: Flags bit 0: the payload is AEAD-sealed. vak's reader tests only this bit.
SEALED = 0x01

_LEN = struct.Struct("<I")


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame as read. ``entry`` is the plaintext entry when readable, else None.

    ``size_bytes`` is the frame's size on disk (``4 + len + 32``); ``plain_bytes`` the entry's
    size when it was read. ``problem`` names why ``entry`` is None for a frame that should have
    been readable (bad payload, undecryptable with the key given, torn, bad length); a sealed frame
    read without a key has no problem, just no entry.
    """

    index: int
    offset: int
    size_bytes: int
    flags: int
    sealed: bool
    entry: bytes | None
    hash: bytes = b""
    problem: FindingCode | None = None
    detail: str | None = None

    @property
    def plain_bytes(self) -> int | None:
        return None if self.entry is None else len(self.entry)

    def __repr__(self) -> str:
        # the entry may be a sealed conversation's plaintext: never in a repr
        return (
            f"Frame(index={self.index}, offset={self.offset}, size_bytes={self.size_bytes}, "
            f"flags={self.flags}, sealed={self.sealed}, plain_bytes={self.plain_bytes}, "
            f"problem={self.problem})"
        )


def frame_size(length: int) -> int:
    """Bytes on disk of a frame whose ``len`` field is ``length``."""
    return OVERHEAD + length


def length_ok(length: int) -> bool:
    """vak's rule 3 of §3.5: ``0 < len <= MAX_FRAME``."""
    return 0 < length <= MAX_FRAME


def link(prev: bytes, body: bytes) -> bytes:
    """The link hash of a frame whose ``flags || payload`` is ``body``, chained after ``prev``."""
    h = hashlib.sha256(prev)
    h.update(_LEN.pack(len(body)))
    h.update(body)
    return h.digest()


def decode_payload(
    flags: int, payload: bytes, offset: int, key: bytes | None
) -> tuple[bytes | None, FindingCode | None, str | None]:
    """``(entry, problem, detail)`` of a payload at byte ``offset`` of its segment."""
    data = payload
    if flags & SEALED:
        if key is None:
            return None, None, None
        try:
            data = unseal(key, u64le(offset), payload)
        except CodecError as exc:
            return None, FindingCode.FRAME_UNDECRYPTABLE, str(exc)
    try:
        return unzstd(data), None, None
    except CodecError as exc:
        return None, FindingCode.FRAME_BAD_PAYLOAD, str(exc)


def read_frame(data: bytes, offset: int, key: bytes | None = None, index: int = 0) -> Frame:
    """The frame at ``offset`` of a segment's bytes, on its own: no link check.

    ``offset`` is also the AAD of a sealed frame, so ``data`` must be the whole segment (or start
    where the segment starts).
    """
    view = memoryview(data)
    avail = len(view) - offset
    if avail < 4:
        return Frame(index, offset, max(avail, 0), 0, False, None, b"", FindingCode.FRAME_TORN_TAIL,
                     f"{max(avail, 0)} bytes, fewer than a length field")
    (length,) = _LEN.unpack_from(view, offset)
    if not length_ok(length):
        return Frame(index, offset, 0, 0, False, None, b"", FindingCode.FRAME_BAD_LENGTH,
                     f"len {length} is outside 1..{MAX_FRAME}")
    size = frame_size(length)
    flags = view[offset + 4]
    if avail < size:
        return Frame(index, offset, size, flags, bool(flags & SEALED), None, b"", FindingCode.FRAME_TORN_TAIL,
                     f"frame needs {size} bytes, {avail} left")
    payload = bytes(view[offset + HEADER_LEN : offset + 4 + length])
    stored = bytes(view[offset + 4 + length : offset + size])
    entry, problem, detail = decode_payload(flags, payload, offset, key)
    return Frame(index, offset, size, flags, bool(flags & SEALED), entry, stored, problem, detail)
