"""The tenant object store of vak 7.0: object ids, layout, bodies, grants, blobs (baseline7.md §4).

``<t>/store/cas/objects/<id[0:2]>/<id[2:]>`` holds ``seal(object key, aad = id ASCII,
zstd(plaintext))``; ``cas/grants/<id>/<hex(scope)>`` holds the object key wrapped for one scope.
Keyless, a :class:`Store` still lists objects, their stored sizes and the scopes granted (by file
name); with a :class:`KeyRing` it opens bodies and checks ids.

Read-only: ``refs.db`` is read from a private copy (``refs.py``); nothing in the store is opened
for writing.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from vakaudit.errors import ObjectUnavailableError
from vakaudit.findings import Finding, FindingCode
from vakaudit.storage.codec import CodecError, unseal, unzstd
from vakaudit.storage.documents import read_document
from vakaudit.storage.keys import KeyRing, TenantKeys, decode_wrapped, scope_file_name, scope_from_file_name
from vakaudit.storage.policy import finding
from vakaudit.storage.refs import read_refs

__all__ = ["Store", "StoreListing", "object_rel_path", "is_object_id", "BLOB_MAGIC", "parse_blob_manifest", "blob_manifest"]

_ID = re.compile(r"[0-9a-f]{64}")
_ANY_CASE_ID = re.compile(r"[0-9a-fA-F]{64}")
BLOB_MAGIC = b"VAKBLOB1"


def is_object_id(text: str) -> bool:
    """vak accepts exactly 64 hex digits (§4.1); it writes them lowercase."""
    return _ANY_CASE_ID.fullmatch(text) is not None


def object_rel_path(object_id: str) -> str:
    """Where an object's body lives, relative to the tenant store directory."""
    return f"cas/objects/{object_id[:2]}/{object_id[2:]}"


def blob_manifest(total: int, chunk_ids: list[str]) -> bytes:
    out = bytearray(BLOB_MAGIC + struct.pack("<QQ", total, len(chunk_ids)))
    for cid in chunk_ids:
        raw = cid.encode("ascii")
        out += struct.pack("<I", len(raw)) + raw
    return bytes(out)


def parse_blob_manifest(data: bytes) -> tuple[int, list[str]] | None:
    """``(total length, chunk ids)`` of a ``VAKBLOB1`` manifest, None when it is not one (§4.7)."""
    if len(data) < 24 or data[:8] != BLOB_MAGIC:
        return None
    total, count = struct.unpack_from("<QQ", data, 8)
    pos, ids = 24, []
    for _ in range(count):
        if pos + 4 > len(data):
            return None
        (n,) = struct.unpack_from("<I", data, pos)
        pos += 4
        if pos + n > len(data):
            return None
        try:
            ids.append(data[pos : pos + n].decode("ascii"))
        except UnicodeDecodeError:
            return None
        pos += n
    return (total, ids) if pos == len(data) else None  # trailing bytes are invalid


@dataclass(frozen=True, slots=True)
class StoreListing:
    """What a walk of the home already listed under a store's ``cas/``: the object bodies with their
    stored sizes and every grant directory's scopes, so the store is not listed and stat'ed again.

    Built by :meth:`from_entries`, which vouches only for a tree of regular files: when anything
    under ``cas/objects`` (or under one grant directory) is not a regular file, that part is None
    (or left out) and :class:`Store` lists it itself, following symlinks as it always does.
    """

    sizes: dict[str, int] | None  # object id -> stored bytes; None: list cas/objects again
    scopes: dict[str, list[str]]  # object id -> granted scopes, sorted (grant directories vouched for)

    @classmethod
    def from_entries(cls, entries: Iterable[tuple[str, bool, int]]) -> StoreListing:
        """``entries``: ``(path relative to the store directory, is a regular file, size)`` of every
        non-directory entry the walk met under the store."""
        sizes: dict[str, int] | None = {}
        scopes: dict[str, list[str]] = {}
        odd_grants: set[str] = set()
        for rel, regular, size in entries:
            parts = rel.split("/")
            if parts[0] != "cas":
                continue
            if len(parts) < 3:  # cas, cas/objects or cas/grants itself is not a directory
                if not regular and (len(parts) == 1 or parts[1] in ("objects", "grants")):
                    return cls(None, {})
                continue
            if parts[1] == "objects":
                if not regular:  # a symlink (to a fan-out directory too) or a special file
                    sizes = None
                elif sizes is not None and len(parts) == 4 and len(parts[2]) == 2 and _ID.fullmatch(oid := parts[2] + parts[3]):
                    sizes[oid] = size
            elif parts[1] == "grants":
                if not regular or len(parts) != 4:
                    odd_grants.add(parts[2])
                elif (scope := scope_from_file_name(parts[3])) is not None:
                    scopes.setdefault(parts[2], []).append(scope)
        for oid in odd_grants:
            scopes.pop(oid, None)
        return cls(sizes, {oid: sorted(s) for oid, s in scopes.items()})


