"""Chains: the verified prefix, where a chain breaks, torn tails told apart from corrupted lengths."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vakaudit import _native
from vakaudit.findings import FindingCode
from vakaudit.storage import GENESIS, iter_frames, read_chain
from vakaudit.storage.writer import ChainWriter

C = FindingCode
KEY = bytes(range(32))


def _chain(entries: list[bytes], key: bytes | None = None) -> tuple[bytes, list[int]]:
    """The chain's bytes and each frame's start offset, plus the end offset as the last element."""
    counter = iter(range(1 << 30))
    w = ChainWriter(key=key, nonces=lambda: next(counter).to_bytes(12, "little"))
    starts = []
    for e in entries:
        starts.append(w.offset)
        w.append(e)
    return w.data, [*starts, w.offset]


SMALL = [b'{"kind":"header","n":0}', b'{"n":1,"text":"hello"}', b'{"n":2}', b'{"n":3,"x":[1,2,3]}']


def test_every_single_bit_flip_is_found_at_its_frame() -> None:
    for key in (None, KEY):
        data, starts = _chain(SMALL, key)
        for bit in range(len(data) * 8):
            mutated = bytearray(data)
            mutated[bit // 8] ^= 1 << (bit % 8)
            frame = max(i for i, s in enumerate(starts[:-1]) if s <= bit // 8)
            r = read_chain(bytes(mutated), key=key)
            assert r.broken_at == frame, (key is not None, bit)
            assert r.torn_tail is None, (key is not None, bit)
            assert [f.entry for f in r.frames] == SMALL[:frame]
            assert r.valid_len == starts[frame]
            codes = {f.code for f in r.findings}
            assert codes <= {C.FRAME_BAD_LINK, C.FRAME_BAD_LENGTH} and codes, bit
            (broken,) = [f for f in r.findings if f.code in (C.FRAME_BAD_LINK, C.FRAME_BAD_LENGTH)]
            assert broken.frame_index == frame and broken.offset_bytes == starts[frame]


def test_every_truncation_point_is_clean_or_a_torn_tail_never_a_break() -> None:
    data, starts = _chain(SMALL)
    for cut in range(len(data) + 1):
        r = read_chain(data[:cut])
        complete = max(i for i, s in enumerate(starts) if s <= cut)
        assert r.broken_at is None, cut
        assert len(r.frames) == complete and r.valid_len == starts[complete]
        if cut in starts:
            assert r.torn_tail is None and r.findings == [], cut
        else:
            assert r.torn_tail == starts[complete], cut
            assert [f.code for f in r.findings] == [C.FRAME_TORN_TAIL]


def test_length_corrupted_past_the_end_is_a_break_not_a_torn_tail() -> None:
    # vak reads this as a torn tail at frame 1 and its repair would cut frames 1..3 that are intact
    data, starts = _chain(SMALL)
    mutated = bytearray(data)
    struct.pack_into("<I", mutated, starts[1], len(data))  # frame 1's len now points past the end
    r = read_chain(bytes(mutated))
    assert r.torn_tail is None and r.broken_at == 1 and len(r.frames) == 1
    (f,) = r.findings
    assert f.code == C.FRAME_BAD_LENGTH and f.frame_index == 1 and f.offset_bytes == starts[1]
    assert f"starts at offset {starts[2]}" in f.message
    assert f.expected == str(starts[2] - starts[1] - 36)
    d = read_chain(bytes(mutated), segment=4).findings[0].to_dict()
    assert (d["segment"], d["frame_index"], d["offset_bytes"]) == (4, 1, starts[1])


def test_findings_without_a_chain_position_keep_their_jsonl_era_shape() -> None:
    from vakaudit.findings import Finding, Severity

    d = Finding(C.TORN_LAST_LINE, Severity.WARNING, "a.jsonl", "torn", line_no=3).to_dict()
    assert set(d) == {"code", "severity", "rel_path", "message", "line_no", "offset_bytes", "entry_id",
                      "expected", "actual", "count"}


def test_length_of_the_last_frame_corrupted_past_the_end_is_a_break() -> None:
    data, starts = _chain(SMALL)
    mutated = bytearray(data)
    true_len = struct.unpack_from("<I", mutated, starts[3])[0]
    struct.pack_into("<I", mutated, starts[3], true_len + 1000)
    r = read_chain(bytes(mutated))
    assert r.torn_tail is None and r.broken_at == 3 and len(r.frames) == 3
    assert [(f.code, f.expected) for f in r.findings] == [(C.FRAME_BAD_LENGTH, str(true_len))]


def test_torn_tail_is_reported_at_the_unfinished_frame() -> None:
    data, starts = _chain(SMALL)
    r = read_chain(data[: starts[3] + 10])
    assert r.torn_tail == starts[3] and r.broken_at is None and len(r.frames) == 3
    assert r.head == read_chain(data[: starts[3]]).head


def test_zero_and_oversized_lengths_break_the_chain() -> None:
    data, starts = _chain(SMALL)
    for bad in (0, 64 * 1024 * 1024 + 1):
        mutated = bytearray(data)
        struct.pack_into("<I", mutated, starts[2], bad)
        r = read_chain(bytes(mutated))
        assert r.broken_at == 2 and [f.code for f in r.findings] == [C.FRAME_BAD_LENGTH]


def test_wrong_key_reports_every_frame_undecryptable_and_the_chain_verifies() -> None:
    data, _ = _chain(SMALL, KEY)
    r = read_chain(data, key=bytes(32))
    assert r.broken_at is None and len(r.frames) == 4 and all(f.entry is None for f in r.frames)
    assert [f.code for f in r.findings] == [C.FRAME_UNDECRYPTABLE] * 4
    assert KEY.hex() not in repr(r) and "hello" not in repr(r.frames)


def test_bad_zstd_payload_is_a_finding_and_the_chain_reads_on() -> None:
    from vakaudit.storage.frames import link

    body = b"\x00not zstd"
    frame = struct.pack("<I", len(body)) + body + link(GENESIS, body)
    w = ChainWriter(link(GENESIS, body))
    w.append(b'{"n":1}')
    r = read_chain(frame + w.data)
    assert [f.entry for f in r.frames] == [None, b'{"n":1}'] and r.broken_at is None
    assert [(f.code, f.frame_index) for f in r.findings] == [(C.FRAME_BAD_PAYLOAD, 0)]


def test_streaming_from_a_file_equals_reading_the_bytes(tmp_path) -> None:
    data, _ = _chain([b'{"n":%d,"pad":"%s"}' % (i, b"x" * i * 50) for i in range(40)], KEY)
    path = tmp_path / "seg-00000001.log"
    path.write_bytes(data + data[:30])
    walk = iter_frames(path, key=KEY)
    streamed = [(f.index, f.offset, f.size_bytes, f.plain_bytes, f.sealed, f.entry) for f in walk]
    eager = read_chain(data + data[:30], key=KEY)
    assert streamed == [(f.index, f.offset, f.size_bytes, f.plain_bytes, f.sealed, f.entry) for f in eager.frames]
    assert (walk.head, walk.valid_len, walk.torn_tail) == (eager.head, eager.valid_len, len(data))


@settings(max_examples=60, deadline=None)
@given(entries=st.lists(st.binary(max_size=300), max_size=12), sealed=st.booleans(),
       compress=st.sampled_from(["raw", "zstd"]))
def test_random_chains_written_then_read_clean(entries: list[bytes], sealed: bool, compress: str) -> None:
    key = KEY if sealed else None
    counter = iter(range(1 << 30))
    w = ChainWriter(key=key, compress=compress, nonces=lambda: next(counter).to_bytes(12, "big"))  # type: ignore[arg-type]
    w.extend(entries)
    r = read_chain(w.data, key=key)
    assert [f.entry for f in r.frames] == entries
    assert r.findings == [] and r.broken_at is None and r.torn_tail is None
    assert r.valid_len == len(w.data) and r.head == w.head
    assert r.encrypted_frames == (len(entries) if sealed else 0)


class _CountingStream:
    """A binary stream that records how much was read, and the largest single read."""

    def __init__(self, data: bytes) -> None:
        import io

        self._inner = io.BytesIO(data)
        self.consumed = 0
        self.largest = 0

    def read(self, n: int = -1) -> bytes:
        out = self._inner.read(n)
        self.consumed += len(out)
        self.largest = max(self.largest, len(out))
        return out


def test_streaming_reads_one_frame_at_a_time() -> None:
    """The reference walker reads frame by frame (the compiled one reads ahead: next test)."""
    entries = [b'{"i":%d,"pad":"%s"}' % (i, b"y" * 400) for i in range(200)]
    data, starts = _chain(entries)
    stream = _CountingStream(data)
    walk = iter_frames(stream, native=False)  # type: ignore[arg-type]
    it = iter(walk)
    first = next(it)
    assert first.entry == entries[0] and stream.consumed == starts[1]  # nothing read ahead
    assert sum(1 for _ in it) == 199
    assert stream.largest <= max(b - a for a, b in zip(starts, starts[1:], strict=False))


@pytest.mark.skipif(not _native.AVAILABLE, reason="the compiled extension is not built or switched off")
def test_native_streaming_reads_bounded_chunks() -> None:
    """The compiled walker reads 1 MiB at a time, more only for a frame larger than that."""
    from vakaudit.storage.chain import _CHUNK

    small = [b'{"i":%d,"pad":"%s"}' % (i, b"y" * 4000) for i in range(600)]  # ~2.4 MB of frames
    big = b'{"big":"%s"}' % (b"z" * (3 * _CHUNK))
    entries = [*small, big, *small[:5]]
    data, _starts = _chain(entries)
    stream = _CountingStream(data)
    walk = iter_frames(stream, native=True)  # type: ignore[arg-type]
    got = [f.entry for f in walk]
    assert got == entries and walk.findings == [] and walk.valid_len == len(data)
    assert stream.consumed == len(data)
    assert stream.largest <= len(big) + 64 + _CHUNK
