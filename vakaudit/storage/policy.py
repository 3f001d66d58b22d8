"""The severity of every finding code ``vakaudit.storage`` reports (documented in docs/ci-gates.md).

No I/O here.
"""

from __future__ import annotations

from vakaudit.findings import Finding, FindingCode, Severity

__all__ = ["SEVERITY", "finding"]

C = FindingCode
S = Severity

SEVERITY: dict[FindingCode, Severity] = {
    # bytes changed after they were written, or cannot be read as written
    C.FRAME_BAD_LINK: S.ERROR,
    C.FRAME_BAD_LENGTH: S.ERROR,
    C.FRAME_TORN_TAIL: S.WARNING,  # an interrupted append: vak trims it on its next write
    C.FRAME_UNDECRYPTABLE: S.ERROR,  # only reported when a key was given
    C.FRAME_BAD_PAYLOAD: S.ERROR,
    C.SEGMENT_MALFORMED: S.ERROR,
    C.SEGMENT_SEAL_MISMATCH: S.ERROR,
    C.SEGMENT_SEAL_MISSING: S.ERROR,
    C.SEGMENT_DISCONTINUOUS: S.ERROR,
    C.SEGMENT_GAP: S.ERROR,
    C.SEALS_LOG_BAD_ENTRY: S.ERROR,
    # states vak leaves behind by design
    C.SEGMENT_SEALING_LEFTOVER: S.INFO,
    C.SEGMENT_INTERRUPTED_SEAL: S.INFO,
    C.SEGMENT_DROPPED: S.INFO,
    # tenant store and keys
    C.SCOPE_KEY_MALFORMED: S.ERROR,
    C.SCOPE_KEY_MISSING: S.ERROR,  # a KEY names a scope that has neither a key nor a tombstone
    C.SCOPE_ERASED: S.INFO,  # a crypto-shredded scope: erased on purpose, not damage
    C.GRANT_MALFORMED: S.ERROR,
    C.OBJECT_ID_MISMATCH: S.ERROR,
    C.REFS_DB_UNREADABLE: S.ERROR,
    C.DOCUMENT_MALFORMED: S.ERROR,
}


def finding(code: FindingCode, rel_path: str | None, message: str, **fields: object) -> Finding:
    """A :class:`Finding` of ``code`` with its storage severity."""
    return Finding(code, SEVERITY[code], rel_path, message, **fields)  # type: ignore[arg-type]
