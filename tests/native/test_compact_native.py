"""The compiled compact pass of checkpoints (``linescan.compact_part``) against hand-computed
vectors and against the streaming Python pass ``_jsonstream._compact``, which stays the reference.

Both must give the same compact bytes and the same long-string measures, or both decline (None): the
checkpoint rows and findings are built from nothing else.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vakaudit._native as native
from vakaudit._native import _linescan as L
from vakaudit.artifacts import _jsonstream, checkpoints
from vakaudit.artifacts._base import ReadContext
from vakaudit.artifacts._jsonstream import COMPACT_LIMIT, LongString
from vakaudit.scan.walk import iter_home_files

B64 = b"QUJD" * 3000  # 12,000 bytes of base64: longer than the 4,096-byte cap


@pytest.fixture(autouse=True)
def _compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled pass on, whatever VAKAUDIT_NO_NATIVE says (the tests compare both paths)."""
    monkeypatch.setattr(native, "linescan", L)


def _python(doc: bytes, cap: int, limit: int = COMPACT_LIMIT) -> Any:
    return _jsonstream._compact(io.BytesIO(doc), cap, limit)


def _pieces(doc: bytes, cap: int, limit: int = COMPACT_LIMIT, piece: int | None = None) -> Any:
    if piece is None:
        return _jsonstream._compact_pieces(io.BytesIO(doc), cap, limit)
    saved = _jsonstream.PIECE_BYTES, getattr(_jsonstream._pieces, "buf", None)
    _jsonstream.PIECE_BYTES = piece
    _jsonstream._pieces.buf = bytearray(piece)
    try:
        return _jsonstream._compact_pieces(io.BytesIO(doc), cap, limit)
    finally:
        _jsonstream.PIECE_BYTES, _jsonstream._pieces.buf = saved


def _direct(doc: bytes, cap: int, limit: int = COMPACT_LIMIT) -> Any:
    # bytes after n in the buffer must not count
    res = _whole(bytearray(doc + b'"\\x"'), len(doc), cap, limit)
    return None if res is None else (res[0], [LongString(*m) for m in res[1]])


def _whole(buf: bytearray, n: int, cap: int, limit: int) -> Any:
    """compact_part over a whole document as its one and last piece: (compact, measure tuples) or None."""
    res = L.compact_part(buf, n, cap, limit, 0, 0, True)
    return None if res is None else (res[0], res[1])


def _assert_same(doc: bytes, cap: int, limit: int = COMPACT_LIMIT) -> Any:
    ref = _python(doc, cap, limit)
    for piece in (None, 1, 3, 17):  # the whole document in one piece, and pieces ending anywhere
        assert _pieces(doc, cap, limit, piece) == ref
    assert _direct(doc, cap, limit) == ref
    return ref


# --------------------------------------------------------------------------- hand-computed vectors


def test_hand_computed_small_cap() -> None:
    # "abcdef" (6 raw bytes) is over the cap of 4; the key "a", the key "b" and "xy" are kept
    doc = b'{"a":"abcdef","b":"xy"}'
    assert _assert_same(doc, 4) == (b'{"a":"\\u00000","b":"xy"}', [LongString(6, False, b"abcdef")])


def test_hand_computed_escapes() -> None:
    # 12345678\n9 is 11 raw bytes (the escape counts as its two bytes), its tail the last 8 of them;
    # q\" and \\x are 3 raw bytes each: kept as written
    doc = b'["12345678\\n9","q\\"","\\\\x"]'
    assert _assert_same(doc, 4) == (
        b'["\\u00000","q\\"","\\\\x"]',
        [LongString(11, True, b"45678\\n9")],
    )


def test_hand_computed_placeholder_numbers_and_cap_zero() -> None:
    # cap 0: every non-empty string is long; the empty one (0 bytes) is kept; indexes reach two digits
    doc = b'["",' + b'"a",' * 11 + b'"bc"]'
    compact = b'["",' + b"".join(b'"\\u0000%d",' % i for i in range(11)) + b'"\\u000011"]'
    assert _assert_same(doc, 0) == (
        compact,
        [LongString(1, False, b"a")] * 11 + [LongString(2, False, b"bc")],
    )


def test_hand_computed_limit_counts_16_per_placeholder() -> None:
    # kept: '{"a":' (5) + '}' (1) + 16 for the placeholder = 22, though the copy itself is 15 bytes
    doc = b'{"a":"xxxxxxxxxx"}'
    expected = (b'{"a":"\\u00000"}', [LongString(10, False, b"xxxxxxxx")])
    assert _assert_same(doc, 4, limit=22) == expected
    assert _assert_same(doc, 4, limit=21) is None
    # a kept string counts its bytes with the quotes: 5 + 12 + 1 = 18
    assert _assert_same(doc, 10, limit=18) == (doc, [])
    assert _assert_same(doc, 10, limit=17) is None


