"""vak's derived typed ids (baseline7.md §6.8) and the names built from them.

``<prefix>_<hyphenated UUID>``; ``derived(seed)`` puts the first 10 bytes of
``SHA-256(prefix || 0x00 || seed)`` into a UUIDv7 layout with timestamp 0. No I/O here.
"""

from __future__ import annotations

import hashlib
import uuid

from vakaudit.storage.commit import REQUEST_REF_PREFIX

__all__ = ["derived_id", "admission_ref", "unbound_key", "fnv1a64"]


def fnv1a64(data: bytes) -> int:
    """FNV-1a 64-bit, as vak names unbound space keys and credential-store scopes."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def derived_id(prefix: str, seed: str) -> str:
    """``TenantId::derived("local")`` is ``derived_id("ten", "local")``."""
    d = hashlib.sha256(prefix.encode("utf-8") + b"\0" + seed.encode("utf-8")).digest()[:10]
    b = bytearray(16)  # bytes 0-5: timestamp 0
    b[6:8] = (0x7000 | ((d[0] << 8 | d[1]) & 0x0FFF)).to_bytes(2, "big")
    b[8] = (d[2] & 0x3F) | 0x80
    b[9:16] = d[3:10]
    return f"{prefix}_{uuid.UUID(bytes=bytes(b))}"


def admission_ref(session_id: str, request_id: str) -> str:
    """The ref that admits request ``request_id`` of a session (§5.4 ``req/``)."""
    return f"{REQUEST_REF_PREFIX}{session_id}/{hashlib.sha256(request_id.encode('utf-8')).hexdigest()}"


def unbound_key(canonical_path: str) -> str:
    """The space key of a path bound to no space: ``unbound-`` + FNV-1a-64 hex (§2.3)."""
    return f"unbound-{fnv1a64(canonical_path.encode('utf-8')):016x}"
