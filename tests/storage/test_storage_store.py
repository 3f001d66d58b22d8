"""The tenant store: §13 V7/V8 vectors, objects through grants, erased scopes, refs.db, Documents."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from vakaudit.errors import ObjectUnavailableError
from vakaudit.findings import FindingCode
from vakaudit.storage import KeyRing, Store
from vakaudit.storage.codec import seal, zstd_raw
from vakaudit.storage.documents import document_versions, version_text
from vakaudit.storage.keys import TenantKeys, decode_wrapped, scope_file_name
from vakaudit.storage.objects import blob_manifest, object_rel_path, parse_blob_manifest
from vakaudit.storage.refs import export_line, u64_target
from vakaudit.storage.tenant_writer import TenantWriter, wrap_key

V = json.loads((Path(__file__).parent / "vectors" / "baseline7.json").read_text(encoding="utf-8"))
H = bytes.fromhex
KEK = bytes([1]) * 32
ID_KEY = bytes([3]) * 32


def _counter():
    n = iter(range(1, 1 << 30))
    return lambda size: next(n).to_bytes(size, "big")


def test_v7_object_id_path_body_grant_name_and_wrapped_key() -> None:
    v = V["V7"]
    ring = KeyRing({0: H(v["kek"])}, H(v["id_key"]))
    assert ring.object_id(v["plaintext"].encode()) == v["id"]
    assert object_rel_path(v["id"]) == v["path"]
    body = seal(H(v["object_key"]), H(v["body_nonce"]), v["id"].encode(), zstd_raw(v["plaintext"].encode()))
    assert body == H(v["body"])
    assert scope_file_name(v["scope"]) == v["grant_name"]
    wrapped = wrap_key(H(v["kek"]), v["kek_version"], v["scope"], H(v["object_key"]), H(v["wrap_nonce"]))
    assert wrapped == H(v["wrapped"]) and len(wrapped) == v["wrapped_len"]
    w = decode_wrapped(wrapped)
    assert w is not None and (w.version, w.scope) == (0, v["scope"]) and ring.unwrap(w) == H(v["object_key"])


def test_v7_object_read_through_its_grant(tmp_path: Path) -> None:
    v = V["V7"]
    store_dir = tmp_path / "store"
    body_path = store_dir / v["path"]
    body_path.parent.mkdir(parents=True)
    body_path.write_bytes(H(v["body"]))
    grant = store_dir / "cas" / "grants" / v["id"] / v["grant_name"]
    grant.parent.mkdir(parents=True)
    grant.write_bytes(H(v["wrapped"]))
    store = Store(store_dir, KeyRing({0: H(v["kek"])}, H(v["id_key"])))
    assert store.object_ids() == [v["id"]] and store.grants(v["id"]) == [v["scope"]]
    assert store.object(v["id"], v["scope"]) == b"hello world" and store.findings == []
    with pytest.raises(ObjectUnavailableError) as exc:
        Store(store_dir).object(v["id"], v["scope"])
    assert exc.value.reason == "locked"
    assert Store(store_dir).grants(v["id"]) == [v["scope"]]  # keyless: scope names from file names


def test_v8_document_version_text_and_blob_manifest() -> None:
    v = V["V8"]
    assert version_text(None, V["V7"]["id"], 1) == v["document_version"].encode()
    manifest = blob_manifest(11, [v["blob_chunk_id"]])
    assert manifest == H(v["blob_manifest_prefix"]) + v["blob_chunk_id"].encode()
    assert parse_blob_manifest(manifest) == (11, [v["blob_chunk_id"]])
    assert parse_blob_manifest(manifest + b"x") is None  # trailing bytes are invalid


def _tenant(tmp_path: Path) -> TenantWriter:
    return TenantWriter(tmp_path / "ten", keks={0: KEK, 1: bytes([2]) * 32}, id_key=ID_KEY, random=_counter())


def test_objects_grants_and_refs_written_then_read(tmp_path: Path) -> None:
    t = _tenant(tmp_path)
    a = t.put(b"interface json", "conversation:s1")
    t.put(b"interface json", "conversation:s2")  # same bytes: one object, two grants
    b = t.put(b"tool result", "conversation:s1", version=0)  # a grant under the older KEK
    store = Store(t.store_dir, KeyRing(t.keks, ID_KEY))
    assert store.object_ids() == sorted([a, b])
    assert store.grants(a) == ["conversation:s1", "conversation:s2"]
    assert store.object(a, "conversation:s2") == b"interface json" and store.object(b, "conversation:s1") == b"tool result"
    with pytest.raises(ObjectUnavailableError) as exc:
        store.object(b, "conversation:s2")
    assert exc.value.reason == "no_grant"
    with pytest.raises(ObjectUnavailableError) as exc:
        Store(t.store_dir, KeyRing({1: t.keks[1]})).object(b, "conversation:s1")  # KEK v0 not given
    assert exc.value.reason == "locked"
    refs = dict((n, (g, e, x)) for n, g, e, x in store.refs())
    assert u64_target(refs["_store/commit"][2]) == refs["_store/commit"][0] == 3
    assert export_line("doc/x", 1, 0, V["V7"]["id"].encode()).startswith("646f632f78 1 0 3865")


def test_erased_scope_is_reported_as_erased_and_its_grants_stay(tmp_path: Path) -> None:
    t = _tenant(tmp_path)
    oid = t.put(b"private", "contributor:s1:prn_x")
    t.scope_key("contributor:s1:prn_x")
    t.shred("contributor:s1:prn_x")
    store = Store(t.store_dir, KeyRing(t.keks, ID_KEY))
    assert store.grants(oid) == ["contributor:s1:prn_x"]
    with pytest.raises(ObjectUnavailableError) as exc:
        store.object(oid, "contributor:s1:prn_x")
    assert exc.value.reason == "erased"
    keys = TenantKeys(t.keys_dir, KeyRing(t.keks))
    assert keys.state("contributor:s1:prn_x") == "erased" and keys.scope_key("contributor:s1:prn_x") is None


def test_scope_keys_held_revoked_and_locked(tmp_path: Path) -> None:
    t = _tenant(tmp_path)
    k = t.scope_key("conversation:s1")
    t.scope_key("conversation:s2")
    t.hold("conversation:s2")
    with (t.keys_dir / "revoked").open("a") as fh:
        fh.write("conversation:s2\n")
    keys = TenantKeys(t.keys_dir, KeyRing(t.keks))
    assert keys.scope_key("conversation:s1") == k and keys.state("conversation:s1") == "ok"
    assert keys.state("conversation:s2") == "revoked" and keys.held == {"conversation:s2"}
    assert keys.state("conversation:none") == "missing"
    assert TenantKeys(t.keys_dir).state("conversation:s1") == "locked"
    # a key file that wraps another scope's key is malformed
    src = t.keys_dir / "scopes" / "keys" / scope_file_name("conversation:s1")
    (t.keys_dir / "scopes" / "keys" / scope_file_name("conversation:s3")).write_bytes(src.read_bytes())
    assert keys.scope_key("conversation:s3") is None
    assert [f.code for f in keys.findings] == [FindingCode.SCOPE_KEY_MALFORMED]


def test_object_whose_content_does_not_match_its_id(tmp_path: Path) -> None:
    t = _tenant(tmp_path)
    oid = t.put(b"original", "tenant")
    wrong = "0" * 64
    (t.store_dir / object_rel_path(wrong)).parent.mkdir(parents=True, exist_ok=True)
    # the body sealed for id `wrong` holding other bytes, granted under the same key
    body = seal(t._object_keys[oid], bytes(12), wrong.encode(), zstd_raw(b"original"))
    (t.store_dir / object_rel_path(wrong)).write_bytes(body)
    t._object_keys[wrong] = t._object_keys[oid]
    t.grant(wrong, "tenant")
    store = Store(t.store_dir, KeyRing(t.keks, ID_KEY), rel_dir="tenants/ten/store")
    assert store.object(wrong, "tenant") == b"original"
    (f,) = store.findings
    assert f.code == FindingCode.OBJECT_ID_MISMATCH and f.expected == wrong and f.actual == oid
    assert f.rel_path == "tenants/ten/store/" + object_rel_path(wrong)
    # without the id key the mismatch cannot be seen
    assert Store(t.store_dir, KeyRing(t.keks)).object(wrong, "tenant") == b"original"


def test_documents_versions_forget_and_blobs(tmp_path: Path) -> None:
    t = _tenant(tmp_path)
    name = "agents/vak/presentations.json"
    v1 = t.save_document(name, b'{"packs":[]}')
    v2 = t.save_document(name, b'{"packs":[1]}')
    t.save_document("triggers/trg_1", b"{}")
    store = Store(t.store_dir, KeyRing(t.keks, ID_KEY))
    assert store.document(name, "agent:vak") == b'{"packs":[1]}'
    assert [(v.id, v.seq, v.parent) for v in document_versions(store, name, "agent:vak")] == [
        (v2, 2, v1), (v1, 1, None)]
    assert store.document("triggers/trg_1", "tenant") == b"{}"
    assert store.document("nothing", "tenant") is None
    t.forget_document(name)
    store = Store(t.store_dir, KeyRing(t.keks, ID_KEY))
    assert store.document(name, "agent:vak") is None
    v3 = t.save_document(name, b"again")
    assert [v.seq for v in document_versions(Store(t.store_dir, KeyRing(t.keks, ID_KEY)), name, "agent:vak")] == [1]
    assert v3 not in (v1, v2)
    blob = t.put_blob(b"0123456789" * 5, "cursor:o", chunk=16)
    assert Store(t.store_dir, KeyRing(t.keks, ID_KEY)).blob(blob, "cursor:o") == b"0123456789" * 5


def test_refs_are_read_from_a_copy_including_rows_only_in_the_wal(tmp_path: Path) -> None:
    t = _tenant(tmp_path)
    t.set_ref("lc/ses/s1", b'{"archived":true}')
    db = t.store_dir / "refs.db"
    # a live writer: a row committed to the WAL and not yet checkpointed
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("INSERT INTO refs VALUES ('req/s1/ab', 1, 0, CAST('e1' AS BLOB))")
    con.commit()
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in t.store_dir.iterdir() if p.is_file()}
    names = [r[0] for r in Store(t.store_dir).refs()]
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in t.store_dir.iterdir() if p.is_file()}
    con.close()
    assert "req/s1/ab" in names and "lc/ses/s1" in names
    assert before == after  # neither the database nor its -wal/-shm was touched


def test_unreadable_refs_db_is_a_finding(tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "refs.db").write_bytes(b"not a database" * 100)
    store = Store(tmp_path / "store")
    assert store.refs() == [] and [f.code for f in store.findings] == [FindingCode.REFS_DB_UNREADABLE]


def test_an_object_id_that_is_not_64_hex_digits_never_reaches_the_file_system(tmp_path: Path) -> None:
    t = _tenant(tmp_path)
    (t.tenant_dir / "secret").write_bytes(b"x")
    store = Store(t.store_dir, KeyRing(t.keks, ID_KEY))
    with pytest.raises(ObjectUnavailableError) as exc:
        store.object("../../secret", "tenant")
    assert exc.value.reason == "missing"
    assert store.grants("../..") == [] and store.stored_bytes("../../secret") is None


def test_v8_derived_ids_space_keys_vault_scope_admission_ref_and_export_line() -> None:
    from vakaudit.storage.ids import admission_ref, derived_id, fnv1a64, unbound_key
    from vakaudit.storage.keys import LOCAL_TENANT

    v = V["V8"]
    for prefix, seed, want in v["derived"]:
        assert derived_id(prefix, seed) == want
    assert derived_id("ten", "local") == LOCAL_TENANT
    assert unbound_key(v["unbound_path"]) == v["unbound_key"]
    assert f"home-{fnv1a64(v['vault_home'].encode()):016x}-tenant-{LOCAL_TENANT}-keys" == v["vault_scope"]
    assert admission_ref(v["admission_session"], v["admission_request"]) == v["admission_ref"]
    line = export_line("doc/x", 1, 0, V["V7"]["id"].encode())
    assert line.startswith(v["export_refs_line_prefix"]) and line.endswith(v["export_refs_line_suffix"])
    assert line == "646f632f78 1 0 " + V["V7"]["id"].encode().hex()