def test_hand_computed_declines() -> None:
    assert _assert_same(b'{"a":"\\u0000x"}', 4096) is None  # a kept string that reads like a placeholder
    assert _assert_same(b'{"a":"abc', 4096) is None  # truncated string
    assert _assert_same(b'{"a":"abc\\', 4096) is None  # truncated in an escape
    assert _assert_same(b'{"a":"abc\\"', 4096) is None  # the only quote is escaped
    assert _assert_same(b'"', 4096) is None
    assert _assert_same(b"", 4096) == (b"", [])
    assert _assert_same(b" [1, 2] ", 4096) == (b" [1, 2] ", [])


def test_part_measures_as_long_strings_or_tuples() -> None:
    """compact_part builds LongString values itself (slots set, no __init__) or tuples for another class;
    an open string's bytes move to the start of the buffer."""
    buf = bytearray(b'["abcdef",1,"ab\\"cd"]"xyz')  # the piece ends in the open string "xyz
    doc, measures, carry, size = L.compact_part(buf, len(buf), 4, 100, 7, 3, False, LongString)
    assert doc == b'["\\u00007",1,"\\u00008"]'  # numbered from 7
    assert measures == [LongString(6, False, b"abcdef"), LongString(6, True, b'ab\\"cd')]
    assert [type(m) for m in measures] == [LongString, LongString]
    assert hash(measures[0]) == hash(LongString(6, False, b"abcdef"))
    with pytest.raises(AttributeError):
        measures[0].raw_len = 1  # type: ignore[misc]
    assert (carry, size) == (4, 3 + 1 + 16 + 3 + 16 + 1)
    assert buf[:carry] == b'"xyz'
    for other in (None, tuple, int, type("Plain", (), {})):
        res = L.compact_part(bytearray(b'["abcdef"]'), 10, 4, 100, 0, 0, True, other)
        assert res == (b'["\\u00000"]', [(6, False, b"abcdef")], 0, 18)
    assert L.compact_part(bytearray(b'["abc'), 5, 4, 100, 0, 0, True) is None  # final: open string declines


# --------------------------------------------------------------------------- tricky documents

TRICKY = [
    b'{"seq":1,"files":[{"rel_path":"a","content":"' + B64 + b'"}],"observed":["a","b"]}',
    b'{"files":[{"content":"' + B64 + b'=="},{"content":"' + B64[:-1] + b'"}]}',
    b'{"files":[{"content":"' + B64 + b'\\n\\"x\\\\"}]}',  # escapes in a long string
    b'{"a":"' + b"x" * 4095 + b'\\"","b":"' + b"x" * 4094 + b'\\""}',  # an escape just before the cap
    b'{"a":"' + b"x" * 4096 + b'","b":"' + b"y" * 4097 + b'"}',  # at and over the cap
    b'{"a":"' + b"x" * 4094 + b'\\\\","b":"' + b"y" * 4095 + b'\\\\"}',  # escaped backslash at the cap
    b'{"' + b"k" * 5000 + b'":1}',  # a long key
    b'{"a":1,"a":2}',  # a duplicate key
    b'{"f":[{"a":1,"a":"' + B64 + b'"}]}',
    b'{"a":"\\u0000x"}',  # a kept string starting like a placeholder
    b'{"a":"\\u0000' + b"x" * 5000 + b'"}',  # a long one
    b'{"a":"\\u000"}',
    b'{"files":[{"content":"' + B64,  # truncated inside a string
    b'{"files":[{"content":"' + B64 + b"\\",  # ... on a backslash
    b'{"files":[{"content":"abc"}',  # truncated after it
    b'{"a":"ab\\"cdef","b":"\\"","c":"\\\\","d":"\\\\\\""}',  # escaped quotes and backslashes
    b'{"a":"\\u00e9\\ud83d\\ude00","b":"caf\xc3\xa9"}',
    b'{"a":"' + b"\xff" * 5000 + b'"}',
    b'{"a":"line\nbreak"}',
    b' \t\r\n{ "a" : [ 1 , 2.5 , true , null , { } , [ ] ] } \n',
    b'{"a":{"b":{"c":[[[{"d":"' + B64 + b'"}]]]}}}',  # nested arrays
    b"[" * 1500 + b"]" * 1500,
    b'"' + B64 + b'"',  # one long string
    b"",
    b"   ",
    b"\\\\\\",  # backslashes outside strings
    b'{"a":"' + b"\\\\" * 3000 + b'"}',  # a long string of escapes only
]


