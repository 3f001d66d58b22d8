"""The one-pass checkpoint scan gives exactly what the streaming JSON scanner gives.

``scan_scalars`` measures long strings in one pass and parses the rest with orjson; it must yield the
same ``(path, value)`` events as ``iter_scalars`` or decline (None) so the reader streams the file
again. The checkpoint reader is compared both ways (``fast=True`` / ``fast=False``) on every
checkpoint of the sample homes, of two synthetic homes and of hand-made tricky documents.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vakaudit.artifacts import _jsonstream, checkpoints
from vakaudit.artifacts._base import ReadContext
from vakaudit.artifacts._jsonstream import JsonStreamError, LongString, iter_scalars, scan_scalars
from vakaudit.findings import Finding
from vakaudit.scan.walk import iter_home_files


def _reference(doc: bytes, cap: int) -> list[Any] | str:
    try:
        return list(iter_scalars(io.BytesIO(doc), cap=cap))
    except JsonStreamError as exc:
        return f"error at {exc.offset}"


def _fast(doc: bytes, cap: int) -> list[Any] | None:
    return scan_scalars(io.BytesIO(doc), cap=cap)


B64 = b"QUJD" * 3000  # 12,000 bytes of base64: longer than the 4,096-byte cap


@pytest.mark.parametrize(
    ("doc", "cap"),
    [
        (b'{"seq":1,"files":[{"rel_path":"a","content":"' + B64 + b'"}],"observed":["a","b"]}', 4096),
        (b'{"files":[{"content":"' + B64 + b'=="},{"content":"' + B64[:-1] + b'"}]}', 4096),
        (b'{"files":[{"content":"' + B64 + b'\\n\\"x\\\\"}]}', 4096),  # escapes in a long string
        (b'{"a":"' + b"x" * 4096 + b'","b":"' + b"y" * 4097 + b'"}', 4096),  # at and over the cap
        (b'{"a":"\\u00e9\\ud83d\\ude00","b":"caf\xc3\xa9","c":"\\"","d":"\\\\"}', 4096),
        (b' \t\r\n{ "a" : [ 1 , 2.5 , -0 , 1e5 , true , false , null , { } , [ ] ] } \n', 4096),
        (b'{"n":[18446744073709551615,18446744073709551616,-9223372036854775809,1.0]}', 4096),
        (b'"' + B64 + b'"', 4096),  # a document that is one long string
        (b"12", 4096),
        (b"[]", 4096),
        (b"{}", 4096),
        (b'{"a":{"b":{"c":[[[{"d":"' + B64 + b'"}]]]}}}', 4096),
        (b'{"a":"abcdef","b":"' + b"q" * 10 + b'"}', 4),  # a small cap
        (b'{"a":"ab\\"cdef"}', 4),
        (b'{"' + b"k" * 5000 + b'":1}', 4096),  # a long key: declined, streamed
        (b'{"a":1,"a":2}', 4096),  # a duplicate key: declined
        (b'{"f":[{"a":1,"a":"' + B64 + b'"}]}', 4096),
        (b'{"a":"\\u0000x"}', 4096),  # starts like a placeholder: declined
        (b'{"a":"\\u0000' + b"x" * 5000 + b'"}', 4096),  # a long one is fine
        (b'{"files":[{"content":"' + B64, 4096),  # truncated inside a string
        (b'{"files":[{"content":"abc"}', 4096),  # truncated after it
        (b'{"a":1}}', 4096),
        (b'{"a":tru}', 4096),
        (b'{"a":"\xff"}', 4096),  # invalid UTF-8 in a short string
        (b'{"a":"' + b"\xff" * 5000 + b'"}', 4096),  # ... in a long one (only measured)
        (b'{"a":"line\nbreak"}', 4096),  # a raw control character in a short string
        (b"\xef\xbb\xbf{}", 4096),  # a byte order mark
        (b"", 4096),
        (b"   ", 4096),
        (b"[" * 1500 + b"]" * 1500, 4096),  # deeper than orjson parses: declined, streamed
        (b'{"a":[' + b"[" * 900 + b"]" * 900 + b"]}", 4096),
    ],
)
def test_scan_scalars_equals_iter_scalars_or_declines(doc: bytes, cap: int) -> None:
    fast = _fast(doc, cap)
    ref = _reference(doc, cap)
    if fast is not None:
        assert fast == ref
    if not isinstance(ref, str) and b'"a":1,"a"' not in doc and b"k" * 5000 not in doc:
        if b"\\u0000x" not in doc and b"[" * 1000 not in doc:
            assert fast is not None  # a plain well-formed document takes the fast path


def test_long_string_measures_are_exact() -> None:
    doc = b'{"c":"' + B64 + b'==","d":"' + b"A" * 5000 + b'\\u0041"}'
    events = _fast(doc, 4096)
    assert events == [
        (("c",), LongString(12002, False, B64[-6:] + b"==")),
        (("d",), LongString(5006, True, b"AA\\u0041")),
    ]


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 7, 64, 4099])
def test_any_chunk_boundary(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """Backslashes, quotes and long strings falling on every read boundary."""
    monkeypatch.setattr(_jsonstream, "CHUNK_BYTES", chunk)
    doc = (
        b'{"seq":3,"label":"fix \\"it\\"","files":[{"rel_path":"a\\\\b","content":"'
        + b"QUJD" * 1100
        + b'\\\\"},{"rel_path":"c","content":"'
        + b"QUJD" * 1030
        + b'="}],"observed":["x","y\\u00e9"]}'
    )
    fast = _fast(doc, 4096)
    assert fast is not None
    assert fast == _reference(doc, 4096)


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["x" * 40, "é" * 30, "QUJD" * 20 + "==", 'q"\\' * 15]),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=150, deadline=None)
@given(
    value=_values, cap=st.integers(min_value=0, max_value=80), chunk=st.integers(1, 50), pretty=st.booleans()
)
def test_random_documents(value: Any, cap: int, chunk: int, pretty: bool) -> None:
    doc = json.dumps(value, indent=1 if pretty else None, ensure_ascii=chunk % 2 == 0).encode()
    saved = _jsonstream.CHUNK_BYTES
    _jsonstream.CHUNK_BYTES = chunk
    try:
        fast = _fast(doc, cap)
        ref = _reference(doc, cap)
    finally:
        _jsonstream.CHUNK_BYTES = saved
    assert not isinstance(ref, str)
    if fast is not None:
        assert fast == ref
    elif "\\u0000" not in doc.decode("utf-8", "replace") and not _has_long_key(value, cap):
        pytest.fail("a plain document must take the fast path")


def _has_long_key(value: Any, cap: int) -> bool:
    if isinstance(value, dict):
        return any(len(json.dumps(k)) - 2 > cap or _has_long_key(v, cap) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_long_key(v, cap) for v in value)
    return False


# --------------------------------------------------------------------------- the reader, both ways


def _rows(home: Path, rel_path: str, *, fast: bool) -> tuple[list[dict[str, Any]], list[Finding]]:
    findings: list[Finding] = []
    ctx = ReadContext(home=home, rel_path=rel_path, home_scope="", session_id=None, emit=findings.append)
    rows = []
    for batch in checkpoints._snapshot(ctx, fast):
        assert batch.schema.equals(checkpoints.SCHEMA)
        rows += batch.to_pylist()
    return rows, findings


def _assert_reader_agrees(home: Path, rel_path: str) -> int:
    fast = _rows(home, rel_path, fast=True)
    assert fast == _rows(home, rel_path, fast=False)
    return len(fast[0])


TRICKY_SNAPSHOTS = [
    b'{"seq":7,"session_id":"s","created_at":"2026-08-24T09:14:57.9Z","label":"l","files":[],"observed":[]}',
    b'{"seq":1,"files":[{"rel_path":"a","content":"' + B64 + b'"},{"rel_path":"b","hash":"h","size":3}]}',
    b'{"files":[{"rel_path":"a","hash":"h","size":1.5,"mtime_ns":true},{}, [], [[]], {"x":{}}, 5]}',
    b'{"files":{"0":{"content":"QQ=="}},"observed":[{"a":1},"b",{}],"label":{"t":"x"},"seq":"1"}',
    b'{"seq":2,"files":[{"rel_path":"a","content":"' + B64 + b'"},{"rel_path":"b","content":"QUJ',
    b'{"seq":2,"files":[{"rel_path":"a","content":"' + B64 + b'"}]} trailing',
    b'{"seq":2,"seq":3,"files":[{"content":"QQ==","content":"' + B64 + b'"}]}',
    b'{"label":"' + b"p" * 9000 + b'","created_at":"not a time","files":[{"content":"a\\u0041==="}]}',
]


def test_tricky_snapshots(tmp_path: Path) -> None:
    folder = tmp_path / "checkpoints" / "sid"
    folder.mkdir(parents=True)
    for i, doc in enumerate(TRICKY_SNAPSHOTS, start=1):
        (folder / f"{i:04d}.json").write_bytes(doc)
        _assert_reader_agrees(tmp_path, f"checkpoints/sid/{i:04d}.json")


def _snapshots(home: Path) -> list[str]:
    return [
        hf.rel_path
        for hf in iter_home_files(home)
        if hf.kind.name == "checkpoints" and hf.should_read and hf.rel_path.endswith(".json")
    ]


def test_every_checkpoint_of_the_sample_homes_and_fixtures(sample_homes: Path) -> None:
    homes = [p for p in sample_homes.iterdir() if p.is_dir()]
    homes.append(Path(__file__).parent / "fixtures" / "checkpoints")
    checked = 0
    for home in homes:
        for rel_path in _snapshots(home):
            _assert_reader_agrees(home, rel_path)
            checked += 1
    assert checked >= 3


def test_every_checkpoint_of_synthetic_homes(tmp_path_factory: pytest.TempPathFactory) -> None:
    from vakaudit.synth.home import build_home

    rows = 0
    for layout in ("g1", "g2"):
        home = tmp_path_factory.mktemp(f"ck_{layout}") / "home"
        build_home(home, profile="tiny", layout=layout, fsync=False, seed=5)
        rels = _snapshots(home)
        assert rels
        for rel_path in rels:
            with (home / rel_path).open("rb") as f:
                assert scan_scalars(f) is not None  # vak's own snapshots all take the fast path
            rows += _assert_reader_agrees(home, rel_path)
    assert rows > 10


_entry_values = st.one_of(
    _scalars,
    st.just(B64.decode()),
    st.just({}),
    st.just([]),
    st.lists(_scalars, max_size=2),
    st.dictionaries(st.sampled_from(["a", "content"]), _scalars, max_size=2),
)
_entries = st.one_of(
    st.dictionaries(
        st.sampled_from(["rel_path", "content", "hash", "size", "mtime_ns", "other"]),
        _entry_values,
        max_size=5,
    ),
    st.lists(_entry_values, max_size=3),
    _scalars,
)
_snapshot_docs = st.dictionaries(
    st.sampled_from(["files", "observed", "label", "seq", "session_id", "created_at", "other"]),
    st.one_of(
        st.lists(_entries, max_size=4),
        st.dictionaries(st.text(max_size=3), _entries, max_size=3),
        _entry_values,
        st.sampled_from(["2026-08-24T09:14:57.9Z", "s-1", "p" * 5000]),
    ),
    max_size=7,
)


@settings(max_examples=200, deadline=None)
@given(doc=_snapshot_docs)
@example(doc={"files": "\x00"})  # declined by the one-pass scan: a string starting with U+0000
def test_folding_the_tree_equals_folding_every_scalar(doc: dict[str, Any]) -> None:
    raw = json.dumps(doc).encode()
    by_events = checkpoints._Fold()
    for path, value in iter_scalars(io.BytesIO(raw)):
        by_events.event(path, value)
    parsed = _jsonstream.scan_document(io.BytesIO(raw))
    if parsed is None:
        # the one-pass scan declines (the reader then streams); for these small documents the only
        # reason is a string starting with U+0000, the marker it uses for measured long strings
        assert b'"\\u0000' in raw
        return
    by_tree = checkpoints._Fold()
    by_tree.tree(*parsed)
    assert by_tree.head == by_events.head
    assert by_tree.entries == by_events.entries
    assert list(by_tree.entries) == list(by_events.entries)
    assert (by_tree.observed, by_tree.fmt) == (by_events.observed, by_events.fmt)
