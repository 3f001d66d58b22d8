"""zstd payloads and AES-256-GCM sealing as vak's storage writes them (baseline7.md §3.2, §3.3).

Pure byte functions, no I/O. The one place that knows the sealed-value layout
``nonce(12) || ciphertext || tag(16)`` and how a payload is compressed.
"""

from __future__ import annotations

import functools
import struct
import threading

# zstandard and cryptography are imported where they are used: a command that never opens a 7.0
# frame (every command on a JSONL-era home) does not pay for them at start-up.

__all__ = [
    "KEY_LEN",
    "NONCE_LEN",
    "TAG_LEN",
    "MAX_PLAINTEXT",
    "ZSTD_LEVEL",
    "CodecError",
    "zstd_raw",
    "zstd_level3",
    "unzstd",
    "seal",
    "unseal",
    "u64le",
]

KEY_LEN = 32
NONCE_LEN = 12
TAG_LEN = 16
#: vak's decompressed-size limit for one payload (256 MiB).
MAX_PLAINTEXT = 256 * 1024 * 1024
#: vak compresses with zstd one-shot at level 3 (content size in the frame, no checksum).
ZSTD_LEVEL = 3

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_SKIPPABLE = 0x184D2A50  # skippable frame magics are 0x184D2A50..0x184D2A5F
_RAW_BLOCK_MAX = (1 << 17) - 1  # a zstd block holds at most 128 KiB; keep under it


class CodecError(ValueError):
    """A payload that does not decompress or does not open (never leaves vakaudit.storage)."""


def u64le(n: int) -> bytes:
    return struct.pack("<Q", n)


def zstd_raw(data: bytes) -> bytes:
    """``data`` as one zstd frame of raw (stored) blocks, with its content size.

    The bytes depend on nothing but ``data`` (no compressor, no version), which is what makes a
    writer's output byte-identical to baseline7.md §13 ``Z(x)``.
    """
    n = len(data)
    # Frame header descriptor: single-segment bit (0x20) and the content-size field width.
    if n < 256:
        head = bytes([0x20]) + bytes([n])
    elif n < 65536 + 256:
        head = bytes([0x60]) + struct.pack("<H", n - 256)
    elif n < 1 << 32:
        head = bytes([0xA0]) + struct.pack("<I", n)
    else:
        head = bytes([0xE0]) + struct.pack("<Q", n)
    out = bytearray(_ZSTD_MAGIC + head)
    if n == 0:
        out += (1).to_bytes(3, "little")  # one empty last raw block
        return bytes(out)
    for start in range(0, n, _RAW_BLOCK_MAX):
        chunk = data[start : start + _RAW_BLOCK_MAX]
        last = 1 if start + _RAW_BLOCK_MAX >= n else 0
        out += (last | (len(chunk) << 3)).to_bytes(3, "little")  # block type 0 = raw
        out += chunk
    return bytes(out)


def zstd_level3(data: bytes) -> bytes:
    """``data`` compressed as vak's writer does (libzstd level 3, content size, no checksum)."""
    import zstandard

    return zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_content_size=True).compress(data)


_PER_THREAD = threading.local()


def _decompressor():
    """This thread's zstd decompression context (building one costs ~20x a small frame's read)."""
    dctx = getattr(_PER_THREAD, "dctx", None)
    if dctx is None:
        import zstandard

        dctx = _PER_THREAD.dctx = zstandard.ZstdDecompressor()
    return dctx


@functools.lru_cache(maxsize=64)
def _aead(key: bytes):
    """The AES-256-GCM cipher for ``key``, built once (a home's frames share few keys).

    Held in memory only; the cache is never written or shown anywhere.
    """
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    return AESGCM(key)


def unzstd(payload: bytes, limit: int = MAX_PLAINTEXT) -> bytes:
    """The content of a zstd payload, at most ``limit`` bytes; :class:`CodecError` otherwise.

    vak writes one frame with its content size. Its reader (``zstd::bulk::decompress``, i.e.
    ``ZSTD_decompressDCtx``) also takes frames without a content size, several concatenated
    frames, skippable frames and an empty payload, so all of those are read here too.
    """
    import zstandard

    # what vak writes, in one call: a single frame declaring its size, within the limit, nothing
    # after it (2.5x faster for a small frame); anything else is the general loop's to read or name
    try:
        size = zstandard.frame_content_size(payload)
    except zstandard.ZstdError:
        size = -1
    if 0 < size <= limit:
        try:
            whole = _decompressor().decompress(payload, allow_extra_data=False)
        except zstandard.ZstdError:
            whole = None
        if whole is not None and len(whole) == size:
            return whole
    out = bytearray()
    rest = memoryview(payload)
    while rest:
        if len(rest) >= 8 and (int.from_bytes(rest[:4], "little") & 0xFFFFFFF0) == _SKIPPABLE:
            size = int.from_bytes(rest[4:8], "little")
            if 8 + size > len(rest):
                raise CodecError("skippable zstd frame runs past the end")
            rest = rest[8 + size :]
            continue
        try:
            params = zstandard.get_frame_parameters(bytes(rest[:18]))
        except zstandard.ZstdError as exc:
            raise CodecError(f"not a zstd frame: {exc}") from None
        if params.content_size != zstandard.CONTENTSIZE_UNKNOWN and len(out) + params.content_size > limit:
            raise CodecError(f"declares more than the {limit}-byte limit")
        dobj = _decompressor().decompressobj()
        try:
            out += dobj.decompress(bytes(rest))
        except zstandard.ZstdError as exc:
            raise CodecError(f"zstd: {exc}") from None
        if not dobj.eof:
            raise CodecError("zstd frame is incomplete")
        if len(out) > limit:
            raise CodecError(f"decompresses to more than the {limit}-byte limit")
        rest = memoryview(dobj.unused_data)
    return bytes(out)


def seal(key: bytes, nonce: bytes, aad: bytes, plaintext: bytes) -> bytes:
    """``nonce || AES-256-GCM(key, nonce, aad, plaintext) || tag``."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    return nonce + AESGCM(key).encrypt(nonce, plaintext, aad)


def unseal(key: bytes, aad: bytes, value: bytes) -> bytes:
    """Open a sealed value; :class:`CodecError` when it is too short or does not authenticate."""
    if len(value) < NONCE_LEN + TAG_LEN:
        raise CodecError(f"sealed value of {len(value)} bytes is shorter than nonce and tag")
    if len(key) != KEY_LEN:
        raise CodecError("key is not 32 bytes")
    try:  # (a frame's hot path: the exception class is imported only when one is raised)
        return _aead(key if type(key) is bytes else bytes(key)).decrypt(value[:NONCE_LEN], value[NONCE_LEN:], aad)
    except Exception as exc:
        from cryptography.exceptions import InvalidTag

        if isinstance(exc, InvalidTag):
            raise CodecError("does not authenticate with the given key") from None
        raise