@pytest.mark.parametrize("doc", TRICKY)
@pytest.mark.parametrize("cap", [4, 4096])
def test_tricky_documents(doc: bytes, cap: int) -> None:
    _assert_same(doc, cap)
    _assert_same(doc, cap, limit=len(doc) // 3)


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 4099])
def test_reference_read_in_small_chunks(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """The reference on every read boundary still agrees with the whole-document pass."""
    monkeypatch.setattr(_jsonstream, "CHUNK_BYTES", chunk)
    for doc in TRICKY[:6] + TRICKY[9:18]:
        ref = _python(doc, 4096)
        assert _whole(bytearray(doc), len(doc), 4096, COMPACT_LIMIT) == (
            None if ref is None else (ref[0], [(m.raw_len, m.has_escape, m.tail) for m in ref[1]])
        )


# --------------------------------------------------------------------------- generated documents

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.text(max_size=12),
    st.sampled_from(["x" * 40, "é" * 30, "QUJD" * 20 + "==", 'q"\\' * 15, "\x00abc", "\\u0000"]),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(
    value=_values,
    cap=st.integers(min_value=0, max_value=40),
    chunk=st.integers(1, 64),
    pretty=st.booleans(),
    ascii_only=st.booleans(),
    cut=st.integers(min_value=0, max_value=10_000),
    limit=st.integers(min_value=0, max_value=400),
)
def test_generated_documents(
    value: Any, cap: int, chunk: int, pretty: bool, ascii_only: bool, cut: int, limit: int
) -> None:
    doc = json.dumps(value, indent=1 if pretty else None, ensure_ascii=ascii_only).encode()
    saved = _jsonstream.CHUNK_BYTES
    _jsonstream.CHUNK_BYTES = chunk
    try:
        for d in (doc, doc[: cut % (len(doc) + 1)]):  # whole, and truncated anywhere
            for lim in (COMPACT_LIMIT, limit):
                _assert_same(d, cap, lim)
    finally:
        _jsonstream.CHUNK_BYTES = saved


@settings(max_examples=200, deadline=None)
@given(
    doc=st.lists(
        st.sampled_from([b'"', b"\\", b"a", b"\\u0000", b"{", b":", b",", b"xyzw" * 3]), max_size=40
    ),
    cap=st.integers(min_value=0, max_value=12),
)
def test_byte_soup(doc: list[bytes], cap: int) -> None:
    """Quotes, backslashes and placeholder look-alikes in any order, valid JSON or not."""
    _assert_same(b"".join(doc), cap)


# --------------------------------------------------------------------------- files and the reader


class _CountingFile(io.FileIO):
    def __init__(self, path: Path) -> None:
        super().__init__(path, "rb")
        self.read_bytes = 0

    def readinto(self, b: Any) -> int | None:
        n = super().readinto(b)
        self.read_bytes += n or 0
        return n


@pytest.mark.parametrize("piece", [1, 2, 3, 7, 100, 4099, 1 << 20])
def test_pieces_of_any_size_each_byte_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, piece: int
) -> None:
    """Pieces end anywhere (in a string, on a backslash); every byte of the file is read once."""
    monkeypatch.setattr(_jsonstream, "PIECE_BYTES", piece)
    monkeypatch.setattr(_jsonstream._pieces, "buf", bytearray(piece), raising=False)
    for i, doc in enumerate(TRICKY[:6] + TRICKY[9:18] + TRICKY[-3:]):
        path = tmp_path / f"{i}.json"
        path.write_bytes(doc)
        with _CountingFile(path) as f:
            got = _jsonstream._compact_pieces(f, 4096, COMPACT_LIMIT)
            if got is not None:
                assert f.read_bytes == len(doc)
        assert got == _python(doc, 4096)
        for cap in (0, 4):
            assert _pieces(doc, cap) == _python(doc, cap)


def test_pieces_of_a_long_string_document(monkeypatch: pytest.MonkeyPatch) -> None:
    """A string many pieces long is measured exactly (the carried bytes are scanned again)."""
    monkeypatch.setattr(_jsonstream, "PIECE_BYTES", 1000)
    monkeypatch.setattr(_jsonstream._pieces, "buf", bytearray(10), raising=False)
    doc = b'{"a":"' + B64 * 20 + b'\\\\","b":"' + b"x" * 999 + b'"}'  # ends in an escaped backslash
    assert (
        _python(doc, 4096)
        == _pieces(doc, 4096)
        == (
            b'{"a":"\\u00000","b":"' + b"x" * 999 + b'"}',
            [LongString(240_002, True, b"QUJDQUJD"[-6:] + b"\\\\")],
        )
    )


