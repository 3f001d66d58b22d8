"""``vakaudit scan`` on the 7.0 sample home: the tenant store tables ``objects``, ``refs``, ``documents``.

Expectations come from outside the code under test: what ``sample_homes/make_v7.py`` wrote (its
object ids, Document text and refs, rebuilt from the script), the file system (``os.walk``,
``os.lstat``, grant file names as hex of the scope name) and ``refs.db`` read with ``sqlite3`` from a
copy. The home's bytes and mtimes are compared before and after every scan.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sqlite3
import sys
from pathlib import Path

import pyarrow.parquet as pq
from typer.testing import CliRunner

from vakaudit.cli import app
from vakaudit.scan import scan_home
from vakaudit.storage import KeyRing

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_homes"
STORE = "tenants/ten_00000000-0000-7602-9145-b8d712473797/store"
DOC = "agents/vak/memory/spc_0199c3a0-7a00-7000-8000-00000000a001/note-1.md"
DOC_TEXT = b"# Note\nuse tabs\n"  # what make_v7.py saves as the memory Document


def _make_v7():
    spec = importlib.util.spec_from_file_location("make_v7", SAMPLES / "make_v7.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["make_v7"] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop("make_v7", None)
    return mod


def _snapshot(home: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for dirpath, _dirs, names in os.walk(home):
        for name in names:
            p = Path(dirpath) / name
            out[p.relative_to(home).as_posix()] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.lstat().st_mtime_ns)
    return out


def _rows(out: Path, name: str) -> list[dict]:
    return pq.read_table(out / name / "all.parquet").to_pylist()


def test_objects_refs_documents_of_the_sample_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(SAMPLES / "v7", home)
    facts = _make_v7().build(tmp_path / "rebuilt")  # the ids make_v7 wrote, from its own inputs
    before = _snapshot(home)

    res = scan_home(home, out=tmp_path / "out", jobs=1)
    assert res.layout == "g3"

    # objects: every body file under cas/objects, sized by os.lstat, scopes from the grant file names
    bodies = {}
    for dirpath, _dirs, names in os.walk(home / STORE / "cas/objects"):
        for name in names:
            p = Path(dirpath) / name
            bodies[p.parent.name + name] = p.lstat().st_size
    grants = {d.name: sorted(bytes.fromhex(g.name).decode() for g in d.iterdir())
              for d in (home / STORE / "cas/grants").iterdir()}
    objects = _rows(res.out, "objects")
    assert {o["object_id"]: o["stored_bytes"] for o in objects} == bodies
    assert {o["object_id"]: o["scopes"] for o in objects} == grants
    assert set(facts.objects.values()) <= set(bodies)
    by_id = {o["object_id"]: o for o in objects}
    version = facts.objects["memory_version"]
    assert by_id[version]["referenced_by"] == [f"ref:doc/{DOC}"]
    assert by_id[version]["rel_path"] == f"{STORE}/cas/objects/{version[:2]}/{version[2:]}"
    assert by_id[facts.objects["checkpoint"]]["scopes"] == ["conversation:0199c3a0-7b00-7000-8000-0000000000aa"]

    # refs: what sqlite3 reads from a copy of refs.db
    shutil.copyfile(home / STORE / "refs.db", tmp_path / "refs.db")
    con = sqlite3.connect(tmp_path / "refs.db")
    want = con.execute("SELECT name, generation, epoch, target FROM refs ORDER BY name").fetchall()
    con.close()
    refs = _rows(res.out, "refs")
    assert [(r["name"], r["generation"], r["epoch"], r["target_bytes"]) for r in refs] == [
        (n, g, e, len(t)) for n, g, e, t in want
    ]
    by_name = {r["name"]: r for r in refs}
    assert by_name["lc/ses/0199c3a0-7b00-7000-8000-0000000000bb"]["target"] == '{"archived":true}'
    assert by_name[f"doc/{DOC}"]["target_object_id"] == version
    assert by_name["lc/ses/0199c3a0-7b00-7000-8000-0000000000bb"]["target_object_id"] is None

    # documents, keyless: the ref is known, the version's content is not
    assert _rows(res.out, "documents") == [
        {"tenant": "ten_00000000-0000-7602-9145-b8d712473797", "name": DOC, "scope": "agent:vak",
         "forgotten": False, "version_id": version, "content_id": None, "seq": None,
         "content_bytes": None, "version_count": None}
    ]

    # files.size_bytes sums to the home
    total = sum((Path(d) / n).lstat().st_size for d, _s, names in os.walk(home) for n in names)
    con = res.duckdb()
    assert con.execute("SELECT sum(size_bytes) FROM files").fetchone()[0] == total
    assert con.execute("SELECT count(*) FROM objects").fetchone()[0] == len(bodies)
    assert _snapshot(home) == before


def test_unlocked_scan_opens_the_document_version_chain(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(SAMPLES / "v7", home)
    before = _snapshot(home)
    keys = KeyRing.from_file(SAMPLES / "v7-keys.json")
    res = scan_home(home, out=tmp_path / "out", jobs=1, keys=keys)
    (doc,) = _rows(res.out, "documents")
    assert (doc["seq"], doc["version_count"], doc["content_bytes"]) == (1, 1, len(DOC_TEXT))
    # the content object is the one whose plaintext is the Document's text (HMAC-SHA256 id, §4.2)
    import hmac

    want_content = hmac.new(bytes(range(32, 64)), DOC_TEXT, hashlib.sha256).hexdigest()
    assert doc["content_id"] == want_content
    by_id = {o["object_id"]: o for o in _rows(res.out, "objects")}
    assert by_id[want_content]["referenced_by"] == [f"doc:{DOC}"]
    assert by_id[doc["version_id"]]["referenced_by"] == [f"doc:{DOC}", f"ref:doc/{DOC}"]
    assert _snapshot(home) == before


def test_jsonl_home_has_no_store_rows(small_home: Path, tmp_path: Path) -> None:
    res = scan_home(small_home, out=tmp_path / "out", jobs=1)
    assert {n: res.row_counts[n] for n in ("objects", "refs", "documents")} == {"objects": 0, "refs": 0, "documents": 0}
    assert not (tmp_path / "out" / "objects").exists()
    assert res.duckdb().execute("SELECT count(*) FROM refs").fetchone()[0] == 0


def test_scan_keys_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["scan", str(SAMPLES / "v7"), "--out", str(tmp_path / "out"),
                                   "--keys", str(tmp_path / "nope.json")])
    assert res.exit_code == 2
    assert "no such file" in res.output


# -- entries: one row per frame ---------------------------------------------------------------------

SID1 = "0199c3a0-7b00-7000-8000-0000000000aa"
SID2 = "0199c3a0-7b00-7000-8000-0000000000bb"
LEDGERS = "agents/vak/sessions/spc_0199c3a0-7a00-7000-8000-00000000a001"


def _written_entries(mod) -> dict[str, list[bytes]]:  # noqa: ANN001 - the make_v7 module
    """The entry JSON make_v7 hands to the segment writer for each conversation (``main``: 3 turns)."""
    interface_text = mod.dumps({"system_prompt": "You are vak.", "tool_index": [], "tool_schemas": []})
    evidence_text = b"line 1 of a tool result\nline 2\n"
    key = bytes(range(32, 64))  # the sample's object id key: ids are HMAC-SHA256 of the content
    import hmac

    interface = {"id": hmac.new(key, interface_text, hashlib.sha256).hexdigest(), "len": len(interface_text)}
    evidence = {"id": hmac.new(key, evidence_text, hashlib.sha256).hexdigest(), "len": len(evidence_text)}
    return {SID1: mod.ledger_entries(SID1, interface, evidence, 3), SID2: mod.ledger_entries(SID2, interface, evidence, 1)}


def _frames(out: Path) -> list[dict]:
    import duckdb

    cur = duckdb.connect().execute(
        f"SELECT * FROM read_parquet('{out}/entries/*.parquet') WHERE segment IS NOT NULL "
        "ORDER BY session_id, segment, frame_index"
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def test_entries_one_row_per_frame_unlocked_and_keyless(tmp_path: Path) -> None:
    import json

    written = _written_entries(_make_v7())
    home = tmp_path / "home"
    shutil.copytree(SAMPLES / "v7", home)
    before = _snapshot(home)
    keys = KeyRing.from_file(SAMPLES / "v7-keys.json")
    unlocked = _frames(scan_home(home, out=tmp_path / "unlocked", jobs=1, keys=keys).out)
    keyless = _frames(scan_home(home, out=tmp_path / "keyless", jobs=1).out)
    assert _snapshot(home) == before

    assert len(unlocked) == len(keyless) == len(written[SID1]) + len(written[SID2]) == 13 + 5
    for sid in (SID1, SID2):
        rows = [r for r in unlocked if r["session_id"] == sid]
        # the plaintext is what the script wrote, entry by entry, in chain order
        assert [r["plain_bytes"] for r in rows] == [len(e) for e in written[sid]]
        assert [r["id"] for r in rows] == [json.loads(e)["id"] for e in written[sid]]
        assert [r["kind"] for r in rows] == [json.loads(e)["kind"] for e in written[sid]]
        assert all(r["sealed"] for r in rows)  # a conversation's frames are sealed under its scope key
        assert sum(r["input_tokens"] or 0 for r in rows) == 120 * (3 if sid == SID1 else 1)
        # every frame's bytes on disk: per segment file the rows add up to the file (a .sealed file
        # starts with the 9-byte VAKSEG01 header and flag), offsets from 0 without gaps
        for rel in sorted({r["rel_path"] for r in rows}):
            seg = [r for r in rows if r["rel_path"] == rel]
            size = (home / rel).stat().st_size - (9 if rel.endswith(".sealed") else 0)
            assert sum(r["stored_bytes"] for r in seg) == size
            assert [r["offset_bytes"] for r in seg] == [sum(x["stored_bytes"] for x in seg[:i]) for i in range(len(seg))]
            assert [r["frame_index"] for r in seg] == list(range(len(seg)))
    seg1 = [r for r in unlocked if r["session_id"] == SID1 and r["segment"] == 1]
    assert len(seg1) == 13 // 2  # make_v7 seals the first half of conversation 1
    assert {r["rel_path"].rsplit("/", 1)[-1] for r in unlocked if r["session_id"] == SID2} == {"seg-00000001.log"}

    # keyless: the same frames and sizes, no plaintext
    assert [(r["rel_path"], r["frame_index"], r["offset_bytes"], r["stored_bytes"]) for r in keyless] == [
        (r["rel_path"], r["frame_index"], r["offset_bytes"], r["stored_bytes"]) for r in unlocked
    ]
    assert {(r["plain_bytes"], r["kind"], r["id"]) for r in keyless} == {(None, None, None)}


def test_jsonl_entries_have_null_frame_columns(small_home: Path, tmp_path: Path) -> None:
    import duckdb

    res = scan_home(small_home, out=tmp_path / "out", jobs=1)
    con = duckdb.connect()
    n, framed = con.execute(
        f"SELECT count(*), count(segment) + count(frame_index) + count(stored_bytes) + count(plain_bytes) "
        f"+ count(sealed) FROM read_parquet('{res.out}/entries/*.parquet')"
    ).fetchone()
    assert n > 0 and framed == 0


# -- record chains: kind tables, chain_records --------------------------------------------------------


def test_record_chains_fill_their_kind_tables(tmp_path: Path) -> None:
    import json

    mod = _make_v7()
    home = tmp_path / "home"
    shutil.copytree(SAMPLES / "v7", home)
    before = _snapshot(home)
    res = scan_home(home, out=tmp_path / "out", jobs=1)
    import duckdb

    con = duckdb.connect()
    for table, kind, rel, n in (("cost_log", "cost-log", "agents/vak/cost-log/seg-00000001.log", 3),
                                ("routing_evidence", "routing-evidence", "agents/vak/routing-evidence/seg-00000001.log", 3),
                                ("security_events", "security-events", "security-events/seg-00000001.log", 1)):
        written = [json.loads(r) for r in mod.chain_rows(kind, n)]  # what make_v7 appended
        cur = con.execute(f"SELECT * FROM read_parquet('{res.out}/{table}/*.parquet') ORDER BY line_no")
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
        assert [r["rel_path"] for r in rows] == [rel] * n
        assert [r["ts"] for r in rows] == [w["ts"] for w in written]
        assert sum(r["size_bytes"] for r in rows) == (home / rel).stat().st_size
        assert [r["line_no"] for r in rows] == list(range(1, n + 1))
        if table == "cost_log":
            assert [(r["input_tokens"], r["usd"], r["session_id"]) for r in rows] == [
                (w["input_tokens"], w["usd"], w["session_id"]) for w in written
            ]
        if table == "routing_evidence":
            assert [r["latency_ms"] for r in rows] == [900, 901, 902]
    assert res.row_counts["cost_log"] == 3 and res.row_counts["chain_records"] == 0
    assert _snapshot(home) == before


def test_a_chain_without_a_jsonl_table_goes_to_chain_records(tmp_path: Path) -> None:
    from vakaudit.storage.writer import SegmentSpec, write_segment_set

    home = tmp_path / "home"
    shutil.copytree(SAMPLES / "v7", home)
    records = [b'{"cursor":"a","position":1}', b'{"cursor":"b","position":22}', b'{"cursor":"a","position":3}']
    write_segment_set(home / "cursors", [SegmentSpec(records[:2]), SegmentSpec(records[2:], sealed=False)])
    res = scan_home(home, out=tmp_path / "out", jobs=1)
    rows = sorted(pq.read_table(res.out / "chain_records").to_pylist(), key=lambda r: (r["segment"], r["frame_index"]))
    assert [(r["kind"], r["segment"], r["frame_index"], r["plain_bytes"], r["sealed"]) for r in rows] == [
        ("cursors", 1, 0, len(records[0]), False),
        ("cursors", 1, 1, len(records[1]), False),
        ("cursors", 2, 0, len(records[2]), False),
    ]
    # a plaintext chain's sealed segment is zstd-compressed whole (flag 01, baseline7.md §5): its frames'
    # bytes are those of the decompressed body
    import zstandard

    sealed = (home / "cursors/seg-00000001.sealed").read_bytes()
    assert sealed[:9] == b"VAKSEG01\x01"
    body = zstandard.ZstdDecompressor().decompressobj().decompress(sealed[9:])
    assert sum(r["stored_bytes"] for r in rows if r["segment"] == 1) == len(body)
    assert sum(r["stored_bytes"] for r in rows if r["segment"] == 2) == (home / "cursors/seg-00000002.log").stat().st_size


def test_rescan_reports_a_changed_sealed_segment_and_a_shrunk_log(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(SAMPLES / "v7", home)
    scan_home(home, out=tmp_path / "out", jobs=1)
    again = scan_home(home, out=tmp_path / "out", jobs=1)
    assert "append_only_violation" not in again.findings_by_code()
    sealed = home / LEDGERS / SID1 / "seg-00000001.sealed"
    log = home / LEDGERS / SID2 / "seg-00000001.log"
    sealed.write_bytes(sealed.read_bytes() + b"\x00")  # a sealed segment is never written again
    log.write_bytes(log.read_bytes()[:-10])  # an open segment only grows
    res = scan_home(home, out=tmp_path / "out", jobs=1)
    import pyarrow.compute as pc

    f = res.table("findings")
    hits = f.filter(pc.equal(f["code"], "append_only_violation"))
    assert sorted(hits["rel_path"].to_pylist()) == sorted(
        [f"{LEDGERS}/{SID1}/seg-00000001.sealed", f"{LEDGERS}/{SID2}/seg-00000001.log"]
    )
