"""The compiled frame walker against the pure-Python reference walker: identical results.

``walk_frames`` (vakaudit/_native/linescan.c) walks the clean run of a 7.0 chain's frames and hands
the first frame that is not clean to the reference walker. These tests read the same bytes both
ways (``native=True`` / ``native=False``) and compare every frame, the chain summary and every
finding: on the 7.0 sample home, on every broken 7.0 home, and on generated chains with bit flips
and truncations, also across the 1 MiB read buffer's boundaries.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vakaudit import _native
from vakaudit.storage import frames as F
from vakaudit.storage import iter_frames, read_chain, read_segments
from vakaudit.storage.chain import _CHUNK, collect
from vakaudit.storage.writer import ChainWriter

pytestmark = pytest.mark.skipif(not _native.AVAILABLE, reason="the compiled extension is not built or switched off")

SAMPLES = Path(__file__).resolve().parents[2] / "sample_homes"
KEY = bytes(range(32))


def _summary(r) -> tuple:  # noqa: ANN001 - a ChainRead
    return (r.frames, r.head, r.valid_len, r.torn_tail, r.broken_at, r.encrypted_frames, r.entries, r.findings)


def _both(data: bytes, key: bytes | None = None, prev: bytes = F.GENESIS) -> tuple[tuple, tuple]:
    return (_summary(read_chain(data, prev, key, native=True)), _summary(read_chain(data, prev, key, native=False)))


def _segment_dirs(home: Path) -> list[Path]:
    return sorted({p.parent for p in home.rglob("*") if p.is_file() and (p.name.startswith("seg-") or p.name == "seals.log")})


def _segments_summary(d: Path, native: bool) -> tuple:
    s = read_segments(d, rel_dir=d.name, native=native)
    segs = [(x.number, x.form, x.rel_path, x.size_bytes, x.prev, _summary(x.chain)) for x in s.segments]
    return segs, s.seals, s.findings, s.scope, s.has_lock


def test_layout_constants_are_the_ones_of_frames_py() -> None:
    # the C walker takes HASH_LEN and MAX_FRAME from vakaudit.storage.frames and refuses another hash length
    assert (F.HASH_LEN, F.HEADER_LEN, F.OVERHEAD, F.MAX_FRAME, F.SEALED) == (32, 5, 36, 64 * 1024 * 1024, 1)
    walk = _native.linescan.walk_frames
    with pytest.raises(ValueError):
        walk(b"", 0, F.GENESIS, 20, F.MAX_FRAME)
    with pytest.raises(ValueError):
        walk(b"", 0, b"short", F.HASH_LEN, F.MAX_FRAME)
    # one frame of baseline7.md §3.1 built by hand: len = 1 + payload, hash = SHA-256(prev || len || flags || payload)
    import hashlib

    body = b"\x00" + b"payload"
    head = len(body).to_bytes(4, "little")
    digest = hashlib.sha256(F.GENESIS + head + body).digest()
    frame = head + body + digest
    assert walk(frame, 0, F.GENESIS, F.HASH_LEN, F.MAX_FRAME) == ([(0, 8, 0, digest)], len(frame))
    # a length above MAX_FRAME given to the walker stops it before the frame
    assert walk(frame, 0, F.GENESIS, F.HASH_LEN, 7) == ([], 0)
    # one byte short of the whole frame: not consumed
    assert walk(frame[:-1], 0, F.GENESIS, F.HASH_LEN, F.MAX_FRAME) == ([], 0)


def test_sample_home_v7_same_both_ways() -> None:
    dirs = _segment_dirs(SAMPLES / "v7")
    assert dirs
    for d in dirs:
        assert _segments_summary(d, True) == _segments_summary(d, False), d


@pytest.mark.parametrize("home", sorted(p.name for p in (SAMPLES / "broken7").iterdir() if p.is_dir()))
def test_broken7_homes_same_both_ways(home: str) -> None:
    for d in _segment_dirs(SAMPLES / "broken7" / home):
        assert _segments_summary(d, True) == _segments_summary(d, False), d


def _make(entries: list[bytes], sealed: bool, compress: str = "raw") -> bytes:
    counter = iter(range(1 << 30))
    w = ChainWriter(key=KEY if sealed else None, compress=compress,  # type: ignore[arg-type]
                    nonces=lambda: next(counter).to_bytes(12, "little"))
    w.extend(entries)
    return w.data


_entries = st.lists(st.binary(min_size=0, max_size=300).map(lambda b: b'{"x":"' + b.hex().encode() + b'"}'),
                    min_size=1, max_size=8)


@settings(max_examples=40, deadline=None)
@given(_entries, st.booleans(), st.booleans(), st.data())
def test_bit_flips_same_both_ways(entries: list[bytes], sealed: bool, with_key: bool, data: st.DataObject) -> None:
    raw = _make(entries, sealed)
    bit = data.draw(st.integers(0, len(raw) * 8 - 1))
    flipped = bytearray(raw)
    flipped[bit // 8] ^= 1 << (bit % 8)
    key = KEY if with_key else None
    native, ref = _both(bytes(flipped), key)
    assert native == ref


@settings(max_examples=40, deadline=None)
@given(_entries, st.booleans(), st.data())
def test_truncations_same_both_ways(entries: list[bytes], sealed: bool, data: st.DataObject) -> None:
    raw = _make(entries, sealed)
    cut = data.draw(st.integers(0, len(raw)))
    native, ref = _both(raw[:cut], KEY)
    assert native == ref


@settings(max_examples=20, deadline=None)
@given(_entries, st.binary(min_size=32, max_size=32))
def test_other_start_same_both_ways(entries: list[bytes], prev: bytes) -> None:
    raw = _make(entries, False, "zstd")
    native, ref = _both(raw, None, prev)
    assert native == ref
    assert native[4] == (None if prev == F.GENESIS else 0)  # from another start, frame 0 does not link


def _streamed(data: bytes, native: bool) -> tuple:
    return _summary(collect(iter_frames(io.BytesIO(data), key=KEY, native=native)))


def test_damage_around_the_read_buffer_boundary() -> None:
    # ~2.5 MB of frames: the compiled walker reads it in three buffers; damage a few bytes either
    # side of each boundary and at the end, and truncate there
    entries = [b'{"i":%d,"pad":"%s"}' % (i, b"q" * (1000 + i % 700)) for i in range(1800)]
    raw = _make(entries, True)
    assert len(raw) > 2 * _CHUNK
    assert _streamed(raw, True) == _streamed(raw, False)
    for at in (_CHUNK - 40, _CHUNK - 3, _CHUNK, _CHUNK + 2, 2 * _CHUNK - 1, len(raw) - 1):
        flipped = bytearray(raw)
        flipped[at] ^= 0x10
        assert _streamed(bytes(flipped), True) == _streamed(bytes(flipped), False), at
        assert _streamed(raw[:at], True) == _streamed(raw[:at], False), at


def test_corrupted_length_past_the_end_same_both_ways() -> None:
    # a length field raised past the end of the data (the case vak would call a torn tail)
    entries = [b'{"n":%d}' % i for i in range(6)]
    raw = bytearray(_make(entries, False))
    starts = [0]
    while starts[-1] < len(raw):
        starts.append(starts[-1] + F.frame_size(int.from_bytes(raw[starts[-1] : starts[-1] + 4], "little")))
    raw[starts[2] : starts[2] + 4] = (len(raw)).to_bytes(4, "little")
    native, ref = _both(bytes(raw))
    assert native == ref
    assert native[4] == 2  # broken at frame 2, not a torn tail


def _facts(r) -> tuple:  # noqa: ANN001 - a ChainRead or a finished ChainWalk
    return (r.head, r.valid_len, r.torn_tail, r.broken_at, r.encrypted_frames, r.entries, r.findings)


def _finished_segments(d: Path) -> tuple:
    """What verify reads: every segment's walk finished unseen (no frame objects kept)."""
    from vakaudit.storage import iter_segments

    walk = iter_segments(d, rel_dir=d.name, native=True)
    for _seg, _frames in walk:
        pass
    return [(x.number, x.form, x.size_bytes, x.prev, _facts(x.chain)) for x in walk.segments], walk.findings


