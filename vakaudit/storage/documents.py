"""Documents of a vak 7.0 tenant (baseline7.md §7.1): versions as objects, the current one by ref.

A save writes a content object and a version object whose plaintext is
``v1\\nparent:<version id or ->\\ncontent:<content id>\\nseq:<n>``; ref ``doc/<name>`` targets the
current version's id (ASCII) or the literal ``forgotten``. Scope: ``agent:<a>`` for names under
``agents/<a>/``, else ``tenant`` (§7.2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from vakaudit.errors import ObjectUnavailableError
from vakaudit.findings import Finding, FindingCode
from vakaudit.storage.policy import finding


class Store(Protocol):
    """What a Document read needs of a tenant store (:class:`vakaudit.storage.objects.Store` is
    one): its refs, its objects by id and scope, and where to put findings."""

    findings: list[Finding]

    def refs(self) -> list[tuple[str, int, int, bytes]]: ...

    def object(self, object_id: str, scope: str) -> bytes: ...

    def rel_of(self, sub: str) -> str: ...

__all__ = ["DOC_PREFIX", "FORGOTTEN", "Version", "version_text", "parse_version", "document_scope",
           "read_document", "document_versions"]

DOC_PREFIX = "doc/"
FORGOTTEN = b"forgotten"
_VERSION = re.compile(r"v1\nparent:(-|[0-9a-f]{64})\ncontent:([0-9a-f]{64})\nseq:([0-9]+)")


@dataclass(frozen=True, slots=True)
class Version:
    id: str
    parent: str | None
    content: str
    seq: int


def version_text(parent: str | None, content: str, seq: int) -> bytes:
    return f"v1\nparent:{parent or '-'}\ncontent:{content}\nseq:{seq}".encode("ascii")


def parse_version(version_id: str, text: bytes) -> Version | None:
    m = _VERSION.fullmatch(text.decode("ascii", "replace"))
    if m is None:
        return None
    return Version(version_id, None if m[1] == "-" else m[1], m[2], int(m[3]))


def document_scope(name: str) -> str:
    parts = name.split("/")
    return f"agent:{parts[1]}" if len(parts) > 2 and parts[0] == "agents" else "tenant"


def _current(store: Store, name: str) -> bytes | None:
    for ref, _gen, _epoch, target in store.refs():
        if ref == DOC_PREFIX + name:
            return target
    return None


def _version(store: Store, version_id: str, scope: str, name: str) -> Version | None:
    v = parse_version(version_id, store.object(version_id, scope))
    if v is None:
        store.findings.append(finding(FindingCode.DOCUMENT_MALFORMED, store.rel_of("refs.db"),
                                      f"document {name!r}: version object {version_id} is not a v1 version"))
    return v


def read_document(store: Store, name: str, scope: str) -> bytes | None:
    """The current content of ``name``; None without a ref or when forgotten.

    Raises :class:`ObjectUnavailableError` when the version or content object cannot be opened.
    """
    target = _current(store, name)
    if target is None or target == FORGOTTEN:
        return None
    version_id = target.decode("ascii", "replace")
    v = _version(store, version_id, scope, name)
    if v is None:
        return None
    return store.object(v.content, scope)


def document_versions(store: Store, name: str, scope: str) -> list[Version]:
    """The current version and its ancestors, newest first (stops where a version is missing)."""
    target = _current(store, name)
    out: list[Version] = []
    vid = None if target is None or target == FORGOTTEN else target.decode("ascii", "replace")
    seen = set()
    while vid is not None and vid not in seen:
        seen.add(vid)
        try:
            v = _version(store, vid, scope, name)
        except ObjectUnavailableError:
            break
        if v is None:
            break
        out.append(v)
        vid = v.parent
    return out
