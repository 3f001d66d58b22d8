"""Keys of a vak 7.0 tenant: WrappedKey, KEK versions, scope keys, tombstones, holds, revocations.

baseline7.md §6. A :class:`KeyRing` holds what unlocks a tenant (KEKs by version, the object id
key); it is built only from what the user hands over: vak's portable key file (§6.5), a JSON key
file (docs/keys.md), or, on explicit request, vak's file credential store in the home (§6.2).
:class:`TenantKeys` reads ``<tenant>/keys/`` (read-only) and turns a scope name into its key.

Key material never appears in a repr, str, exception message or finding: reprs name versions and
scopes only, errors say what failed, never with which bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from vakaudit.errors import KeyFileError
from vakaudit.findings import Finding, FindingCode
from vakaudit.storage.codec import KEY_LEN, CodecError, unseal
from vakaudit.storage.ids import fnv1a64
from vakaudit.storage.policy import finding
from vakaudit.storage.segments import KEY, read_key_scope

__all__ = [
    "KEY_FILE_MAGIC",
    "PASSPHRASE_ENV",
    "LOCAL_TENANT",
    "WrappedKey",
    "KeyRing",
    "TenantKeys",
    "ChainKey",
    "ScopeState",
    "decode_wrapped",
    "encode_wrapped",
    "wrap_aad",
    "scope_file_name",
    "scope_from_file_name",
]

KEY_FILE_MAGIC = "vakyartha-key-file-1"
#: Where :meth:`KeyRing.from_file` takes a key file's passphrase from when none is passed.
PASSPHRASE_ENV = "VAKAUDIT_KEY_PASSPHRASE"
LOCAL_TENANT = "ten_00000000-0000-7602-9145-b8d712473797"
_ITERATIONS_RANGE = (100_000, 10_000_000)
_KEK_VAR = "VAK_TENANT_KEK_"
_KEK_CURRENT = "VAK_TENANT_KEK_CURRENT"
_ID_KEY_VAR = "VAK_TENANT_OBJECT_ID_KEY"
_RETIRED = "retired"

ScopeState = Literal["ok", "erased", "revoked", "missing", "locked"]


def scope_file_name(scope: str) -> str:
    """The file name of a scope's key, grant, tombstone or hold: lowercase hex of its UTF-8."""
    return scope.encode("utf-8").hex()


def scope_from_file_name(name: str) -> str | None:
    try:
        return bytes.fromhex(name).decode("utf-8")
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class WrappedKey:
    """A key wrapped under KEK ``version`` for ``scope`` (§6.3); ``sealed`` = nonce, ciphertext, tag."""

    version: int
    scope: str
    sealed: bytes

    def __repr__(self) -> str:
        return f"WrappedKey(version={self.version}, scope={self.scope!r}, sealed_bytes={len(self.sealed)})"


def wrap_aad(version: int, scope: str) -> bytes:
    return struct.pack("<I", version) + scope.encode("utf-8")


def encode_wrapped(w: WrappedKey) -> bytes:
    scope = w.scope.encode("utf-8")
    return struct.pack("<II", w.version, len(scope)) + scope + w.sealed


def decode_wrapped(data: bytes) -> WrappedKey | None:
    """The WrappedKey in ``data``, or None when it is not one (short, bad length, not UTF-8)."""
    if len(data) < 8:
        return None
    version, n = struct.unpack_from("<II", data)
    if 8 + n > len(data):
        return None
    try:
        scope = data[8 : 8 + n].decode("utf-8")
    except UnicodeDecodeError:
        return None
    return WrappedKey(version, scope, bytes(data[8 + n :]))


def _key_from_hex(text: str, what: str) -> bytes:
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        raise KeyFileError(f"{what} is not hex") from None
    if len(key) != KEY_LEN:
        raise KeyFileError(f"{what} is not 32 bytes")
    return key


