"""Properties of the shared streamers: lines tile the file exactly; the JSON scanner agrees with orjson."""

from __future__ import annotations

import io
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from vakaudit.artifacts import _jsonstream, _lines


class Trickle(io.BytesIO):
    """A file whose reads return at most ``step`` bytes, as a raw file or a pipe may: exercises every
    chunk boundary of the streamers."""

    def __init__(self, data: bytes, step: int) -> None:
        super().__init__(data)
        self.step = step

    def read(self, n: int | None = -1) -> bytes:
        n = self.step if n is None or n < 0 else min(n, self.step)
        return super().read(n)


@settings(max_examples=150, deadline=None)
@given(
    data=st.binary(max_size=3000),
    start=st.integers(min_value=0, max_value=3000),
    step=st.integers(min_value=1, max_value=9),
)
def test_lines_tile_the_bytes_from_any_start(data: bytes, start: int, step: int) -> None:
    start = min(start, len(data))
    lines = list(_lines.iter_lines(Trickle(data, step), start))
    pos = start
    for line in lines:
        assert line.offset == pos
        assert data[pos : pos + len(line.raw)] == line.raw
        term = data[pos + len(line.raw) : pos + line.size]
        assert term in (b"\n", b"\r\n", b"")
        assert (term == b"") == (line.term_len == 0)
        pos += line.size
    assert pos == len(data)
    # line numbers are absolute: one more than the LFs before the line
    for line in lines:
        assert line.line_no == data[: line.offset].count(b"\n") + 1


def _flat(value: Any, path: tuple = ()) -> list:
    if isinstance(value, dict):
        return [(path, {})] if not value else [x for k, v in value.items() for x in _flat(v, (*path, k))]
    if isinstance(value, list):
        return [(path, [])] if not value else [x for i, v in enumerate(value) for x in _flat(v, (*path, i))]
    return [(path, value)]


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(doc=JSON, indent=st.booleans(), step=st.integers(min_value=1, max_value=9))
def test_json_scanner_yields_what_orjson_decodes(doc: Any, indent: bool, step: int) -> None:
    data = orjson.dumps(doc, option=orjson.OPT_INDENT_2 if indent else 0)
    got = list(_jsonstream.iter_scalars(Trickle(data, step), cap=1 << 20))
    assert got == _flat(orjson.loads(data))


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=300), step=st.integers(min_value=1, max_value=9), cap=st.integers(0, 50))
def test_long_strings_are_measured_across_chunks(text: str, step: int, cap: int) -> None:
    data = orjson.dumps({"k": text})
    ((path, value),) = list(_jsonstream.iter_scalars(Trickle(data, step), cap=cap))
    raw_len = len(data) - len(b'{"k":""}')  # bytes between the quotes, escapes included
    assert path == ("k",)
    if raw_len > cap:
        assert value.raw_len == raw_len and value.has_escape == (b"\\" in data)
    else:
        assert value == text