class Store:
    """A tenant store directory (the folder holding ``cas/`` and ``refs.db``), read-only.

    ``keys`` unlocks bodies; the tenant's ``keys/`` directory (revocations, tombstones) is read
    from beside the store. Problems met while reading (a malformed grant, an id that does not
    match its content) collect in :attr:`findings`; :meth:`object` raises
    :class:`ObjectUnavailableError` only when it cannot produce the bytes asked for. ``listing``: what
    a walk of the home already saw of ``cas/`` (:class:`StoreListing`), used instead of listing it again.
    """

    def __init__(self, tenant_store_dir: str | Path, keys: KeyRing | None = None, *,
                 rel_dir: str | None = None, listing: StoreListing | None = None) -> None:
        self.dir = Path(tenant_store_dir)
        self.keys = keys
        self.rel_dir = rel_dir
        self.listing = listing
        self.tenant_keys = TenantKeys(self.dir.parent / "keys", keys,
                                      rel_dir=_join(rel_dir, "../keys") if rel_dir else None)
        self.findings: list[Finding] = []

    def __repr__(self) -> str:
        return f"Store({str(self.dir)!r}, unlocked={self.keys is not None})"

    def rel_of(self, sub: str) -> str:
        return _join(self.rel_dir, sub) if self.rel_dir else sub

    # keyless -------------------------------------------------------------------------------
    def object_ids(self) -> list[str]:
        """Every object body present, by id, sorted."""
        if self.listing is not None and self.listing.sizes is not None:
            return sorted(self.listing.sizes)
        root = self.dir / "cas" / "objects"
        if not root.is_dir():
            return []
        out = []
        # scandir: the entry types come with the listing (no stat per object; symlinks followed,
        # as Path.is_file / is_dir do)
        with os.scandir(root) as dirs:
            for d in dirs:
                if len(d.name) != 2 or not d.is_dir():
                    continue
                with os.scandir(d.path) as files:
                    for f in files:
                        oid = d.name + f.name
                        if _ID.fullmatch(oid) and f.is_file():
                            out.append(oid)
        return sorted(out)

    def granted_ids(self) -> list[str]:
        """Every id with a grants directory, sorted (a grant may outlive its body, §4.6)."""
        root = self.dir / "cas" / "grants"
        if not root.is_dir():
            return []
        with os.scandir(root) as it:  # the entry types come with the listing: no stat per directory
            return sorted(d.name for d in it if d.is_dir())

    def stored_bytes(self, object_id: str) -> int | None:
        if not is_object_id(object_id):
            return None
        if self.listing is not None and self.listing.sizes is not None:
            size = self.listing.sizes.get(object_id)
            if size is not None:
                return size
        try:
            return (self.dir / object_rel_path(object_id)).stat().st_size
        except OSError:
            return None

    def grants(self, object_id: str) -> list[str]:
        """The scope names ``object_id`` is granted to, from the grant file names, sorted."""
        if not is_object_id(object_id):
            return []
        if self.listing is not None and object_id in self.listing.scopes:
            return list(self.listing.scopes[object_id])
        d = self.dir / "cas" / "grants" / object_id
        try:
            with os.scandir(d) as it:  # the entry types come with the listing: no stat per grant
                return sorted(s for p in it if (s := scope_from_file_name(p.name)) is not None and p.is_file())
        except (FileNotFoundError, NotADirectoryError):
            return []

    # unlocked ------------------------------------------------------------------------------
    def object(self, object_id: str, scope: str) -> bytes:
        """The plaintext of ``object_id`` through ``scope``'s grant."""
        if not is_object_id(object_id):
            raise ObjectUnavailableError(f"{object_id!r} is not an object id (64 hex digits)", "missing")
        body_path = self.dir / object_rel_path(object_id)
        try:
            body = body_path.read_bytes()
        except OSError:
            raise ObjectUnavailableError(f"object {object_id} has no body in the store", "missing") from None
        grant_rel = f"cas/grants/{object_id}/{scope_file_name(scope)}"
        try:
            grant = (self.dir / grant_rel).read_bytes()
        except OSError:
            raise ObjectUnavailableError(f"object {object_id} has no grant for scope {scope!r}", "no_grant") from None
        if self.tenant_keys.is_erased(scope):
            raise ObjectUnavailableError(f"scope {scope!r} was erased; object {object_id} cannot be opened", "erased")
        w = decode_wrapped(grant)
        if w is None or w.scope != scope:
            self.findings.append(finding(FindingCode.GRANT_MALFORMED, self.rel_of(grant_rel),
                                         f"grant of {object_id} for {scope!r} is not a WrappedKey for that scope",
                                         expected=scope, actual=None if w is None else w.scope))
            raise ObjectUnavailableError(f"the grant of {object_id} for {scope!r} is malformed", "undecryptable")
        if self.keys is None:
            raise ObjectUnavailableError(f"object {object_id} is sealed and no keys were given", "locked")
        key = self.keys.unwrap(w)
        if key is None:
            raise ObjectUnavailableError(
                f"the grant of {object_id} for {scope!r} does not unwrap with the keys given (KEK v{w.version})",
                "locked")
        try:
            plain = unzstd(unseal(key, object_id.encode("ascii"), body))
        except CodecError as exc:
            raise ObjectUnavailableError(f"object {object_id} does not open: {exc}", "undecryptable") from None
        want = self.keys.object_id(plain)
        if want is not None and want != object_id.lower():
            self.findings.append(finding(FindingCode.OBJECT_ID_MISMATCH,
                                         self.rel_of(object_rel_path(object_id)),
                                         f"object {object_id}: its content hashes to another id",
                                         expected=object_id, actual=want))
        return plain

    def blob(self, blob_id: str, scope: str) -> bytes:
        """A streamed blob (§4.7): its manifest object's chunks, concatenated."""
        manifest = self.object(blob_id, scope)
        parsed = parse_blob_manifest(manifest)
        if parsed is None:
            raise ObjectUnavailableError(f"object {blob_id} is not a VAKBLOB1 manifest", "undecryptable")
        total, ids = parsed
        data = b"".join(self.object(cid, scope) for cid in ids)
        if len(data) != total:
            raise ObjectUnavailableError(f"blob {blob_id}: chunks hold {len(data)} bytes, manifest says {total}",
                                         "undecryptable")
        return data

    def refs(self) -> list[tuple[str, int, int, bytes]]:
        """Every ref of ``refs.db`` as ``(name, generation, epoch, target)``, sorted by name."""
        refs, findings = read_refs(self.dir / "refs.db", self.rel_of("refs.db"))
        self.findings += findings
        return refs

    def document(self, name: str, scope: str) -> bytes | None:
        """The current content of Document ``name`` (None when it has no ref or was forgotten)."""
        return read_document(self, name, scope)


def _join(a: str | None, b: str) -> str:
    if not a:
        return b
    if b.startswith("../"):
        return _join(a.rsplit("/", 1)[0] if "/" in a else "", b[3:])
    return f"{a}/{b}"