class KeyRing:
    """What unlocks a tenant: KEKs by version and the object id key. Never shown in a repr."""

    __slots__ = ("_keks", "_id_key")

    def __init__(self, keks: dict[int, bytes], object_id_key: bytes | None = None) -> None:
        for v, k in keks.items():
            if not isinstance(v, int) or len(k) != KEY_LEN:
                raise KeyFileError(f"KEK version {v!r} is not a 32-byte key")
        if object_id_key is not None and len(object_id_key) != KEY_LEN:
            raise KeyFileError("the object id key is not 32 bytes")
        self._keks = dict(keks)
        self._id_key = object_id_key

    def __repr__(self) -> str:
        return f"KeyRing(kek_versions={sorted(self._keks)}, object_id_key={self._id_key is not None})"

    __str__ = __repr__

    @property
    def versions(self) -> list[int]:
        return sorted(self._keks)

    @property
    def has_object_id_key(self) -> bool:
        return self._id_key is not None

    def kek(self, version: int) -> bytes | None:
        return self._keks.get(version)

    @property
    def object_id_key(self) -> bytes | None:
        return self._id_key

    def unwrap(self, w: WrappedKey) -> bytes | None:
        """The key ``w`` wraps, or None (unknown KEK version, or it does not authenticate)."""
        kek = self._keks.get(w.version)
        if kek is None:
            return None
        try:
            return unseal(kek, wrap_aad(w.version, w.scope), w.sealed)
        except CodecError:
            return None

    def object_id(self, plaintext: bytes) -> str | None:
        """``hex(HMAC-SHA256(id_key, plaintext))``, or None without the id key (§4.1)."""
        if self._id_key is None:
            return None
        import hmac

        return hmac.new(self._id_key, plaintext, hashlib.sha256).hexdigest()

    @classmethod
    def from_file(cls, path: str | Path, passphrase: str | None = None) -> KeyRing:
        """A key ring from vak's portable key file or a JSON key file (docs/keys.md).

        A vak key file needs its passphrase: ``passphrase``, else ``$VAKAUDIT_KEY_PASSPHRASE``.
        """
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise KeyFileError(f"cannot read key file {p}: {type(exc).__name__}") from None
        if text.startswith(KEY_FILE_MAGIC):
            if passphrase is None:
                passphrase = os.environ.get(PASSPHRASE_ENV)
            if passphrase is None:
                raise KeyFileError(f"key file {p} is sealed with a passphrase: pass one or set {PASSPHRASE_ENV}")
            return cls._from_vak_key_file(text, passphrase, p)
        return cls._from_json(text, p)

    @classmethod
    def _from_json(cls, text: str, p: Path) -> KeyRing:
        try:
            doc = json.loads(text)
        except ValueError:
            raise KeyFileError(f"key file {p} is neither a vak key file nor JSON") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("keks"), dict):
            raise KeyFileError(f'key file {p}: expected {{"keks": {{"<version>": hex}}, "object_id_key": hex}}')
        keks = {}
        for v, hx in doc["keks"].items():
            if not str(v).isdigit() or not isinstance(hx, str):
                raise KeyFileError(f"key file {p}: KEK version {v!r} is not a decimal version with a hex key")
            keks[int(v)] = _key_from_hex(hx, f"key file {p}: KEK {v}")
        idk = doc.get("object_id_key")
        if idk is not None and not isinstance(idk, str):
            raise KeyFileError(f"key file {p}: object_id_key is not a hex string")
        return cls(keks, _key_from_hex(idk, f"key file {p}: object_id_key") if idk else None)

    @classmethod
    def _from_vak_key_file(cls, text: str, passphrase: str, p: Path) -> KeyRing:
        lines = text.splitlines()
        if len(lines) < 4 or lines[0] != KEY_FILE_MAGIC or not lines[1].isdigit():
            raise KeyFileError(f"key file {p} is malformed")
        iterations = int(lines[1])
        if not _ITERATIONS_RANGE[0] <= iterations <= _ITERATIONS_RANGE[1]:
            raise KeyFileError(f"key file {p}: iteration count {iterations} is out of range")
        try:
            salt, sealed = bytes.fromhex(lines[2]), bytes.fromhex(lines[3])
        except ValueError:
            raise KeyFileError(f"key file {p} is malformed") from None
        wrapping = hashlib.pbkdf2_hmac("sha256", passphrase.encode("utf-8"), salt, iterations, KEY_LEN)
        try:
            plain = unseal(wrapping, KEY_FILE_MAGIC.encode("ascii"), sealed)
        except CodecError:
            raise KeyFileError(f"key file {p} does not open: the passphrase is wrong or the file is damaged") from None
        parts = plain.decode("utf-8", "replace").splitlines()
        if len(parts) < 3:
            raise KeyFileError(f"key file {p} holds no KEK")
        id_key = _key_from_hex(parts[0], f"key file {p}: id key")
        # parts[1] is the receipt-signing key: vakaudit verifies with public keys only, never keeps it.
        keks = {v: _key_from_hex(hx, f"key file {p}: KEK {v}")
                for v, hx in enumerate(parts[2:]) if hx.strip() != _RETIRED}
        return cls(keks, id_key)

    @classmethod
    def from_home(cls, data_dir: str | Path, tenant: str = LOCAL_TENANT) -> KeyRing:
        """A key ring from vak's file credential store in a data home (§6.2): ``credentials.enc``
        opened with ``.credential_key``. Read only when the user asks for it; nothing is written.
        """
        d = Path(data_dir)
        try:
            key = (d / ".credential_key").read_bytes()
            blob = (d / "credentials.enc").read_bytes()
        except OSError as exc:
            raise KeyFileError(f"no file credential store in {d} ({type(exc).__name__}); "
                               "the keys may be in the OS keychain: export a key file with vak") from None
        if len(key) != KEY_LEN:
            raise KeyFileError(f"{d / '.credential_key'} is not a 32-byte key")
        try:
            plain = unseal(key, b"", blob)
        except CodecError:
            raise KeyFileError(f"{d / 'credentials.enc'} does not open with .credential_key") from None
        suffix = f"-tenant-{tenant}-keys"
        # The vault scope is home-<fnv16(canonical data home)>-tenant-<tenant>-keys; the home may
        # have been copied elsewhere since, so any scope with this tenant's suffix is accepted.
        values: dict[str, dict[str, str]] = {}
        for line in plain.split(b"\n"):
            fields = line.split(b"\0", 2)
            if len(fields) != 3:
                continue
            scope, var, value = (f.decode("utf-8", "replace") for f in fields)
            if scope.endswith(suffix):
                values.setdefault(scope, {})[var] = value
        if not values:
            raise KeyFileError(f"the credential store in {d} holds no keys of tenant {tenant}")
        if len(values) > 1:
            want = f"home-{fnv1a64(str(d.resolve()).encode()):016x}{suffix}"
            if want not in values:
                raise KeyFileError(f"the credential store in {d} holds keys of {len(values)} data homes "
                                   f"for tenant {tenant}; export a key file with vak instead")
            values = {want: values[want]}
        (vault,) = values.values()
        keks = {}
        for var, value in vault.items():
            if var.startswith(_KEK_VAR) and var != _KEK_CURRENT and var[len(_KEK_VAR):].isdigit():
                if value.strip() != _RETIRED:
                    keks[int(var[len(_KEK_VAR):])] = _key_from_hex(value, f"credential {var}")
        idk = vault.get(_ID_KEY_VAR)
        return cls(keks, _key_from_hex(idk, f"credential {_ID_KEY_VAR}") if idk else None)