def _reference_segments(d: Path) -> tuple:
    s = read_segments(d, rel_dir=d.name, native=False)
    return [(x.number, x.form, x.size_bytes, x.prev, _facts(x.chain)) for x in s.segments], s.findings


@pytest.mark.parametrize("home", ["v7", *sorted(f"broken7/{p.name}" for p in (SAMPLES / "broken7").iterdir() if p.is_dir())])
def test_unseen_frames_give_the_reference_facts(home: str) -> None:
    for d in _segment_dirs(SAMPLES / home):
        assert _finished_segments(d) == _reference_segments(d), d


@settings(max_examples=40, deadline=None)
@given(_entries, st.booleans(), st.booleans(), st.data())
def test_unseen_frames_bit_flips_and_truncations(entries: list[bytes], sealed: bool, compress: bool,
                                                 data: st.DataObject) -> None:
    raw = bytearray(_make(entries, sealed, "zstd" if compress else "raw"))
    if data.draw(st.booleans()):
        bit = data.draw(st.integers(0, len(raw) * 8 - 1))
        raw[bit // 8] ^= 1 << (bit % 8)
    else:
        del raw[data.draw(st.integers(0, len(raw))) :]
    walk = iter_frames(bytes(raw), native=True)
    walk.finish()
    assert _facts(walk) == _facts(read_chain(bytes(raw), native=False))
