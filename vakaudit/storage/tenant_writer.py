"""Write a vak 7.0 tenant's store and keys (for tests and synthetic homes), and key files.

Objects with grants, scope keys, tombstones, holds, ``revoked``, ``refs.db``, Documents and
blobs, laid out and encoded as baseline7.md §4–§7 says; key files as §6.5 and docs/keys.md say.
Random values (object keys, nonces, salts) come from ``nonces``/arguments so output can be
deterministic. Writes only into the fresh directory it is given.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from vakaudit.storage.codec import KEY_LEN, NONCE_LEN, seal, zstd_level3, zstd_raw
from vakaudit.storage.documents import DOC_PREFIX, FORGOTTEN, document_scope, version_text
from vakaudit.storage.keys import KEY_FILE_MAGIC, WrappedKey, encode_wrapped, scope_file_name, wrap_aad
from vakaudit.storage.objects import blob_manifest, object_rel_path
from vakaudit.storage.refs import REFS_TABLE, STORE_COMMIT
from vakaudit.storage.writer import Compress

__all__ = ["TenantWriter", "wrap_key", "json_key_file_text", "write_json_key_file", "write_vak_key_file", "write_credential_store"]

Random = Callable[[int], bytes]


def wrap_key(kek: bytes, version: int, scope: str, key: bytes, nonce: bytes) -> bytes:
    """The WrappedKey bytes of ``key`` for ``scope`` under KEK ``version`` (§6.3)."""
    sealed = seal(kek, nonce, wrap_aad(version, scope), key)
    return encode_wrapped(WrappedKey(version, scope, sealed))


class TenantWriter:
    """Build ``<tenant>/store`` and ``<tenant>/keys`` as vak leaves them."""

    def __init__(self, tenant_dir: str | Path, *, keks: dict[int, bytes], id_key: bytes,
                 random: Random | None = None, compress: Compress = "raw", keep_open: bool = False,
                 refs_synchronous: str = "FULL") -> None:
        """``keep_open``: one ``refs.db`` connection for the writer's life (call :meth:`close`), else
        one per call. ``refs_synchronous``: the connection's ``PRAGMA synchronous`` (vak: ``FULL``;
        ``OFF`` skips the syncs, the file's bytes are the same)."""
        self.tenant_dir = Path(tenant_dir)
        self.store_dir = self.tenant_dir / "store"
        self.keys_dir = self.tenant_dir / "keys"
        self.keks = dict(keks)
        self.version = max(keks)
        self.id_key = id_key
        self.compress: Compress = compress
        self._random = random or os.urandom
        self._object_keys: dict[str, bytes] = {}
        self._commit = 0
        self._keep_open = keep_open
        self._synchronous = refs_synchronous if refs_synchronous in ("FULL", "NORMAL", "OFF") else "FULL"
        self._con: sqlite3.Connection | None = None
        self._docs: dict[str, tuple[str, int]] = {}
        self._doc_objects: dict[str, tuple[str, set[str]]] = {}
        for sub in ("cas/objects", "cas/grants", "cas/tmp"):
            (self.store_dir / sub).mkdir(parents=True, exist_ok=True)
        for sub in ("scopes/keys", "scopes/tombstones", "scopes/holds", "scopes/tmp"):
            (self.keys_dir / sub).mkdir(parents=True, exist_ok=True)
        (self.keys_dir / "LOCK").touch()

    def object_id(self, plaintext: bytes) -> str:
        return hmac.new(self.id_key, plaintext, hashlib.sha256).hexdigest()

    def _wrap(self, scope: str, key: bytes, version: int | None = None) -> bytes:
        v = self.version if version is None else version
        return wrap_key(self.keks[v], v, scope, key, self._random(NONCE_LEN))

    def put(self, plaintext: bytes, scope: str, *, object_key: bytes | None = None,
            nonce: bytes | None = None, version: int | None = None) -> str:
        """Store ``plaintext`` granted to ``scope``; returns its id. Re-putting adds the grant only, and
        re-putting under a scope that has its grant touches the grant's mtime (§4.4 step 1)."""
        oid = self.object_id(plaintext)
        body_path = self.store_dir / object_rel_path(oid)
        key = self._object_keys.get(oid)
        if key is None:
            key = object_key or self._random(KEY_LEN)
            self._object_keys[oid] = key
        grant = self.store_dir / "cas" / "grants" / oid / scope_file_name(scope)
        if grant.is_file() and body_path.exists():
            os.utime(grant)
            self._bump()
            return oid
        self.grant(oid, scope, version=version)
        if not body_path.exists():
            body_path.parent.mkdir(parents=True, exist_ok=True)
            comp = zstd_raw(plaintext) if self.compress == "raw" else zstd_level3(plaintext)
            body_path.write_bytes(seal(key, nonce or self._random(NONCE_LEN), oid.encode("ascii"), comp))
        self._bump()
        return oid

    def grant(self, object_id: str, scope: str, *, version: int | None = None) -> None:
        d = self.store_dir / "cas" / "grants" / object_id
        d.mkdir(parents=True, exist_ok=True)
        (d / scope_file_name(scope)).write_bytes(self._wrap(scope, self._object_keys[object_id], version))

    def remove_grant(self, object_id: str, scope: str) -> None:
        (self.store_dir / "cas" / "grants" / object_id / scope_file_name(scope)).unlink(missing_ok=True)
        self._bump()

    def put_blob(self, data: bytes, scope: str, chunk: int = 8 * 1024 * 1024) -> str:
        ids = [self.put(data[i : i + chunk], scope) for i in range(0, len(data), chunk)] if data else []
        return self.put(blob_manifest(len(data), ids), scope)

    def scope_key(self, scope: str, key: bytes | None = None, *, version: int | None = None) -> bytes:
        """Create ``scope``'s key file; returns the 32-byte scope key."""
        key = key or self._random(KEY_LEN)
        (self.keys_dir / "scopes" / "keys" / scope_file_name(scope)).write_bytes(self._wrap(scope, key, version))
        return key

    def shred(self, scope: str) -> None:
        """Crypto-shred ``scope`` the way vak does (§6.6): tombstone, ``revoked`` line, key file gone."""
        (self.keys_dir / "scopes" / "tombstones" / scope_file_name(scope)).write_bytes(b"shredded")
        with (self.keys_dir / "revoked").open("ab") as fh:
            fh.write(scope.encode("utf-8") + b"\n")
        (self.keys_dir / "scopes" / "keys" / scope_file_name(scope)).unlink(missing_ok=True)

    def hold(self, scope: str) -> None:
        (self.keys_dir / "scopes" / "holds" / scope_file_name(scope)).write_bytes(b"held")

    # refs ----------------------------------------------------------------------------------
    def _db(self) -> sqlite3.Connection:
        if self._con is not None:
            return self._con
        path = self.store_dir / "refs.db"
        con = sqlite3.connect(path)
        if not con.execute("SELECT name FROM sqlite_master WHERE name='refs'").fetchone():
            con.execute("PRAGMA journal_mode=WAL")
            con.execute(REFS_TABLE)
        con.execute(f"PRAGMA synchronous={self._synchronous}")
        if self._keep_open:
            self._con = con
        return con

    def close(self) -> None:
        """Close the kept ``refs.db`` connection (its WAL is checkpointed into the file)."""
        if self._con is not None:
            self._con.close()
            self._con = None

    def set_ref(self, name: str, target: bytes, epoch: int = 0) -> int:
        """CAS a ref to ``target`` (generation 1 when new, else +1); returns the new generation."""
        con = self._db()
        try:
            with con:
                row = con.execute("SELECT generation FROM refs WHERE name=?", (name,)).fetchone()
                gen = 1 if row is None else row[0] + 1
                con.execute("INSERT OR REPLACE INTO refs VALUES (?, ?, ?, ?)", (name, gen, epoch, target))
        finally:
            if not self._keep_open:
                con.close()
        if not name.startswith("_store/"):
            self._bump()
        return gen

    def _bump(self) -> None:
        self._commit += 1
        self.set_ref(STORE_COMMIT, self._commit.to_bytes(8, "little"))

    # documents -----------------------------------------------------------------------------
    def save_document(self, name: str, content: bytes, scope: str | None = None) -> str:
        """Save a new version of Document ``name``; returns the version id."""
        scope = scope or document_scope(name)
        parent, seq = self._doc_head(name)
        cid = self.put(content, scope)
        vid = self.put(version_text(parent, cid, seq), scope)
        self.set_ref(DOC_PREFIX + name, vid.encode("ascii"))
        self._docs[name] = (vid, seq)
        self._doc_objects.setdefault(name, (scope, set()))[1].update((cid, vid))
        return vid

    def forget_document(self, name: str) -> None:
        """Forget ``name`` (§7.1): the ref says ``forgotten`` and the scope's grants on its versions
        and contents are removed; a later save starts again at seq 1."""
        self.set_ref(DOC_PREFIX + name, FORGOTTEN)
        self._docs.pop(name, None)
        scope, ids = self._doc_objects.pop(name, ("", set()))
        for oid in sorted(ids):
            self.remove_grant(oid, scope)

    def _doc_head(self, name: str) -> tuple[str | None, int]:
        return self._docs.get(name, (None, 0))[0], self._docs.get(name, (None, 0))[1] + 1