@dataclass(frozen=True, slots=True)
class ChainKey:
    """The key of a chain directory: the scope its ``KEY`` names, that scope's state, the key."""

    scope: str | None
    state: ScopeState | None
    key: bytes | None

    def __repr__(self) -> str:
        return f"ChainKey(scope={self.scope!r}, state={self.state!r}, unlocked={self.key is not None})"


class TenantKeys:
    """``<tenant>/keys/`` read-only: which scopes are erased, revoked, held, and their keys."""

    def __init__(self, keys_dir: str | Path, ring: KeyRing | None = None, *, rel_dir: str | None = None) -> None:
        self.dir = Path(keys_dir)
        self.ring = ring
        self.rel_dir = rel_dir
        self.findings: list[Finding] = []
        self.revoked = self._revoked()
        self.tombstoned = self._names("tombstones")
        # any scope may be held; vak's conversation hold scope string is unconfirmed (baseline7.md
        # §14 point 8: expected `conversation:<sid>`), so holds are kept by whatever name they carry
        self.held = self._names("holds")
        self.scopes_with_keys = self._names("keys")

    def __repr__(self) -> str:
        return (f"TenantKeys({str(self.dir)!r}, scopes={len(self.scopes_with_keys)}, "
                f"erased={len(self.tombstoned)}, held={len(self.held)}, unlocked={self.ring is not None})")

    def _revoked(self) -> frozenset[str]:
        try:
            text = (self.dir / "revoked").read_bytes().decode("utf-8", "replace")
        except OSError:
            return frozenset()
        return frozenset(line for line in text.split("\n") if line)

    def _names(self, sub: str) -> frozenset[str]:
        d = self.dir / "scopes" / sub
        if not d.is_dir():
            return frozenset()
        out = set()
        for p in d.iterdir():
            scope = scope_from_file_name(p.name) if p.is_file() else None
            if scope is not None:
                out.add(scope)
        return frozenset(out)

    def is_erased(self, scope: str) -> bool:
        """Destroyed (tombstone) or revoked: its keys no longer unwrap (§6.6)."""
        return scope in self.tombstoned or scope in self.revoked

    def state(self, scope: str) -> ScopeState:
        if scope in self.tombstoned:
            return "erased"
        if scope in self.revoked:
            return "revoked"
        if scope not in self.scopes_with_keys:
            return "missing"
        if self.ring is None:
            return "locked"
        return "ok" if self.scope_key(scope) is not None else "locked"

    def wrapped(self, scope: str) -> WrappedKey | None:
        name = scope_file_name(scope)
        try:
            data = (self.dir / "scopes" / "keys" / name).read_bytes()
        except OSError:
            return None
        w = decode_wrapped(data)
        rel = f"{self.rel_dir}/scopes/keys/{name}" if self.rel_dir else f"scopes/keys/{name}"
        if w is None:
            self.findings.append(finding(FindingCode.SCOPE_KEY_MALFORMED, rel,
                                         f"scope key of {scope!r} is not a WrappedKey"))
            return None
        if w.scope != scope:
            self.findings.append(finding(FindingCode.SCOPE_KEY_MALFORMED, rel,
                                         f"scope key file of {scope!r} wraps a key for {w.scope!r}",
                                         expected=scope, actual=w.scope))
            return None
        return w

    def chain_key(self, directory: str | Path, rel_dir: str | None = None) -> ChainKey:
        """Resolve the ``KEY`` of a ledger or chain directory; an erased scope is reported as
        ``scope_erased`` (info), a scope with no key at all as ``scope_key_missing``."""
        scope = read_key_scope(Path(directory))
        if scope is None:
            return ChainKey(None, None, None)
        state = self.state(scope)
        rel = f"{rel_dir}/{KEY}" if rel_dir else KEY
        if state in ("erased", "revoked"):
            self.findings.append(finding(FindingCode.SCOPE_ERASED, rel,
                                         f"scope {scope!r} was destroyed: an erased conversation, its frames "
                                         "verify and cannot be read"))
        elif state == "missing":
            self.findings.append(finding(FindingCode.SCOPE_KEY_MISSING, rel,
                                         f"scope {scope!r} named by KEY has no key file and no tombstone"))
        key = self.scope_key(scope) if state in ("ok", "locked") else None
        return ChainKey(scope, "ok" if key is not None else state, key)

    def scope_key(self, scope: str) -> bytes | None:
        """The 32-byte key of ``scope``, or None (erased, revoked, no key file, locked)."""
        if self.ring is None or self.is_erased(scope):
            return None
        w = self.wrapped(scope)
        return None if w is None else self.ring.unwrap(w)