def _snapshots(home: Path) -> list[str]:
    return [
        hf.rel_path
        for hf in iter_home_files(home)
        if hf.kind.name == "checkpoints" and hf.should_read and hf.rel_path.endswith(".json")
    ]


def test_every_checkpoint_of_the_sample_homes(sample_homes: Path) -> None:
    homes = [p for p in sample_homes.iterdir() if p.is_dir()]
    homes.append(Path(__file__).parents[1] / "artifacts" / "fixtures" / "checkpoints")
    checked = 0
    for home in homes:
        for rel_path in _snapshots(home):
            doc = (home / rel_path).read_bytes()
            for cap in (4096, 64, 4):
                _assert_same(doc, cap)
            checked += 1
    assert checked >= 3


def _reader_rows(home: Path, rel_path: str) -> tuple[list[dict[str, Any]], list[Any]]:
    findings: list[Any] = []
    ctx = ReadContext(home=home, rel_path=rel_path, home_scope="", session_id=None, emit=findings.append)
    rows = [r for batch in checkpoints._snapshot(ctx, True) for r in batch.to_pylist()]
    return rows, findings


def test_reader_uses_the_compiled_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain checkpoint goes through compact_part; its rows equal the Python pass's."""
    folder = tmp_path / "checkpoints" / "sid"
    folder.mkdir(parents=True)
    doc = (
        b'{"seq":1,"session_id":"sid","files":[{"rel_path":"a","content":"' + B64 + b'=="},{"rel_path":"b"}]}'
    )
    (folder / "0001.json").write_bytes(doc)
    calls: list[Any] = []

    def spy(*args: Any) -> Any:
        res = L.compact_part(*args)
        calls.append(res)
        return res

    monkeypatch.setattr(native, "linescan", type("Spy", (), {"compact_part": staticmethod(spy)}))
    compiled = _reader_rows(tmp_path, "checkpoints/sid/0001.json")
    assert calls and all(c is not None for c in calls)
    assert [m for c in calls for m in c[1]] == [LongString(12002, False, B64[-6:] + b"==")]
    assert b"".join(c[0] for c in calls) == (
        b'{"seq":1,"session_id":"sid","files":[{"rel_path":"a","content":"\\u00000"},{"rel_path":"b"}]}'
    )
    n_calls = len(calls)
    monkeypatch.setattr(native, "linescan", None)
    assert _reader_rows(tmp_path, "checkpoints/sid/0001.json") == compiled
    assert len(calls) == n_calls
    assert compiled[0] and not compiled[1]


def test_measures_of_a_long_string_class_c_cannot_fill_are_converted(monkeypatch: pytest.MonkeyPatch) -> None:
    # a LongString without slots (its layout is not the one the extension writes): the extension
    # hands back tuples and the reader turns them into that class, with the same values
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Plain:
        raw_len: int
        has_escape: bool
        tail: bytes

    monkeypatch.setattr(_jsonstream, "LongString", Plain)
    got = _jsonstream._compact_pieces(io.BytesIO(b'{"a":"abcdef","b":"xy"}'), 4, COMPACT_LIMIT)
    assert got == (b'{"a":"\\u00000","b":"xy"}', [Plain(6, False, b"abcdef")])


def test_a_string_longer_than_the_carry_limit_is_left_to_the_streaming_scanner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pieces of 16 bytes may carry an open string of at most 40: a 100-byte content string is
    # declined (memory stays bounded whatever a string's length); the reader then streams the file
    # and its rows are those of the Python pass
    monkeypatch.setattr(_jsonstream, "PIECE_BYTES", 16)
    monkeypatch.setattr(_jsonstream, "CARRY_LIMIT", 40)
    long_doc = b'{"seq":1,"files":[{"rel_path":"a","content":"' + b"QUJD" * 25 + b'"}]}'
    assert _jsonstream._compact_pieces(io.BytesIO(long_doc), 8, COMPACT_LIMIT) is None
    short_doc = b'{"seq":1,"files":[{"rel_path":"a","content":"' + b"QUJD" * 8 + b'"}]}'
    assert _jsonstream._compact_pieces(io.BytesIO(short_doc), 8, COMPACT_LIMIT) == (
        b'{"seq":1,"files":[{"rel_path":"a","content":"\\u00000"}]}',
        [LongString(32, False, b"QUJDQUJD")],
    )
    folder = tmp_path / "checkpoints" / "sid"
    folder.mkdir(parents=True)
    (folder / "0001.json").write_bytes(long_doc)
    compiled = _reader_rows(tmp_path, "checkpoints/sid/0001.json")
    monkeypatch.setattr(native, "linescan", None)
    assert _reader_rows(tmp_path, "checkpoints/sid/0001.json") == compiled
    assert compiled[0] and not compiled[1]
