"""Key files and the credential store open to a KeyRing; key material never shows anywhere."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from vakaudit.errors import KeyFileError, ObjectUnavailableError
from vakaudit.storage import KeyRing, Store, read_segments
from vakaudit.storage.codec import seal
from vakaudit.storage.ids import fnv1a64
from vakaudit.storage.keys import LOCAL_TENANT, PASSPHRASE_ENV, TenantKeys
from vakaudit.storage.tenant_writer import (
    TenantWriter,
    write_credential_store,
    write_json_key_file,
    write_vak_key_file,
)
from vakaudit.storage.writer import SegmentSpec, write_segment_set

KEK0 = bytes.fromhex("a1" * 32)
KEK1 = bytes.fromhex("b2" * 32)
ID_KEY = bytes.fromhex("c3" * 32)
SIGNING = bytes.fromhex("d4" * 48)
PASS = "four quiet lanterns"
SECRETS = [KEK0, KEK1, ID_KEY, SIGNING]


def _vak_key_file(tmp_path: Path, keks=(KEK0, KEK1), iterations: int = 100_000) -> Path:
    p = tmp_path / "vakyartha.key"
    write_vak_key_file(p, PASS, id_key=ID_KEY, signing_key=SIGNING, keks=list(keks), salt=bytes(range(16)),
                       nonce=bytes(12), iterations=iterations)
    return p


def test_vak_key_file_opens_with_its_passphrase(tmp_path: Path) -> None:
    p = _vak_key_file(tmp_path)
    lines = p.read_text().splitlines()
    assert lines[0] == "vakyartha-key-file-1" and lines[1] == "100000" and lines[2] == bytes(range(16)).hex()
    ring = KeyRing.from_file(p, PASS)
    assert ring.versions == [0, 1] and ring.kek(0) == KEK0 and ring.kek(1) == KEK1
    assert ring.object_id_key == ID_KEY


def test_vak_key_file_sealed_by_hand_as_the_spec_says(tmp_path: Path) -> None:
    # independent of the writer: PBKDF2-HMAC-SHA256 then AES-256-GCM with the magic as AAD
    salt, nonce = b"s" * 16, b"n" * 12
    wrapping = hashlib.pbkdf2_hmac("sha256", PASS.encode(), salt, 100_000, 32)
    plain = "\n".join([ID_KEY.hex(), SIGNING.hex(), "retired", KEK1.hex()]).encode()
    sealed = seal(wrapping, nonce, b"vakyartha-key-file-1", plain)
    p = tmp_path / "k"
    p.write_text(f"vakyartha-key-file-1\n100000\n{salt.hex()}\n{sealed.hex()}\n")
    ring = KeyRing.from_file(p, PASS)
    assert ring.versions == [1] and ring.kek(1) == KEK1  # a retired version holds no key


def test_passphrase_from_the_environment_and_wrong_passphrases(tmp_path: Path, monkeypatch) -> None:
    p = _vak_key_file(tmp_path)
    monkeypatch.delenv(PASSPHRASE_ENV, raising=False)
    with pytest.raises(KeyFileError, match=PASSPHRASE_ENV):
        KeyRing.from_file(p)
    monkeypatch.setenv(PASSPHRASE_ENV, PASS)
    assert KeyRing.from_file(p).versions == [0, 1]
    with pytest.raises(KeyFileError, match="passphrase is wrong"):
        KeyRing.from_file(p, "not the passphrase")
    p.write_text(p.read_text().replace("100000", "99999"))
    with pytest.raises(KeyFileError, match="out of range"):
        KeyRing.from_file(p, PASS)


def test_json_key_file(tmp_path: Path) -> None:
    p = tmp_path / "keys.json"
    write_json_key_file(p, {0: KEK0, 3: KEK1}, ID_KEY)
    assert p.read_text() == (
        '{\n  "keks": {\n    "0": "' + KEK0.hex() + '",\n    "3": "' + KEK1.hex() + '"\n  },\n'
        '  "object_id_key": "' + ID_KEY.hex() + '"\n}\n')
    ring = KeyRing.from_file(p)
    assert ring.versions == [0, 3] and ring.kek(3) == KEK1 and ring.object_id_key == ID_KEY
    p.write_text('{"keks": {"zero": "00"}}')
    with pytest.raises(KeyFileError):
        KeyRing.from_file(p)
    p.write_text("neither")
    with pytest.raises(KeyFileError, match="neither a vak key file nor JSON"):
        KeyRing.from_file(p)


def test_credential_store_of_a_home(tmp_path: Path) -> None:
    data = tmp_path / "home"
    data.mkdir()
    scope = f"home-{fnv1a64(b'/elsewhere/vak'):016x}-tenant-{LOCAL_TENANT}-keys"
    write_credential_store(data, [
        ("home-1c4bc19e8c234e51", "OPENAI_API_KEY", "sk-not-a-kek"),
        (scope, "VAK_TENANT_KEK_0", KEK0.hex()),
        (scope, "VAK_TENANT_KEK_1", KEK1.hex()),
        (scope, "VAK_TENANT_KEK_CURRENT", "1"),
        (scope, "VAK_TENANT_OBJECT_ID_KEY", ID_KEY.hex()),
    ], key=bytes([9]) * 32, nonce=bytes(12))
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in data.iterdir()}
    ring = KeyRing.from_home(data)
    assert ring.versions == [0, 1] and ring.kek(0) == KEK0 and ring.object_id_key == ID_KEY
    assert before == {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in data.iterdir()}
    with pytest.raises(KeyFileError, match="OS keychain"):
        KeyRing.from_home(tmp_path / "nothing")


def test_fnv_vault_scope_of_spec_vector_v8() -> None:
    assert f"{fnv1a64(b'/home/ana/.local/share/vak'):016x}" == "1c4bc19e8c234e51"


def test_key_material_never_appears_in_reprs_errors_or_findings(tmp_path: Path) -> None:
    ring = KeyRing({0: KEK0, 1: KEK1}, ID_KEY)
    t = TenantWriter(tmp_path / "ten", keks={0: KEK0, 1: KEK1}, id_key=ID_KEY)
    scope_key = t.scope_key("conversation:s1")
    oid = t.put(b"payload", "conversation:s1")
    chain_dir = tmp_path / "ledger"
    write_segment_set(chain_dir, [SegmentSpec([b'{"n":1}']), SegmentSpec([b'{"n":2}'], sealed=False)],
                      key=scope_key, scope="conversation:s1")
    texts = [repr(ring), str(ring), repr(TenantKeys(t.keys_dir, ring)), repr(Store(t.store_dir, ring))]
    seg = read_segments(chain_dir, bytes(32))  # wrong key: every frame a finding
    texts += [repr(seg), repr(seg.segments), repr([f.to_dict() for f in seg.findings])]
    texts += [repr(read_segments(chain_dir, scope_key).segments[0].chain.frames)]
    for bad in (lambda: Store(t.store_dir, KeyRing({0: KEK1})).object(oid, "conversation:s1"),
                lambda: KeyRing.from_file(_vak_key_file(tmp_path), "wrong passphrase!"),
                lambda: KeyRing({0: b"short"})):
        with pytest.raises((ObjectUnavailableError, KeyFileError)) as exc:
            bad()
        texts.append(str(exc.value) + repr(exc.value))
    blob = "\n".join(texts)
    assert seg.findings
    for secret in [*SECRETS, scope_key]:
        assert secret.hex() not in blob and secret.hex().upper() not in blob and repr(secret) not in blob


def test_chain_key_of_an_erased_conversation_is_info_and_a_missing_key_an_error(tmp_path: Path) -> None:
    t = TenantWriter(tmp_path / "ten", keks={0: KEK0}, id_key=ID_KEY)
    live = t.scope_key("conversation:live")
    gone = t.scope_key("conversation:gone")
    t.shred("conversation:gone")
    dirs = {}
    for name, key in [("live", live), ("gone", gone), ("lost", bytes(32))]:
        dirs[name] = tmp_path / "sessions" / name
        write_segment_set(dirs[name], [SegmentSpec([b'{"n":1}'], sealed=False)], key=key,
                          scope=f"conversation:{name}")
    keys = TenantKeys(t.keys_dir, KeyRing({0: KEK0}))
    ck = keys.chain_key(dirs["live"], rel_dir="agents/vak/sessions/spc/live")
    assert (ck.scope, ck.state, ck.key) == ("conversation:live", "ok", live) and keys.findings == []
    assert [f.entry for f in read_segments(dirs["live"], ck.key).segments[0].chain.frames] == [b'{"n":1}']
    ck = keys.chain_key(dirs["gone"], rel_dir="agents/vak/sessions/spc/gone")
    assert (ck.state, ck.key) == ("erased", None)
    ck = keys.chain_key(dirs["lost"])
    assert (ck.state, ck.key) == ("missing", None)
    assert [(str(f.code), str(f.severity), f.rel_path) for f in keys.findings] == [
        ("scope_erased", "info", "agents/vak/sessions/spc/gone/KEY"), ("scope_key_missing", "error", "KEY")]
    # locked: the scope has a key but no KEK was given
    assert TenantKeys(t.keys_dir).chain_key(dirs["live"]).state == "locked"
    assert keys.chain_key(tmp_path / "sessions").scope is None  # no KEY: a plaintext chain
    assert live.hex() not in repr(keys.chain_key(dirs["live"]))
