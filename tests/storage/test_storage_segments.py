"""Segment directories written by the writer, intact and broken, read back with the right findings."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vakaudit.findings import FindingCode
from vakaudit.storage import GENESIS, read_chain, read_segments
from vakaudit.storage.segments import iter_segments, seal_entry_text
from vakaudit.storage.writer import ChainWriter, SegmentSpec, sealed_segment_bytes, write_segment_set

C = FindingCode
KEY = bytes([7]) * 32


def _rows(seg: int, n: int) -> list[bytes]:
    return [b'{"seg":%d,"i":%d}' % (seg, i) for i in range(n)]


def _nonces():
    counter = iter(range(1 << 30))
    return lambda: next(counter).to_bytes(12, "big")


def _codes(s) -> list[tuple[str, int | None]]:
    return sorted((str(f.code), f.segment) for f in s.findings)


def test_three_segments_plain_and_sealed_read_clean(tmp_path: Path) -> None:
    specs = [SegmentSpec(_rows(1, 3)), SegmentSpec(_rows(2, 2)), SegmentSpec(_rows(3, 4), sealed=False)]
    seals = write_segment_set(tmp_path, specs)
    s = read_segments(tmp_path)
    assert s.findings == [] and s.has_lock and s.scope is None
    assert [(x.number, x.form) for x in s.segments] == [(1, "sealed"), (2, "sealed"), (3, "log")]
    assert [(x.segment, x.entries, x.head, x.compressed) for x in s.seals] == seals
    assert [x.prev for x in s.segments] == [GENESIS, seals[0][2], seals[1][2]]
    assert [f.entry for x in s.segments for f in x.chain.frames] == _rows(1, 3) + _rows(2, 2) + _rows(3, 4)
    assert (tmp_path / "seg-00000001.sealed").read_bytes()[8] == 1  # plaintext: compressed whole


def test_encrypted_segments_are_copied_verbatim_and_open_with_the_key(tmp_path: Path) -> None:
    specs = [SegmentSpec(_rows(1, 3)), SegmentSpec(_rows(2, 2), sealed=False)]
    write_segment_set(tmp_path, specs, key=KEY, scope="conversation:s1", nonces=_nonces())
    assert (tmp_path / "seg-00000001.sealed").read_bytes()[:9] == b"VAKSEG01\x00"
    s = read_segments(tmp_path, KEY)
    assert s.findings == [] and s.scope == "conversation:s1"
    assert [f.entry for x in s.segments for f in x.chain.frames] == _rows(1, 3) + _rows(2, 2)
    assert s.seals[0].compressed is False
    keyless = read_segments(tmp_path)
    assert keyless.findings == [] and sum(x.chain.encrypted_frames for x in keyless.segments) == 5


def test_sealed_segment_whose_count_and_head_disagree_with_its_seal_entry(tmp_path: Path) -> None:
    write_segment_set(tmp_path, [SegmentSpec(_rows(1, 3)), SegmentSpec(_rows(2, 1), sealed=False)])
    # replace segment 1 by a sealed copy holding one frame fewer: it verifies on its own
    w = ChainWriter()
    w.extend(_rows(1, 2))
    (tmp_path / "seg-00000001.sealed").write_bytes(sealed_segment_bytes(w.data, any_sealed=False))
    s = read_segments(tmp_path, rel_dir="agents/vak/cost-log")
    mism = [f for f in s.findings if f.code == C.SEGMENT_SEAL_MISMATCH]
    assert len(mism) == 1 and mism[0].segment == 1
    assert mism[0].rel_path == "agents/vak/cost-log/seg-00000001.sealed"
    assert "2 frames, seal says 3" in mism[0].message and "head differs" in mism[0].message
    # segment 2 still starts at the recorded head and reads
    assert [f.entry for f in s.segments[1].chain.frames] == _rows(2, 1)


def test_sealed_segment_with_bytes_after_its_last_frame_and_a_log_that_disagrees_with_its_seal(
        tmp_path: Path) -> None:
    write_segment_set(tmp_path, [SegmentSpec(_rows(1, 2)), SegmentSpec(_rows(2, 2)),
                                 SegmentSpec(_rows(3, 1), sealed=False)])
    w = ChainWriter()
    w.extend(_rows(1, 2))
    (tmp_path / "seg-00000001.sealed").write_bytes(sealed_segment_bytes(w.data + b"\x05\x00", any_sealed=False))
    # segment 2 left as a .log holding one frame more than its seal entry recorded
    w2 = ChainWriter(read_segments(tmp_path).seals[0].head)
    w2.extend(_rows(2, 3))
    (tmp_path / "seg-00000002.sealed").unlink()
    (tmp_path / "seg-00000002.log").write_bytes(w2.data)
    s = read_segments(tmp_path)
    mism = {f.segment: f.message for f in s.findings if f.code == C.SEGMENT_SEAL_MISMATCH}
    assert "torn tail at byte" in mism[1] and "seal says" not in mism[1]
    assert mism[2].startswith("log segment 2") and "3 frames, seal says 2" in mism[2]


def test_segment_not_starting_at_the_recorded_head_is_discontinuous(tmp_path: Path) -> None:
    write_segment_set(tmp_path, [SegmentSpec(_rows(1, 2)), SegmentSpec(_rows(2, 2), sealed=False)])
    w = ChainWriter(GENESIS)  # a segment 2 that restarts from GENESIS
    w.extend(_rows(2, 2))
    (tmp_path / "seg-00000002.log").write_bytes(w.data)
    s = read_segments(tmp_path)
    assert _codes(s) == [("segment_discontinuous", 2)]
    (f,) = s.findings
    assert f.frame_index == 0 and f.actual == GENESIS.hex() and f.expected == s.seals[0].head.hex()
    assert [fr.entry for fr in s.segments[1].chain.frames] == _rows(2, 2)


def test_corrupted_first_frame_of_a_segment_is_a_bad_link_not_a_discontinuity(tmp_path: Path) -> None:
    write_segment_set(tmp_path, [SegmentSpec(_rows(1, 2)), SegmentSpec(_rows(2, 2), sealed=False)])
    p = tmp_path / "seg-00000002.log"
    data = bytearray(p.read_bytes())
    data[12] ^= 0x40
    p.write_bytes(bytes(data))
    s = read_segments(tmp_path)
    assert _codes(s) == [("frame_bad_link", 2)] and s.segments[1].chain.broken_at == 0


def test_retention_drop_is_info_and_a_missing_segment_without_seal_is_a_gap(tmp_path: Path) -> None:
    specs = [SegmentSpec(_rows(1, 1), dropped=True), SegmentSpec(_rows(2, 1), dropped=True),
             SegmentSpec(_rows(3, 2)), SegmentSpec(_rows(4, 1), sealed=False)]
    write_segment_set(tmp_path, specs)
    s = read_segments(tmp_path)
    assert _codes(s) == [("segment_dropped", 1), ("segment_dropped", 2)]
    assert [x.number for x in s.segments] == [3, 4] and s.segments[0].prev == s.seals[1].head
    (tmp_path / "seg-00000003.sealed").unlink()  # the newest sealed segment: retention never drops it
    s = read_segments(tmp_path)
    assert ("segment_gap", 3) in _codes(s)


def test_missing_segment_with_no_seal_entry_is_a_gap(tmp_path: Path) -> None:
    write_segment_set(tmp_path, [SegmentSpec(_rows(1, 1)), SegmentSpec(_rows(2, 1)),
                                 SegmentSpec(_rows(3, 1), sealed=False)])
    w = ChainWriter()
    for x in read_segments(tmp_path).seals[:1]:
        w.append(seal_entry_text(x.segment, x.entries, x.head, x.compressed))
    (tmp_path / "seals.log").write_bytes(w.data)  # seal 2 gone with its file
    (tmp_path / "seg-00000002.sealed").unlink()
    s = read_segments(tmp_path)
    assert ("segment_gap", 2) in _codes(s) and ("segment_seal_missing", 3) in _codes(s)


def test_sealing_leftover_and_interrupted_seal_are_reported_and_the_log_wins(tmp_path: Path) -> None:
    write_segment_set(tmp_path, [SegmentSpec(_rows(1, 2)), SegmentSpec(_rows(2, 2), sealed=False)])
    log = (tmp_path / "seg-00000002.log").read_bytes()
    (tmp_path / "seg-00000002.sealed").write_bytes(sealed_segment_bytes(log, any_sealed=False))
    (tmp_path / "seg-00000003.sealing").write_bytes(b"VAKSEG01\x01partial")
    s = read_segments(tmp_path)
    assert _codes(s) == [("segment_interrupted_seal", 2), ("segment_sealing_leftover", 3)]
    assert "copy matches" in next(f.message for f in s.findings if f.code == C.SEGMENT_INTERRUPTED_SEAL)
    assert [(x.number, x.form) for x in s.segments] == [(1, "sealed"), (2, "log")]


def test_malformed_sealed_headers(tmp_path: Path) -> None:
    for bad, why in [(b"VAKSEG0", "shorter"), (b"VAKSEG02\x01xx", "VAKSEG01"), (b"VAKSEG01\x02xx", "flag 2"),
                     (b"VAKSEG01\x01not zstd at all", "stops decompressing")]:
        d = tmp_path / why.replace(" ", "_")
        write_segment_set(d, [SegmentSpec(_rows(1, 2)), SegmentSpec(_rows(2, 1), sealed=False)])
        (d / "seg-00000001.sealed").write_bytes(bad)
        s = read_segments(d)
        malformed = [f for f in s.findings if f.code == C.SEGMENT_MALFORMED]
        assert len(malformed) == 1 and why in malformed[0].message, why
        assert [f.entry for f in s.segments[1].chain.frames] == _rows(2, 1), why


def test_truncated_zstd_body_of_a_sealed_segment_is_malformed(tmp_path: Path) -> None:
    write_segment_set(tmp_path, [SegmentSpec(_rows(1, 40)), SegmentSpec(_rows(2, 1), sealed=False)])
    p = tmp_path / "seg-00000001.sealed"
    whole = p.read_bytes()
    for cut in (len(whole) - 1, 9 + (len(whole) - 9) // 2):
        p.write_bytes(whole[:cut])
        s = read_segments(tmp_path)
        codes = [str(f.code) for f in s.findings]
        assert "segment_malformed" in codes and "segment_seal_mismatch" in codes, cut
        assert "ends inside a zstd frame" in next(f.message for f in s.findings if f.code == C.SEGMENT_MALFORMED)
        assert [f.entry for f in s.segments[1].chain.frames] == _rows(2, 1)


def test_torn_seals_log_tail_is_absent_and_a_bad_entry_is_reported(tmp_path: Path) -> None:
    write_segment_set(tmp_path, [SegmentSpec(_rows(1, 1)), SegmentSpec(_rows(2, 1), sealed=False)])
    seals = (tmp_path / "seals.log").read_bytes()
    w = ChainWriter(read_chain(seals).head)
    w.append(b"seal two 1 ff 1")
    (tmp_path / "seals.log").write_bytes(seals + w.data + b"\x10\x00")
    s = read_segments(tmp_path)
    assert _codes(s) == [("frame_torn_tail", None), ("seals_log_bad_entry", None)]
    assert len(s.seals) == 1
    assert all(f.rel_path == "seals.log" for f in s.findings)


def test_streaming_a_directory_yields_each_segments_frames(tmp_path: Path) -> None:
    write_segment_set(tmp_path, [SegmentSpec(_rows(1, 3)), SegmentSpec(_rows(2, 2), sealed=False)])
    walk = iter_segments(tmp_path)
    got = [(seg.number, fr.index, fr.entry) for seg, frames in walk for fr in frames]
    assert got == [(1, i, e) for i, e in enumerate(_rows(1, 3))] + [(2, i, e) for i, e in enumerate(_rows(2, 2))]
    assert walk.findings == [] and [s.chain.entries for s in walk.segments] == [3, 2]
    assert [s.chain.frames for s in walk.segments] == [[], []]  # streamed, not kept
    assert [s.chain.head for s in walk.segments] == [s.chain.head for s in read_segments(tmp_path).segments]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(0, 6), min_size=1, max_size=5), open_last=st.booleans(),
       sealed=st.booleans(), drops=st.integers(0, 3))
def test_random_segment_sets_written_then_read_clean(tmp_path_factory, sizes: list[int], open_last: bool,
                                                     sealed: bool, drops: int) -> None:
    d = tmp_path_factory.mktemp("set")
    n = len(sizes)
    newest_sealed = n - 1 if open_last else n
    specs = [SegmentSpec(_rows(i + 1, k), sealed=not (open_last and i == n - 1),
                         dropped=i < min(drops, newest_sealed - 1))
             for i, k in enumerate(sizes)]
    write_segment_set(d, specs, key=KEY if sealed else None, scope="conversation:x" if sealed else None,
                      nonces=_nonces())
    s = read_segments(d, KEY if sealed else None)
    dropped = [i + 1 for i, sp in enumerate(specs) if sp.dropped]
    assert _codes(s) == [("segment_dropped", i) for i in dropped]
    kept = [i for i, sp in enumerate(specs) if not sp.dropped]
    assert [f.entry for x in s.segments for f in x.chain.frames] == [e for i in kept for e in specs[i].entries]
    assert all(x.chain.broken_at is None and x.chain.torn_tail is None for x in s.segments)


def test_a_segment_directory_that_does_not_exist_is_a_caller_error(tmp_path: Path) -> None:
    import pytest

    from vakaudit.errors import HomeNotFoundError

    with pytest.raises(HomeNotFoundError, match="does not exist"):
        read_segments(tmp_path / "absent")
