""""One turn, every write" on a 7.0 home: the ledger's barriers follow group commit, and the tenant
store's writes (objects, grants, admission refs) are in the sequence.

The expectation is read from the home itself: the turn's frames decrypted through the storage reader,
and the commit-point rules of baseline7.md §8.3 written out here by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

from vakaudit.report import build_report
from vakaudit.scan.frames7 import tenant_keys
from vakaudit.scan.store7 import chain_key
from vakaudit.storage import KeyRing, read_segments


def _syncs_after(entry: dict) -> bool:
    kind = entry.get("kind")
    if kind in ("header", "turn_card", "call_effect"):
        return True
    if kind == "message":
        return entry["message"].get("role") == "user" and not (entry.get("meta") or {}).get("control")
    return kind == "activity" and "request_id" in (entry.get("data") or {})


def _section(doc: dict) -> dict:
    return next(s["context"] for s in doc["sections"] if s["name"] == "one_turn")


def test_ledger_barriers_follow_group_commit(synth_v7: tuple[Path, Path], tmp_path: Path, clock) -> None:
    home, keys = synth_v7
    ring = KeyRing.from_file(keys)
    doc = json.loads(build_report(home, format="json", clock=clock, scan_out=tmp_path / "s", keys=ring))
    ctx = _section(doc)
    assert ctx["found"] and ctx["group_commit"] and not ctx["locked"]
    conv = home / ctx["rel_path"]  # the conversation directory: a turn's frames may span segments
    key = chain_key(conv, ctx["rel_path"], tenant_keys(home, ring))
    read = read_segments(conv, key)
    entries = {(Path(seg.rel_path).name, f.index + 1): json.loads(f.entry)
               for seg in read.segments for f in seg.chain.frames}
    ledger = [s for s in ctx["steps"] if s["artifact"] == "session_ledger"]
    assert len(ledger) == ctx["entry_count"]
    for s in ledger:
        e = entries[(s["segment"], s["line_no"])]
        want = _syncs_after(e)
        assert s["barriers"] == (1.0 if want else 0.0), (s["segment"], s["line_no"], e["kind"])
        assert ("grouped" in s["marks"]) is not want
    assert ctx["ledger_barriers"] == sum(_syncs_after(entries[(s["segment"], s["line_no"])]) for s in ledger)
    # every admission is followed by its req/ ref; every object step stands before the frame that
    # references it, sized as the object file on disk
    steps = ctx["steps"]
    cas = {p.name: p.stat().st_size for p in home.glob("tenants/*/store/cas/objects/*/*")}
    assert any(s["artifact"] == "objects" for s in steps)  # the median turn has a tool call: its evidence body
    for i, s in enumerate(steps):
        if s["artifact"] == "session_ledger" and entries[(s["segment"], s["line_no"])].get("kind") == "activity" \
                and s["barriers"]:
            assert steps[i + 1]["artifact"] == "refs"
        if s["artifact"] == "objects":
            nxt = next(t for t in steps[i + 1:] if t["artifact"] == "session_ledger")
            text = json.dumps(entries[(nxt["segment"], nxt["line_no"])])
            ids = [oid for oid in cas if oid in text]
            assert ids and (s["rows"], s["size_bytes"]) == (len(ids), sum(cas[o] for o in ids))
    assert ctx["barriers"] == sum(s["barriers"] for s in steps)


def test_a_locked_home_says_the_turn_needs_keys(synth_v7: tuple[Path, Path], tmp_path: Path, clock) -> None:
    home, _keys = synth_v7
    doc = json.loads(build_report(home, format="json", clock=clock, scan_out=tmp_path / "s"))
    ctx = _section(doc)
    assert not ctx["found"] and ctx["locked"]
    md = build_report(tmp_path / "s", format="md", clock=clock)
    assert "no turn can be read" in md
