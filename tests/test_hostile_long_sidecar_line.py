"""A sidecar line longer than ``MAX_LINE_BYTES`` is ``line_too_long`` and the rows after it are read.

Before, the JSONL sidecar framers joined a line's pieces with no limit: a 300 MB routing-evidence
file without a newline took scan and verify to ~1.2 GB.
"""

from __future__ import annotations

import io
import json

import duckdb
import pytest

from tests.hostile_homes import TINY, run_measured, tiny_copy
from vakaudit.artifacts import _lines as sidecar_lines
from vakaudit.ledger.framing import MAX_LINE_BYTES, LongLine

SIDECAR = "agents/vak/routing-evidence.jsonl"
SPARSE_BYTES = 300 << 20
LIMIT_KIB = 500 * 1024


@pytest.mark.slow
def test_300_mb_sidecar_line_without_newline_is_line_too_long_and_later_rows_are_read(tmp_path) -> None:
    home = tiny_copy(tmp_path / "home")
    rows = (TINY / SIDECAR).read_bytes()
    n_rows = rows.count(b"\n")
    with open(home / SIDECAR, "wb") as f:
        f.truncate(SPARSE_BYTES)  # 300 MB of zeros, no LF, no disk blocks
    with open(home / SIDECAR, "ab") as f:
        f.write(b"\n" + rows)
    scan = tmp_path / "scan"
    rc, peak, _, err = run_measured("scan", str(home), "--out", str(scan), "-q", "-j", "1", cwd=tmp_path)
    assert rc in (0, 1), err.decode()[-2000:]
    assert peak < LIMIT_KIB
    found = duckdb.sql(f"select code, line_no, offset_bytes from '{scan}/findings/*.parquet' "
                       f"where rel_path = '{SIDECAR}' and code = 'line_too_long'").fetchall()  # fmt: skip
    assert found == [("line_too_long", 1, 0)]
    table = duckdb.sql(f"select line_no, offset_bytes, size_bytes, provider from '{scan}/routing_evidence/**/*.parquet' "
                       f"where rel_path = '{SIDECAR}' order by line_no").fetchall()  # fmt: skip
    assert len(table) == 1 + n_rows
    assert table[0][:3] == (1, 0, SPARSE_BYTES + 1) and table[0][3] is None
    # the original rows follow, each where its bytes were put
    first = json.loads(rows.split(b"\n", 1)[0])
    assert table[1][:2] == (2, SPARSE_BYTES + 1) and table[1][3] == first["provider"]
    assert [r[0] for r in table] == list(range(1, n_rows + 2))
    assert sum(r[2] for r in table) == SPARSE_BYTES + 1 + len(rows)

    rc, peak, out, err = run_measured("verify", str(home), "--json", cwd=tmp_path)
    assert rc in (0, 1), err.decode()[-2000:]
    assert peak < LIMIT_KIB
    verify = [(f["code"], f["line_no"], f["offset_bytes"]) for f in json.loads(out)["findings"]
              if f["rel_path"] == SIDECAR and f["code"] == "line_too_long"]  # fmt: skip
    assert verify == [("line_too_long", 1, 0)]


class _Reader(io.BytesIO):
    """A file object without a descriptor (the framers then size their buffer by default)."""

    def fileno(self) -> int:
        raise OSError("no descriptor")


def _lines(data: bytes) -> list[tuple[int, int, bool]]:
    """(kept bytes, full length, is a LongLine) per line of each framer, LFs excluded."""
    raw = [(len(r), sidecar_lines.raw_len(r) + (t == 2), type(r) is LongLine) for _, _, r, t in sidecar_lines._iter_raw_lines(_Reader(data))]
    blocks = [
        (len(p), sidecar_lines.raw_len(p), type(p) is LongLine)
        for pieces, _ in sidecar_lines._iter_line_blocks(_Reader(data), 0)
        for p in pieces
    ]
    native = [
        (len(p), sidecar_lines.raw_len(p), type(p) is LongLine)
        for block, term in sidecar_lines._iter_blocks(_Reader(data), 0)
        for p in sidecar_lines._block_pieces(block, term)
    ]
    assert raw == blocks == native
    return raw


def test_every_sidecar_framer_cuts_a_line_one_byte_over_the_bound_and_keeps_the_next() -> None:
    over = b"x" * (MAX_LINE_BYTES + 1)
    at = b"y" * MAX_LINE_BYTES
    data = b"{}\n" + over + b"\n{}\n" + at + b"\n" + over + b"\n" + over
    assert _lines(data) == [
        (2, 2, False),
        (4096, MAX_LINE_BYTES + 1, True),
        (2, 2, False),
        (MAX_LINE_BYTES, MAX_LINE_BYTES, False),  # at the bound: still a line
        (4096, MAX_LINE_BYTES + 1, True),
        (4096, MAX_LINE_BYTES + 1, True),  # unterminated
    ]


def test_a_long_sidecar_line_followed_by_an_unterminated_long_line_keeps_every_byte() -> None:
    # (the compiled path's framer once dropped the bytes after a long line's LF when no whole line followed)
    over = b"x" * (MAX_LINE_BYTES + 1)
    assert _lines(b"{}\n" + over + b"\n" + over) == [
        (2, 2, False),
        (4096, MAX_LINE_BYTES + 1, True),
        (4096, MAX_LINE_BYTES + 1, True),
    ]
