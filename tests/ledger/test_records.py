"""The ledger reader's records, against values worked out by hand for small ledgers.

Both paths of :class:`~vakaudit.ledger.records.LedgerReader` are held to the same expectations
(``native=False``: the reference path; ``native=True``: the compiled kernel, its runs taken line by
line); ``tests/native/test_native_parity.py`` compares the two over vak's samples and their mutations.
"""

from __future__ import annotations

import hashlib
import io

import pytest

from vakaudit.findings import FindingCode
from vakaudit.ledger.chain import LineStatus
from vakaudit.ledger.records import LedgerReader, Record, RecordRun, TurnState, ts_key

S = LineStatus


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def line(ident: str, ts: str, kind: str, prev: str | None, body: str = "", parent: str | None = None) -> bytes:
    p = "null" if parent is None else f'"{parent}"'
    pv = "" if prev is None else f',"prev_hash":"{prev}"'
    return f'{{"id":"{ident}","parent_id":{p},"ts":"{ts}"{pv},"kind":"{kind}"{body}}}'.encode()


def chained(specs: list[tuple]) -> list[bytes]:
    out: list[bytes] = []
    prev = None
    for ident, ts, kind, body in specs:
        raw = line(ident, ts, kind, prev, body, out and specs[len(out) - 1][0] or None)
        out.append(raw)
        prev = sha(raw)
    return out


def read(data: bytes, **kw: object) -> tuple[list[Record], LedgerReader]:
    reader = LedgerReader(io.BytesIO(data).read, len(data), **kw)
    return list(reader.records()), reader


PATHS = pytest.mark.parametrize("native", [False, True], ids=["reference", "compiled"])

USER = ',"message":{"role":"user","content":[{"type":"text","text":"hi"}]},"meta":{}'
ASSISTANT = ',"message":{"role":"assistant","content":[{"type":"text","text":"ok"}]},"meta":{}'


@PATHS
def test_a_clean_chain(native: bool) -> None:
    lines = chained([("h", "2026-01-01T00:00:00Z", "header", ',"session_id":"s"'),
                     ("m1", "2026-01-01T00:00:01.5Z", "message", USER),
                     ("m2", "2026-01-01T00:00:02.250Z", "message", ASSISTANT)])  # fmt: skip
    data = b"\n".join(lines) + b"\n"
    recs, reader = read(data, native=native)
    assert [r.line_no for r in recs] == [1, 2, 3]
    assert [r.offset_bytes for r in recs] == [0, len(lines[0]) + 1, len(lines[0]) + len(lines[1]) + 2]
    assert [r.size_bytes for r in recs] == [len(x) + 1 for x in lines]
    assert [r.chain for r in recs] == [S.UNCHECKED, S.CHAIN_OK, S.CHAIN_OK]
    assert [r.expected for r in recs] == [None, sha(lines[0]), sha(lines[1])]
    assert [r.digest for r in recs] == [sha(x) for x in lines]
    assert [r.envelope[5] for r in recs] == ["header", "message", "message"]
    assert recs[2].envelope == ("m2", "m1", "2026-01-01T00:00:02.250Z", sha(lines[1]), None, "message")
    assert all(r.defect is None and r.ts_back is None for r in recs)
    assert reader.line_count == 3 and reader.consumed == len(data) and reader.ends_with_lf
    assert reader.chain.expected == sha(lines[2])
    assert reader.last_line() == (recs[2].offset_bytes, sha(lines[2] + b"\n"))
    assert reader.head == data[:4096]


@PATHS
def test_blank_crlf_unparseable_and_a_torn_tail(native: bool) -> None:
    a, b, c = chained([("a", "2026-01-01T00:00:00Z", "header", ""), ("b", "2026-01-01T00:00:01Z", "goal", ""),
                       ("c", "2026-01-01T00:00:02Z", "goal", "")])  # fmt: skip
    data = a + b"\n   \n" + b + b"\r\n" + b"not json\n" + c + b"\n" + b'{"id":"half'
    recs, reader = read(data, native=native)
    kinds = [(r.line_no, "entry" if r.envelope else (r.defect[0] if r.defect else "blank"), r.chain) for r in recs]
    assert kinds == [
        (1, "entry", S.UNCHECKED),
        (2, "blank", S.BLANK),
        (3, "entry", S.CHAIN_OK),  # the blank line leaves the expectation alone; the CR is not hashed
        (4, FindingCode.UNPARSEABLE_LINE, S.UNPARSEABLE),
        (5, "entry", S.UNCHECKED),  # after a skipped line nothing is expected
        (6, FindingCode.TORN_LAST_LINE, S.UNPARSEABLE),
    ]
    assert recs[2].crlf and recs[2].raw == b and recs[2].size_bytes == len(b) + 2
    assert recs[3].digest == sha(b"not json")
    assert not recs[5].terminated and recs[5].size_bytes == len(b'{"id":"half')
    assert not reader.ends_with_lf and reader.consumed == len(data)


