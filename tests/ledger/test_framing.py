"""iter_bounded_lines against a plain split of the same bytes, for every chunk size and bound."""

from __future__ import annotations

import hashlib
import io
import zlib

from hypothesis import given, settings
from hypothesis import strategies as st

from vakaudit.ledger.framing import LONG_LINE_PREFIX, LongLine, iter_bounded_lines


def _expected(data: bytes, max_line: int) -> list[tuple]:
    out, off = [], 0
    parts = data.split(b"\n")
    for i, p in enumerate(parts):
        terminated = i < len(parts) - 1
        if not terminated and not p:
            break
        if len(p) > max_line:
            out.append((off, ("long", len(p), zlib.crc32(p), hashlib.sha256(p).hexdigest(), p[:LONG_LINE_PREFIX]),
                        terminated))  # fmt: skip
        else:
            out.append((off, p, terminated))
        off += len(p) + 1
    return out


def _got(data: bytes, max_line: int, chunk: int) -> list[tuple]:
    out = []
    for off, raw, terminated in iter_bounded_lines(io.BytesIO(data).read, chunk_bytes=chunk, max_line=max_line):
        if isinstance(raw, LongLine):
            raw = ("long", raw.length, raw.crc32, raw.sha256, bytes(raw))
        out.append((off, raw, terminated))
    return out


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300).map(lambda b: b.replace(b"\x00", b"\n")), st.integers(0, 40), st.integers(1, 25))
def test_bounded_lines_equal_a_split(data: bytes, max_line: int, chunk: int) -> None:
    assert _got(data, max_line, chunk) == _expected(data, max_line)


def test_tap_sees_every_byte_in_order_and_size_stops_early() -> None:
    data = b"ab\ncdefgh\n" + b"z" * 50
    seen = bytearray()
    lines = list(iter_bounded_lines(io.BytesIO(data).read, 12, chunk_bytes=5, max_line=4, tap=seen.extend))
    assert bytes(seen) == data[:12]
    assert [(o, bytes(r), t) for o, r, t in lines] == [(0, b"ab", True), (3, b"cdefgh", True), (10, b"zz", False)]
    assert isinstance(lines[1][1], LongLine) and lines[1][1].length == 6
