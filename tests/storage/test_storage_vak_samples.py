"""Bytes vak's own vak-storage wrote (/work/shared/vak-samples-v7/), read with vak's own answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vakaudit.storage import read_chain, read_frame, read_segments
from vakaudit.storage.segments import seal_entry_text
from vakaudit.storage.writer import ChainWriter, SegmentSpec, sealed_segment_bytes, write_segment_set

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "vak-samples-v7"
SETS = ["plain_set", "enc_set", "three_set"]


@pytest.fixture(scope="module")
def samples() -> Path:
    if not SAMPLES.is_dir():
        pytest.fail(f"vak 7.0 samples not found at {SAMPLES}; the shared/ folder must sit beside the repo")
    return SAMPLES


def _expected(samples: Path, name: str) -> dict:
    return json.loads((samples / name / "expected.json").read_text(encoding="utf-8"))


def test_plain_chain_matches_vaks_verify_and_reads(samples: Path) -> None:
    exp = _expected(samples, "plain")
    data = (samples / "plain" / "chain.log").read_bytes()
    assert len(data) == exp["size"]
    r = read_chain(data)
    v = exp["verify_chain"]["ok"]
    assert (len(r.frames), r.head.hex(), r.torn_tail, r.valid_len, r.encrypted_frames) == (
        v["entries"], v["head"], v["torn_tail"], v["valid_len"], v["encrypted_frames"])
    assert [f.entry.decode() for f in r.frames] == exp["read_entries_no_key"]["ok"]
    assert [(f.offset, f.size_bytes, f.sealed) for f in r.frames] == [
        (e["offset"], e["len"], e["sealed"]) for e in exp["located_entries"]["ok"]]
    for e in exp["entry_at"]:
        fr = read_frame(data, e["offset"])
        assert fr.size_bytes == e["len"] and fr.entry.decode() == e["no_key"]["ok"]


@pytest.mark.parametrize("name", SETS)
def test_segment_sets_match_vaks_reads(samples: Path, name: str) -> None:
    exp = _expected(samples, "segments")[name]
    key = bytes.fromhex(exp["key_hex"]) if "key_hex" in exp else None
    s = read_segments(samples / "segments" / name, key)
    assert s.findings == [] and s.has_lock and s.scope is None
    assert [(x.segment, x.entries, x.head.hex(), x.compressed) for x in s.seals] == [
        (x["segment"], x["entries"], x["head"], x["compressed"]) for x in exp["seals"]]
    assert len(s.segments) == len(exp["segments"])
    for seg, e in zip(s.segments, exp["segments"], strict=True):
        v = e["verify_bytes"]["ok"]
        assert (seg.number, seg.form, seg.rel_path, seg.size_bytes, seg.prev.hex()) == (
            e["segment"], e["form"], e["file"], e["file_size"], e["prev_head"])
        c = seg.chain
        assert (len(c.frames), c.head.hex(), c.torn_tail, c.valid_len, c.encrypted_frames) == (
            v["entries"], v["head"], v["torn_tail"], v["valid_len"], v["encrypted_frames"])
        want = e["read_with_key"]["ok"] if key is not None else e["read_no_key"]["ok"]
        assert [f.entry.decode() for f in c.frames] == want
        assert want == exp["written"][str(seg.number)]


def test_sealed_frames_without_the_key_verify_and_stay_unread(samples: Path) -> None:
    exp = _expected(samples, "segments")["enc_set"]
    s = read_segments(samples / "segments" / "enc_set")
    assert s.findings == []
    assert [seg.chain.head.hex() for seg in s.segments] == [e["verify_bytes"]["ok"]["head"] for e in exp["segments"]]
    assert all(f.entry is None and f.sealed for seg in s.segments for f in seg.chain.frames)


def test_writer_reproduces_vaks_sealed_frames_and_seals_log(samples: Path) -> None:
    exp = _expected(samples, "segments")["enc_set"]
    key = bytes.fromhex(exp["key_hex"])
    raw = (samples / "segments" / "enc_set" / "seg-00000002.log").read_bytes()
    seg = read_segments(samples / "segments" / "enc_set", key).segments[1]
    # vak draws nonces at random: take them from its frames, the rest must be the same bytes
    nonces = iter([raw[f.offset + 5 : f.offset + 17] for f in seg.chain.frames])
    w = ChainWriter(seg.prev, key=key, compress="zstd", nonces=lambda: next(nonces))
    w.extend(f.entry for f in seg.chain.frames)
    assert w.data == raw
    # the sealed segment of encrypted frames: VAKSEG01, flag 0, the frames verbatim
    sealed = (samples / "segments" / "enc_set" / "seg-00000001.sealed").read_bytes()
    seg1 = read_segments(samples / "segments" / "enc_set", key).segments[0]
    nonces = iter([sealed[9 + f.offset + 5 : 9 + f.offset + 17] for f in seg1.chain.frames])
    w1 = ChainWriter(key=key, compress="zstd", nonces=lambda: next(nonces))
    w1.extend(f.entry for f in seg1.chain.frames)
    assert sealed_segment_bytes(w1.data, any_sealed=True) == sealed
    for name in SETS:
        s = read_segments(samples / "segments" / name)
        seals = ChainWriter(compress="zstd")
        for x in s.seals:
            seals.append(seal_entry_text(x.segment, x.entries, x.head, x.compressed))
        assert seals.data == (samples / "segments" / name / "seals.log").read_bytes()


def test_writer_reproduces_vaks_plain_frames_up_to_the_zstd_build(samples: Path) -> None:
    data = (samples / "plain" / "chain.log").read_bytes()
    r = read_chain(data)
    w = ChainWriter(compress="zstd")
    w.extend(f.entry for f in r.frames)
    got = read_chain(w.data)
    assert [f.entry for f in got.frames] == [f.entry for f in r.frames]
    # Frames 0-2 and 4 are byte-identical. Frame 3 (a 104 KB entry) compresses to as many bytes
    # but not the same ones: vak's Rust build bundles its own libzstd (baseline7.md §14 point 9).
    for i in (0, 1, 2, 4):
        a, b = r.frames[i], got.frames[i]
        assert w.data[b.offset : b.offset + b.size_bytes - 32] == data[a.offset : a.offset + a.size_bytes - 32]


def test_writer_reproduces_vaks_three_segment_set_file_for_file(samples: Path, tmp_path: Path) -> None:
    exp = _expected(samples, "segments")["three_set"]
    written = exp["written"]
    numbers = sorted(int(n) for n in written)
    specs = [SegmentSpec([e.encode() for e in written[str(n)]], sealed=n != numbers[-1]) for n in numbers]
    write_segment_set(tmp_path, specs, compress="zstd", seals_compress="zstd")
    src = samples / "segments" / "three_set"
    assert sorted(p.name for p in tmp_path.iterdir()) == exp["files"]
    for name in exp["files"]:
        assert (tmp_path / name).read_bytes() == (src / name).read_bytes(), name