@PATHS
def test_a_line_still_being_written_is_left_for_the_next_read(native: bool) -> None:
    (a,) = chained([("a", "2026-01-01T00:00:00Z", "header", "")])
    data = a + b"\n" + b'{"id":"ha'
    recs, reader = read(data, native=native, grew=lambda: True)
    assert [r.line_no for r in recs] == [1]
    assert reader.growing and reader.consumed == len(a) + 1 and reader.line_count == 1


@PATHS
def test_edited_bytes_break_the_next_link_and_a_byte_order_mark_is_taken_off(native: bool) -> None:
    a, b, c = chained([("a", "2026-01-01T00:00:00Z", "header", ""), ("b", "2026-01-01T00:00:01Z", "goal", ""),
                       ("c", "2026-01-01T00:00:02Z", "goal", "")])  # fmt: skip
    edited = b.replace(b"goal", b"gaol")
    data = b"\xef\xbb\xbf" + a + b"\n" + edited + b"\n" + c + b"\n"
    recs, _ = read(data, native=native)
    assert recs[0].bom and recs[0].raw == a and recs[0].offset_bytes == 0 and recs[0].data_offset == 3
    assert recs[0].size_bytes == len(a) + 4
    assert [r.chain for r in recs] == [S.UNCHECKED, S.CHAIN_OK, S.BROKEN]
    assert recs[2].expected == sha(edited) and recs[2].envelope[3] == sha(b)


@PATHS
def test_timestamps_that_go_back(native: bool) -> None:
    lines = chained([("a", "2026-01-01T00:00:05Z", "header", ""), ("b", "2026-01-01T00:00:04.9Z", "goal", ""),
                     ("c", "2026-01-01T00:00:04.95Z", "goal", "")])  # fmt: skip
    recs, _ = read(b"\n".join(lines) + b"\n", native=native)
    assert [r.ts_back for r in recs] == [None, "2026-01-01T00:00:05Z", None]


def test_the_sort_key_of_a_timestamp() -> None:
    assert ts_key("2026-01-01T00:00:05Z") == "2026-01-01T00:00:05.000000000"
    assert ts_key("2026-01-01T00:00:05.25Z") == "2026-01-01T00:00:05.250000000"
    assert ts_key("2026-01-01T01:00:05.123456789+01:00") == "2026-01-01T00:00:05.123456789"
    assert ts_key("yesterday") is None


@PATHS
def test_turn_numbers_when_rows_are_wanted(native: bool) -> None:
    from vakaudit.artifacts.session_ledger import EntriesBuffer

    lines = chained([("h", "2026-01-01T00:00:00Z", "header", ""),
                     ("cap", "2026-01-01T00:00:01Z", "turn_capabilities_ref", ',"epoch":1'),
                     ("u1", "2026-01-01T00:00:02Z", "message", USER),
                     ("a1", "2026-01-01T00:00:03Z", "message", ASSISTANT),
                     ("u2", "2026-01-01T00:00:04Z", "message", USER)])  # fmt: skip
    data = b"\n".join(lines) + b"\n"
    buf = EntriesBuffer()
    turns = TurnState()
    recs, _ = read(data, native=native, rows=(buf.native, {}), turns=turns)
    if native:  # the kernel numbered its lines into the rows it wrote, not into records
        buf.mark(("r", None, None, None))
        got = buf.take().to_pydict()
        numbered = list(zip(got["turn_no"], got["turn_id"], strict=True))
    else:
        numbered = [(r.turn_no, r.turn_id) for r in recs]
    assert numbered == [(None, None), (1, None), (1, "u1"), (1, "u1"), (2, "u2")]
    assert list(turns) == [2, "u2", False]


def test_an_attested_line_is_trusted_to_be_json_and_decoded_when_deep() -> None:
    # vak hashed the line it serialized: a successor attesting a line's digest vouches for its JSON
    # (only its depth is checked). A line forged together with its successor's prev_hash is read as
    # an entry on the reference path; deep=True decodes every line and sees that it is none.
    head = line("h", "2026-01-01T00:00:00Z", "header", None)
    forged = line("x", "2026-01-01T00:00:01Z", "goal", sha(head), ',"bad":tru')
    last = line("y", "2026-01-01T00:00:02Z", "goal", sha(forged))
    data = head + b"\n" + forged + b"\n" + last + b"\n"
    recs, _ = read(data, native=False)
    assert recs[1].envelope is not None and recs[1].payload is None
    deep, _ = read(data, native=False, deep=True)
    assert deep[1].defect[0] is FindingCode.UNPARSEABLE_LINE and deep[2].chain is S.UNCHECKED


def test_the_kernel_takes_lines_in_runs() -> None:
    lines = chained([(f"e{i}", f"2026-01-01T00:00:{i:02d}Z", "goal", "") for i in range(50)])
    data = b"\n".join(lines) + b"\n"
    items = list(LedgerReader(io.BytesIO(data).read, len(data), native=True))
    assert sum(len(i) for i in items if type(i) is RecordRun) >= 49  # the last line may be left to Python
