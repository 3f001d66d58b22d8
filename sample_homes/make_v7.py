"""Build the 7.0 sample home ``sample_homes/v7/`` and the broken 7.0 homes ``sample_homes/broken7/``.

Every byte is written by vakaudit's storage writer (:mod:`vakaudit.storage.writer`,
:mod:`vakaudit.storage.tenant_writer`) from fixed keys and a seeded sequence of nonces, with
raw-block zstd payloads, so the output depends on nothing but this script (``refs.db`` is a SQLite
file: its rows are fixed, its page bytes follow the SQLite library). The key file of the home is
written beside it, never inside: ``sample_homes/v7-keys.json`` (vakaudit's JSON key file).

``v7/`` is a small S2 home: two conversations (one with a sealed segment and an open one, one with
an open segment only), plaintext record chains (cost log, routing evidence, security events), a
checkpoint manifest, and the local tenant: scope keys, objects with their grants (the capability
interface, a tool result, a checkpoint file, a memory Document), ``refs.db`` and ``spaces.toml``.

``broken7/<name>/`` holds a one-line ``README.md`` (what is wrong, the expected finding) and the
home in ``broken7/<name>/home/``: a copy of a smaller home of the same shape with one defect
applied. ``tests/forensics/test_forensics_sample_homes7.py`` checks that ``vakaudit verify``
reports exactly the expected findings on each.

Usage: ``python sample_homes/make_v7.py [--out DIR]`` (default: the directory of this script).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sqlite3
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vakaudit.storage.codec import seal, zstd_raw
from vakaudit.storage.frames import GENESIS, link
from vakaudit.storage.keys import LOCAL_TENANT, scope_file_name
from vakaudit.storage.objects import object_rel_path
from vakaudit.storage.segments import seal_entry_text, segment_name
from vakaudit.storage.tenant_writer import TenantWriter, wrap_key, write_json_key_file
from vakaudit.storage.writer import ChainWriter, SegmentSpec, write_segment_set

HERE = Path(__file__).resolve().parent
T = f"tenants/{LOCAL_TENANT}"
SPC = "spc_0199c3a0-7a00-7000-8000-00000000a001"
SID1 = "0199c3a0-7b00-7000-8000-0000000000aa"
SID2 = "0199c3a0-7b00-7000-8000-0000000000bb"
KEK0 = bytes(range(32))  # the tenant's KEK version 0 (sample key: committed on purpose)
ID_KEY = bytes(range(32, 64))  # the tenant's object id key


class Det:
    """Seeded bytes for keys and nonces: SHA-256 of ``seed:n``, as long as asked."""

    def __init__(self, seed: str) -> None:
        self.seed = seed
        self.n = 0

    def __call__(self, size: int) -> bytes:
        out = b""
        while len(out) < size:
            self.n += 1
            out += hashlib.sha256(f"{self.seed}:{self.n}".encode()).digest()
        return out[:size]


def dumps(obj: object) -> bytes:
    """Compact JSON, keys in the order given (vak's serde order for these entries)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def ts(n: int) -> str:
    return f"2026-10-08T12:{n // 60:02d}:{n % 60:02d}Z"


def eid(sid: str, n: int) -> str:
    return f"{sid[:-4]}{n:04x}"


def ledger_entries(sid: str, interface: dict, evidence: dict, turns: int) -> list[bytes]:
    """A conversation's entries (baseline7.md §8.1-§8.2): header, then ``turns`` turns."""
    hid = eid(sid, 0)
    entries = [
        {"id": hid, "parent_id": None, "ts": ts(0), "kind": "header", "session_id": sid, "created_at": ts(0),
         "cwd": "/tmp/proj", "space": SPC,
         "contract": {"app_version": "7.0.0-dev", "provider": "anthropic", "model": "claude-sonnet-4",
                      "route_ladder": [], "route_objective": "balanced", "route_annotations": [],
                      "system_prompt": "You are vak.", "permission_mode": "ask", "capabilities": [],
                      "prompt_layers": []}},
    ]
    parent, n = hid, 1
    for turn in range(turns):
        did = eid(sid, n)
        entries.append({"id": did, "parent_id": parent, "ts": ts(n), "at_turn": did, "kind": "message",
                        "message": {"role": "user", "content": [{"type": "text", "text": f"question {turn + 1}"}]}})
        n += 1
        bid = eid(sid, n)
        entries.append({"id": bid, "parent_id": did, "ts": ts(n), "at_turn": did, "kind": "turn_capabilities_bound",
                        "epoch": 1, "capability_ids": [], "excluded_ids": [], "core_tool_names": ["read"],
                        "deferred_tool_names": [], "tool_domains": {}, "interface": interface})
        n += 1
        vid = eid(sid, n)
        entries.append({"id": vid, "parent_id": bid, "ts": ts(n), "at_turn": did, "kind": "evidence_body",
                        "tool_use_id": f"toolu_{turn:02d}", "body": evidence})
        n += 1
        aid = eid(sid, n)
        entries.append({"id": aid, "parent_id": vid, "ts": ts(n), "at_turn": did, "kind": "message",
                        "message": {"role": "assistant", "content": [{"type": "text", "text": f"answer {turn + 1}"}]},
                        "meta": {"model": "claude-sonnet-4", "stop_reason": "end_turn",
                                 "usage": {"input_tokens": 120, "output_tokens": 8}}})
        n += 1
        parent = aid
    return [dumps(e) for e in entries]


def chain_rows(kind: str, n: int) -> list[bytes]:
    """Plaintext record-chain rows (baseline7.md §9.2)."""
    rows = []
    for i in range(n):
        t = ts(5 * i + 3)
        if kind == "cost-log":
            rows.append({"ts": t, "model": "claude-sonnet-4", "provider": "anthropic", "input_tokens": 120,
                         "output_tokens": 8, "usd": 0.0005, "source": "estimated", "session_id": SID1})
        elif kind == "routing-evidence":
            rows.append({"ts": t, "provider": "anthropic", "model": "claude-sonnet-4", "outcome": "success",
                         "latency_ms": 900 + i})
        else:
            rows.append({"ts": t, "kind": "auth_failure", "label": "login", "detail": "bad passkey"})
    return [dumps(r) for r in rows]


@dataclass
class Facts:
    """What the builder wrote, for the mutations and the tests: paths and frame offsets."""

    home: Path
    ledger1: str = ""  # rel dir of conversation 1
    ledger2: str = ""
    seg2_offsets: list[int] = field(default_factory=list)  # frame offsets in conversation 1's seg-2.log
    seg2_heads: list[bytes] = field(default_factory=list)
    seal1_head: bytes = b""
    seal1_entries: int = 0
    keys: dict[str, bytes] = field(default_factory=dict)  # scope -> scope key
    objects: dict[str, str] = field(default_factory=dict)  # role -> object id
    rnd: Det = field(default_factory=lambda: Det("v7"))


def build(home: Path, *, seed: str = "v7", turns: int = 2) -> Facts:
    """Write a 7.0 S2 home into the fresh directory ``home``."""
    rnd = Det(seed)
    facts = Facts(home, rnd=rnd)
    tenant = home / T
    tw = TenantWriter(tenant, keks={0: KEK0}, id_key=ID_KEY, random=rnd)
    (tenant / "spaces.toml").write_text(
        f'[spaces."{SPC}"]\nbindings = ["/tmp/proj"]\nname = "proj"\nlast_opened = 1791460800\n', encoding="utf-8"
    )
    interface_text = dumps({"system_prompt": "You are vak.", "tool_index": [], "tool_schemas": []})
    evidence_text = b"line 1 of a tool result\nline 2\n"
    for sid in (SID1, SID2):
        scope = f"conversation:{sid}"
        facts.keys[scope] = tw.scope_key(scope)
        interface = {"id": tw.put(interface_text, scope), "len": len(interface_text)}
        evidence = {"id": tw.put(evidence_text, scope), "len": len(evidence_text)}
        facts.objects["interface"], facts.objects["evidence"] = interface["id"], evidence["id"]
        entries = ledger_entries(sid, interface, evidence, turns if sid == SID1 else 1)
        rel = f"agents/vak/sessions/{SPC}/{sid}"
        cut = len(entries) // 2 if sid == SID1 else len(entries)
        specs = [SegmentSpec(entries[:cut])] + ([SegmentSpec(entries[cut:], sealed=False)] if cut < len(entries) else [])
        if sid == SID2:
            specs = [SegmentSpec(entries, sealed=False)]
        written = write_segment_set(home / rel, specs, key=facts.keys[scope], scope=scope,
                                    nonces=lambda: rnd(12))
        if sid == SID1:
            facts.ledger1 = rel
            facts.seal1_entries, facts.seal1_head = written[0][1], written[0][2]
            offsets, heads, off, data = [], [], 0, (home / rel / segment_name(2, "log")).read_bytes()
            while off < len(data):
                (length,) = struct.unpack_from("<I", data, off)
                offsets.append(off)
                heads.append(data[off + 4 + length : off + 4 + length + 32])
                off += 4 + length + 32
            facts.seg2_offsets, facts.seg2_heads = offsets, heads
        else:
            facts.ledger2 = rel
    checkpoint_file = b"print('hello')\n"
    ck = tw.put(checkpoint_file, f"conversation:{SID1}")
    facts.objects["checkpoint"] = ck
    manifest = {"seq": 0, "session_id": SID1, "created_at": ts(2), "label": eid(SID1, 1),
                "files": [{"rel_path": "main.py", "hash": ck, "size": len(checkpoint_file),
                           "mtime_ns": 1791460800000000000}], "observed": ["main.py"]}
    cp = home / "agents/vak/checkpoints" / SID1 / "0000.json"
    cp.parent.mkdir(parents=True)
    cp.write_bytes(dumps(manifest))
    facts.objects["memory_version"] = tw.save_document(f"agents/vak/memory/{SPC}/note-1.md", b"# Note\nuse tabs\n")
    tw.set_ref(f"lc/ses/{SID2}", dumps({"archived": True}))
    for rel, kind, n in (("agents/vak/cost-log", "cost-log", 3), ("agents/vak/routing-evidence", "routing-evidence", 3),
                         ("security-events", "security-events", 1)):
        write_segment_set(home / rel, [SegmentSpec(chain_rows(kind, n), sealed=False)])
    return facts


# -- defects -----------------------------------------------------------------------------------


def _seg2(f: Facts) -> Path:
    return f.home / f.ledger1 / segment_name(2, "log")


def _patch(path: Path, offset: int, data: bytes) -> None:
    b = bytearray(path.read_bytes())
    b[offset : offset + len(data)] = data
    path.write_bytes(bytes(b))


def frame_bad_link(f: Facts) -> None:
    p = _seg2(f)
    hash_at = f.seg2_offsets[2] - 32  # the stored link hash of frame 1
    _patch(p, hash_at, bytes([p.read_bytes()[hash_at] ^ 0x01]))


def frame_bad_length(f: Facts) -> None:
    _patch(_seg2(f), f.seg2_offsets[1], struct.pack("<I", 0))


def frame_length_past_end(f: Facts) -> None:
    _patch(_seg2(f), f.seg2_offsets[1], struct.pack("<I", 1 << 20))


def frame_torn_tail(f: Facts) -> None:
    p = _seg2(f)
    data = p.read_bytes()
    p.write_bytes(data[: f.seg2_offsets[-1] + 20])


def _rewrite_frame(path: Path, offset: int, prev: bytes, body: bytes, rest_prev_fix: bool = False) -> None:
    data = path.read_bytes()
    (length,) = struct.unpack_from("<I", data, offset)
    new = struct.pack("<I", len(body)) + body + link(prev, body)
    path.write_bytes(data[:offset] + new + data[offset + 4 + length + 32 :])


def frame_undecryptable(f: Facts) -> None:
    # one ciphertext byte of frame 1 changed and its link hash recomputed: the chain verifies, the
    # frame no longer opens under its conversation's key
    p = _seg2(f)
    data = p.read_bytes()
    off = f.seg2_offsets[1]
    (length,) = struct.unpack_from("<I", data, off)
    body = bytearray(data[off + 4 : off + 4 + length])
    body[1 + 12 + 3] ^= 0x01  # flags, nonce, then into the ciphertext
    prev = f.seg2_heads[0]
    new = struct.pack("<I", len(body)) + bytes(body) + link(prev, bytes(body))
    # the next frames chain from the old head; rebuild them on the new one (their bytes unchanged)
    out, head, pos = data[:off] + new, link(prev, bytes(body)), off + 4 + length + 32
    while pos < len(data):
        (ln,) = struct.unpack_from("<I", data, pos)
        b = data[pos + 4 : pos + 4 + ln]
        head = link(head, b)
        out += struct.pack("<I", ln) + b + head
        pos += 4 + ln + 32
    p.write_bytes(out)


def frame_bad_payload(f: Facts) -> None:
    # a plaintext chain's frame whose payload is not zstd, its link hash recomputed
    d = f.home / "agents/vak/cost-log"
    p = d / segment_name(1, "log")
    data = p.read_bytes()
    (length,) = struct.unpack_from("<I", data, 0)
    body = b"\x00" + b"not a zstd frame"
    h = link(GENESIS, body)
    rest, head, pos = b"", h, 4 + length + 32
    while pos < len(data):
        (ln,) = struct.unpack_from("<I", data, pos)
        b = data[pos + 4 : pos + 4 + ln]
        head = link(head, b)
        rest += struct.pack("<I", ln) + b + head
        pos += 4 + ln + 32
    p.write_bytes(struct.pack("<I", len(body)) + body + h + rest)


def segment_malformed(f: Facts) -> None:
    _patch(f.home / f.ledger1 / segment_name(1, "sealed"), 0, b"VAKSEG02")


def _seals(f: Facts, text: bytes) -> None:
    w = ChainWriter()
    w.append(text)
    (f.home / f.ledger1 / "seals.log").write_bytes(w.data)


def segment_seal_mismatch(f: Facts) -> None:
    _seals(f, seal_entry_text(1, f.seal1_entries + 1, f.seal1_head, False))  # one frame more than it holds


def seals_log_bad_entry(f: Facts) -> None:
    _seals(f, f"seal one {f.seal1_entries} {f.seal1_head.hex()} 0".encode())


def segment_seal_missing(f: Facts) -> None:
    # seals.log emptied: segment 1 is sealed with no entry, so segment 2 has no recorded start either
    (f.home / f.ledger1 / "seals.log").write_bytes(b"")


def segment_discontinuous(f: Facts) -> None:
    # segment 2 written from GENESIS instead of the head recorded for segment 1
    scope = f"conversation:{SID1}"
    p = _seg2(f)
    from vakaudit.storage.chain import read_chain

    old = read_chain(p.read_bytes(), f.seal1_head, f.keys[scope])
    w = ChainWriter(GENESIS, key=f.keys[scope], nonces=lambda: f.rnd(12))
    w.extend(fr.entry for fr in old.frames if fr.entry is not None)
    p.write_bytes(w.data)


def segment_sealing_leftover(f: Facts) -> None:
    src = f.home / f.ledger1 / segment_name(1, "sealed")
    (f.home / f.ledger1 / segment_name(2, "sealing")).write_bytes(src.read_bytes()[:40])


def segment_interrupted_seal(f: Facts) -> None:
    # seg-2 was copied to .sealed and renamed, then vak stopped before recording the seal
    from vakaudit.storage.writer import sealed_segment_bytes

    (f.home / f.ledger1 / segment_name(2, "sealed")).write_bytes(sealed_segment_bytes(_seg2(f).read_bytes(), True))


def segment_gap(f: Facts) -> None:
    # conversation 2 as segments 1, 2 (sealed) and 3 (open), then seg-00000002.sealed deleted: the
    # newest sealed segment, which retention never removes
    scope = f"conversation:{SID2}"
    d = f.home / f.ledger2
    shutil.rmtree(d)
    entries = ledger_entries(SID2, {"id": f.objects["interface"], "len": 1}, {"id": f.objects["evidence"], "len": 1}, 2)
    write_segment_set(d, [SegmentSpec(entries[:3]), SegmentSpec(entries[3:6]), SegmentSpec(entries[6:], sealed=False)],
                      key=f.keys[scope], scope=scope, nonces=lambda: f.rnd(12))
    (d / segment_name(2, "sealed")).unlink()


def segment_dropped(f: Facts) -> None:
    # clean: conversation 2 rewritten as segments 1 (dropped by retention), 2 (sealed), 3 (open)
    scope = f"conversation:{SID2}"
    d = f.home / f.ledger2
    shutil.rmtree(d)
    entries = ledger_entries(SID2, {"id": f.objects["interface"], "len": 1}, {"id": f.objects["evidence"], "len": 1}, 2)
    write_segment_set(d, [SegmentSpec(entries[:3], dropped=True), SegmentSpec(entries[3:6]),
                          SegmentSpec(entries[6:], sealed=False)], key=f.keys[scope], scope=scope,
                      nonces=lambda: f.rnd(12))


def scope_erased(f: Facts) -> None:
    tw = TenantWriter(f.home / T, keks={0: KEK0}, id_key=ID_KEY, random=f.rnd)
    tw.shred(f"conversation:{SID2}")


def scope_key_missing(f: Facts) -> None:
    (f.home / T / "keys/scopes/keys" / scope_file_name(f"conversation:{SID2}")).unlink()


def object_without_grant(f: Facts) -> None:
    shutil.rmtree(f.home / T / "store/cas/grants" / f.objects["checkpoint"])


def grant_without_object(f: Facts) -> None:
    (f.home / T / "store" / object_rel_path(f.objects["checkpoint"])).unlink()


def ref_target_missing(f: Facts) -> None:
    con = sqlite3.connect(f.home / T / "store/refs.db")
    with con:
        con.execute("UPDATE refs SET target = ? WHERE name LIKE 'doc/%'", (b"ab" * 32,))
    con.close()


def object_id_mismatch(f: Facts) -> None:
    # an object stored under an id that is not the HMAC of its content (sealed with that id as AAD)
    wrong = "cd" * 32
    key, nonce = f.rnd(32), f.rnd(12)
    body = seal(key, nonce, wrong.encode("ascii"), zstd_raw(b"not what the id says"))
    store = f.home / T / "store"
    (store / object_rel_path(wrong)).parent.mkdir(parents=True, exist_ok=True)
    (store / object_rel_path(wrong)).write_bytes(body)
    scope = f"conversation:{SID1}"
    g = store / "cas/grants" / wrong
    g.mkdir(parents=True)
    (g / scope_file_name(scope)).write_bytes(wrap_key(KEK0, 0, scope, key, f.rnd(12)))


def grant_malformed(f: Facts) -> None:
    scope = f"conversation:{SID1}"
    (f.home / T / "store/cas/grants" / f.objects["checkpoint"] / scope_file_name(scope)).write_bytes(b"garbage")


def scope_key_malformed(f: Facts) -> None:
    (f.home / T / "keys/scopes/keys" / scope_file_name(f"conversation:{SID2}")).write_bytes(b"garbage")


def refs_db_unreadable(f: Facts) -> None:
    (f.home / T / "store/refs.db").write_bytes(b"this is not a SQLite database file" * 4)


@dataclass(frozen=True)
class Broken:
    readme: str  # one line: what is wrong -> expected
    expected: tuple[str, ...]  # finding codes verify must report (besides tenant_store_home)
    defect: Callable[[Facts], None] | None
    keys: bool = False  # verified with --keys sample_homes/v7-keys.json


S1, S2 = f"agents/vak/sessions/{SPC}/{SID1}", f"agents/vak/sessions/{SPC}/{SID2}"
BROKEN: dict[str, Broken] = {
    "clean": Broken("nothing (control)", (), None),
    "frame_bad_link": Broken(f"one bit of frame 1's link hash in {S1}/seg-00000002.log flipped",
                             ("frame_bad_link",), frame_bad_link),
    "frame_bad_length": Broken("frame 1's length field in seg-00000002.log set to 0", ("frame_bad_length",),
                               frame_bad_length),
    "frame_length_past_end": Broken("frame 1's length field in seg-00000002.log set to 1 MiB, past the end of "
                                    "the file (vak reads it as a torn tail; the intact frames after it say it is "
                                    "corruption)", ("frame_bad_length",), frame_length_past_end),
    "frame_torn_tail": Broken("seg-00000002.log cut 20 bytes into its last frame (a crash mid-append)",
                              ("frame_torn_tail",), frame_torn_tail),
    "frame_undecryptable": Broken("one ciphertext byte of frame 1 of seg-00000002.log changed, links recomputed "
                                  "(found with the keys only)", ("frame_undecryptable",), frame_undecryptable, True),
    "frame_bad_payload": Broken("frame 0 of agents/vak/cost-log/seg-00000001.log holds no zstd frame, links "
                                "recomputed", ("frame_bad_payload",), frame_bad_payload),
    "segment_malformed": Broken("seg-00000001.sealed starts VAKSEG02", ("segment_malformed",), segment_malformed),
    "segment_seal_mismatch": Broken("seals.log says segment 1 holds 5 frames; it holds 4",
                                    ("segment_seal_mismatch",), segment_seal_mismatch),
    "segment_seal_missing": Broken("seals.log is empty: sealed segment 1 has no entry, and so segment 2 no "
                                   "recorded start", ("segment_seal_missing",), segment_seal_missing),
    "seals_log_bad_entry": Broken("seals.log's one entry reads `seal one 4 …`, so segment 1 has no readable "
                                  "entry either", ("seals_log_bad_entry", "segment_seal_missing"),
                                  seals_log_bad_entry),
    "segment_discontinuous": Broken("seg-00000002.log chains from GENESIS, not from segment 1's sealed head",
                                    ("segment_discontinuous",), segment_discontinuous),
    "segment_sealing_leftover": Broken("a seg-00000002.sealing copy left by an interrupted seal (info)",
                                       ("segment_sealing_leftover",), segment_sealing_leftover),
    "segment_interrupted_seal": Broken("seg-00000002.log and seg-00000002.sealed both present, no seal entry "
                                       "(info)", ("segment_interrupted_seal",), segment_interrupted_seal),
    "segment_gap": Broken(f"{S2}: seg-00000002.sealed, the newest sealed segment, is gone (retention never "
                          "removes it)", ("segment_gap",), segment_gap),
    "segment_dropped": Broken(f"clean: {S2} segment 1 removed by retention, its seal entry kept (info)",
                              ("segment_dropped",), segment_dropped),
    "scope_erased": Broken("clean: conversation 2 crypto-shredded (tombstone, revoked, key file gone): an erased "
                           "conversation (info)", ("scope_erased",), scope_erased),
    "scope_key_missing": Broken(f"{S2}/KEY names a scope whose key file is gone, with no tombstone",
                                ("scope_key_missing",), scope_key_missing),
    "object_without_grant": Broken("the checkpoint file's object has no grant left", ("object_without_grant",),
                                   object_without_grant),
    "grant_without_object": Broken("the checkpoint file's object body is gone, its grant stays",
                                   ("grant_without_object",), grant_without_object),
    "ref_target_missing": Broken("the memory Document's doc/ ref points at an object not in the store",
                                 ("ref_target_missing",), ref_target_missing),
    "object_id_mismatch": Broken("an object stored under an id its content does not hash to (with the keys)",
                                 ("object_id_mismatch",), object_id_mismatch, True),
    "grant_malformed": Broken("the checkpoint file's grant holds no WrappedKey (with the keys)",
                              ("grant_malformed",), grant_malformed, True),
    "scope_key_malformed": Broken("conversation 2's scope key file holds no WrappedKey (with the keys)",
                                  ("scope_key_malformed",), scope_key_malformed, True),
    "refs_db_unreadable": Broken("store/refs.db is not a SQLite database", ("refs_db_unreadable",),
                                 refs_db_unreadable),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE)
    out = ap.parse_args().out
    home = out / "v7"
    if home.exists():
        shutil.rmtree(home)
    build(home, turns=3)
    write_json_key_file(out / "v7-keys.json", {0: KEK0}, ID_KEY)
    root = out / "broken7"
    if root.exists():
        shutil.rmtree(root)
    for name, b in BROKEN.items():
        facts = build(root / name / "home", seed=name, turns=2)
        if b.defect is not None:
            b.defect(facts)
        keys = " (verify --keys sample_homes/v7-keys.json)" if b.keys else ""
        expected = ", ".join(f"`{c}`" for c in b.expected) or "none"
        (root / name / "README.md").write_text(f"{b.readme}{keys} -> {expected}\n", encoding="utf-8")


if __name__ == "__main__":
    main()
