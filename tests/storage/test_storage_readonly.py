"""Reading a 7.0 home's storage leaves every byte, mtime and file as it was (no -wal/-shm, no lock)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from vakaudit.storage import KeyRing, Store, iter_frames, read_segments
from vakaudit.storage.documents import document_versions
from vakaudit.storage.keys import LOCAL_TENANT, TenantKeys
from vakaudit.storage.tenant_writer import TenantWriter, write_credential_store
from vakaudit.storage.writer import SegmentSpec, write_segment_set

KEK = bytes([0x11]) * 32
ID_KEY = bytes([0x22]) * 32


def _snapshot(root: Path) -> dict[str, tuple[int, int, bytes | None]]:
    snap = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            snap[str(p.relative_to(root))] = (st.st_mtime_ns, st.st_mode, p.read_bytes() if p.is_file() else None)
    return snap


def test_reading_segments_store_keys_and_refs_changes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    tenant = home / "tenants" / LOCAL_TENANT
    t = TenantWriter(tenant, keks={0: KEK}, id_key=ID_KEY)
    key = t.scope_key("conversation:s1")
    oid = t.put(b"interface", "conversation:s1")
    t.save_document("agents/vak/presentations.json", b"{}")
    ledger = home / "agents" / "vak" / "sessions" / "spc_x" / "s1"
    write_segment_set(ledger, [SegmentSpec([b'{"n":1}'] * 3), SegmentSpec([b'{"n":2}'], sealed=False)],
                      key=key, scope="conversation:s1")
    (ledger / "seg-00000003.sealing").write_bytes(b"VAKSEG01\x00")
    write_credential_store(home, [(f"home-0-tenant-{LOCAL_TENANT}-keys", "VAK_TENANT_KEK_0", KEK.hex())],
                           key=bytes(32), nonce=bytes(12))
    # leave refs.db as a live vak leaves it: WAL mode with -wal and -shm beside it
    live = sqlite3.connect(tenant / "store" / "refs.db")
    live.execute("PRAGMA wal_autocheckpoint=0")
    live.execute("INSERT INTO refs VALUES ('lc/ses/s1', 1, 0, CAST('{}' AS BLOB))")
    live.commit()
    for dirpath, _d, _f in os.walk(home, topdown=False):
        os.utime(dirpath, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    before = _snapshot(home)

    ring = KeyRing.from_home(home)
    keys = TenantKeys(tenant / "keys", ring)
    s = read_segments(ledger, keys.scope_key("conversation:s1"))
    assert [f.entry for x in s.segments for f in x.chain.frames] == [b'{"n":1}'] * 3 + [b'{"n":2}']
    list(iter_frames(ledger / "seg-00000002.log"))
    store = Store(tenant / "store", ring)
    assert store.object(oid, "conversation:s1") == b"interface"
    assert "lc/ses/s1" in [r[0] for r in store.refs()]
    assert store.document("agents/vak/presentations.json", "agent:vak") == b"{}"
    document_versions(store, "agents/vak/presentations.json", "agent:vak")

    assert _snapshot(home) == before
    live.close()