def json_key_file_text(keks: dict[int, bytes], object_id_key: bytes | None) -> str:
    """The text of vakaudit's JSON key file (docs/keys.md)."""
    doc: dict = {"keks": {str(v): k.hex() for v, k in sorted(keks.items())}}
    if object_id_key is not None:
        doc["object_id_key"] = object_id_key.hex()
    return json.dumps(doc, indent=2) + "\n"


def write_json_key_file(path: Path, keks: dict[int, bytes], object_id_key: bytes | None) -> None:
    """vakaudit's JSON key file (docs/keys.md)."""
    path.write_text(json_key_file_text(keks, object_id_key), encoding="utf-8")


def write_vak_key_file(path: Path, passphrase: str, *, id_key: bytes, signing_key: bytes,
                       keks: list[bytes | None], salt: bytes, nonce: bytes, iterations: int = 600_000) -> None:
    """vak's portable key file (§6.5); a None KEK is written ``retired``."""
    lines = [id_key.hex(), signing_key.hex()] + [k.hex() if k is not None else "retired" for k in keks]
    wrapping = hashlib.pbkdf2_hmac("sha256", passphrase.encode("utf-8"), salt, iterations, KEY_LEN)
    sealed = seal(wrapping, nonce, KEY_FILE_MAGIC.encode("ascii"), "\n".join(lines).encode("ascii"))
    path.write_text(f"{KEY_FILE_MAGIC}\n{iterations}\n{salt.hex()}\n{sealed.hex()}\n", encoding="ascii")


def write_credential_store(data_dir: Path, entries: list[tuple[str, str, str]], key: bytes, nonce: bytes) -> None:
    """vak's file credential store (§6.2): ``credentials.enc`` and ``.credential_key``."""
    plain = b"\n".join(f"{s}\0{v}\0{x}".encode() for s, v, x in entries)
    (data_dir / ".credential_key").write_bytes(key)
    (data_dir / "credentials.enc").write_bytes(seal(key, nonce, b"", plain))
