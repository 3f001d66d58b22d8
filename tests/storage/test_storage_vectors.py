"""baseline7.md §13 vectors V1–V6, byte for byte (tests/storage/vectors/baseline7.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vakaudit.storage import GENESIS, read_chain, read_frame
from vakaudit.storage.codec import zstd_level3, zstd_raw
from vakaudit.storage.frames import link
from vakaudit.storage.segments import parse_seal_entry
from vakaudit.storage.writer import ChainWriter, encode_frame, sealed_segment_bytes

V = json.loads((Path(__file__).parent / "vectors" / "baseline7.json").read_text(encoding="utf-8"))
H = bytes.fromhex


def test_v1_raw_block_frame() -> None:
    v = V["V1"]
    entry = v["entry"].encode()
    assert len(entry) == v["entry_len"]
    payload = zstd_raw(entry)
    assert payload == H(v["raw_payload_prefix"]) + entry and len(payload) == v["raw_payload_len"]
    frame, h = encode_frame(GENESIS, entry)
    assert frame == H(v["raw_len_field"]) + H(v["raw_flags"]) + payload + H(v["raw_hash"])
    assert len(frame) == v["raw_frame_len"] and h == H(v["raw_hash"])
    r = read_chain(frame)
    assert [f.entry for f in r.frames] == [entry] and r.head == H(v["raw_hash"]) and r.findings == []


def test_v1_libzstd_level3_frame() -> None:
    v = V["V1"]
    entry = v["entry"].encode()
    assert zstd_level3(entry) == H(v["l3_payload"])
    frame, h = encode_frame(GENESIS, entry, compress="zstd")
    assert frame[:4] == H(v["l3_len_field"]) and h == H(v["l3_hash"])
    assert read_frame(frame, 0).entry == entry


def test_v2_link_hash() -> None:
    assert link(GENESIS, H(V["V2"]["body"])) == H(V["V2"]["link"])


def test_v3_three_frame_chain() -> None:
    v = V["V3"]
    w = ChainWriter()
    w.extend(e.encode() for e in v["entries"])
    expected = b"".join(H(f["prefix"]) + H(f["hash"]) for f in v["frames"])
    assert w.data == expected and len(w.data) == v["size"] and w.head == H(v["head"])
    r = read_chain(expected)
    assert [f.offset for f in r.frames] == [f["offset"] for f in v["frames"]]
    assert [f.hash for f in r.frames] == [H(f["hash"]) for f in v["frames"]]
    assert [f.size_bytes for f in r.frames] == [53, 53, 53]
    assert r.head == H(v["head"]) and r.valid_len == 159 and r.torn_tail is None and r.broken_at is None


@pytest.mark.parametrize(("compress", "frame_key", "head_key"), [("raw", "raw_frame", "raw_head"),
                                                                 ("zstd", "l3_frame", "l3_head")])
def test_v4_seals_log_entry(compress: str, frame_key: str, head_key: str) -> None:
    v = V["V4"]
    frame, h = encode_frame(GENESIS, v["entry"].encode(), compress=compress)  # type: ignore[arg-type]
    assert frame == H(v[frame_key]) and h == H(v[head_key])
    seal = parse_seal_entry(read_chain(frame).frames[0].entry)
    assert seal is not None and (seal.segment, seal.entries, seal.head.hex(), seal.compressed) == (
        1, 3, V["V3"]["head"], True)


def test_v5_sealed_segment_headers() -> None:
    v = V["V5"]
    segment = b"".join(H(f["prefix"]) + H(f["hash"]) for f in V["V3"]["frames"])
    assert sealed_segment_bytes(segment, any_sealed=False) == H(v["compressed_header"]) + H(v["compressed_body_l3"])
    assert sealed_segment_bytes(segment, any_sealed=True) == H(v["verbatim_header"]) + segment


def test_v6_sealed_frames_with_offset_aad() -> None:
    v = V["V6"]
    key = H(v["key"])
    nonces = iter([H(v["frame0"]["nonce"]), H(v["frame1"]["nonce"])])
    w = ChainWriter(key=key, nonces=lambda: next(nonces))
    w.append(V["V1"]["entry"].encode())
    w.append(v["frame1"]["entry"].encode())
    f0, f1 = v["frame0"], v["frame1"]
    expected0 = (H(f0["len_field"]) + H(f0["flags"]) + H(f0["nonce"]) + H(f0["ciphertext"]) + H(f0["tag"])
                 + H(f0["hash"]))
    assert len(expected0) == f0["size"]
    assert w.data == expected0 + H(f1["frame"])
    r = read_chain(w.data, key=key)
    assert [f.entry for f in r.frames] == [V["V1"]["entry"].encode(), b'{"n":2}']
    assert [f.offset for f in r.frames] == [0, 250] and r.encrypted_frames == 2
    assert r.head == H(f1["hash"])
    # keyless: the chain still verifies, entries are unreadable
    keyless = read_chain(w.data)
    assert keyless.head == H(f1["hash"]) and [f.entry for f in keyless.frames] == [None, None]
    assert keyless.findings == [] and keyless.encrypted_frames == 2


def test_v6_frame_read_at_another_offset_does_not_open() -> None:
    # the AAD is the offset: frame 1's bytes moved to offset 0 verify as a chain link but do not open
    f1 = H(V["V6"]["frame1"]["frame"])
    fr = read_frame(f1, 0, key=H(V["V6"]["key"]))
    assert fr.entry is None and fr.problem == "frame_undecryptable"
