"""The compiled ledger scan's string blocks and Arrow column buffers against hand-computed values.

``scan_string`` looks at the first 16 bytes of a string, then skips plain runs 64 bytes at a time
(AVX2, or four SSE2 loads), then 16, then byte by byte: a quote, backslash, control byte or non-ASCII byte at every position around those block
edges, and multi-byte characters split across them, must give exactly the verdict of strict JSON
(RFC 8259, strict UTF-8). The compiled kernel (``read_run``, through the ledger reader) writes its
rows into ``linescan.EntryCols`` buffers and the reference reader appends to the same buffers: the
batches equal the reference reader's with rows in Python lists, row for row, on every ledger of a
synthetic home and on mixed files.
"""

from __future__ import annotations

import hashlib
import os
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pyarrow as pa
import pytest

import vakaudit._native as native
import vakaudit.artifacts.session_ledger as sl
from vakaudit.artifacts._timestamps import timestamps

L = native.linescan
ENV = b'{"id":"a","parent_id":null,"ts":"2026-01-01T00:00:00.123Z","kind":"x"'
LENGTH = 200  # string length: several 64-byte blocks, then a 16-byte tail and single bytes


def _cpu_has(flag: str) -> bool:
    """Whether the kernel lists ``flag`` among the CPU's features (False where /proc/cpuinfo is not Linux's)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return any(
        line.startswith("flags") and flag in line.split(":", 1)[1].split() for line in text.splitlines()
    )


@pytest.fixture(params=[True, False], ids=["avx2", "sse2"])
def simd(request: pytest.FixtureRequest):  # noqa: ANN201
    assert L.set_avx2(request.param) is (request.param and _cpu_has("avx2"))
    yield request.param
    L.set_avx2(True)


def member_of(body: bytes) -> tuple | None:
    """(key, start, end, canonical) of the one member of ``ENV + ',"t":' + body + '}'``, None if deferred."""
    line = ENV + b',"t":' + body + b"}"
    recs, nxt = L.scan_lines(line + b"\n", 0, len(line) + 1, 10, L.BODY_DIGEST | L.MEMBERS)
    assert nxt == len(line) + 1 and len(recs) == 1
    rec = recs[0]
    if len(rec) == 2:
        return None
    (member,) = rec[11]
    return member


def at(i: int, piece: bytes, length: int = LENGTH) -> bytes:
    """A JSON string of ``length`` bytes of 'a' (quotes excluded) holding ``piece`` at byte ``i``."""
    return b'"' + b"a" * i + piece + b"a" * (length - i - len(piece)) + b'"'


POSITIONS = range(LENGTH - 4)  # every position: block edges at 16, 32, 64, 80, 144 bytes and more

# (piece, valid JSON, canonical: written the way serde_json / orjson write it)
PIECES = [
    (b'\\"', True, 1),
    (b"\\\\", True, 1),
    (b"\\n", True, 1),
    (b"\\u0001", True, 1),
    (b"\\u00e9", True, 0),  # an escape orjson would not write
    (b"\\/", True, 0),
    (b"\x7f", True, 1),  # DEL needs no escape
    ("é".encode(), True, 1),  # 2-byte
    ("€".encode(), True, 1),  # 3-byte
    ("😀".encode(), True, 1),  # 4-byte
    ("éé€😀é".encode(), True, 1),  # a run of non-ASCII characters
    (b"\x01", False, None),  # raw control bytes
    (b"\x1f", False, None),
    (b"\t", False, None),
    (b"\x80", False, None),  # a continuation byte alone
    (b"\xc3a", False, None),  # a lead byte without its continuation
    (b"\xc0\x80", False, None),  # overlong
    (b"\xed\xa0\x80", False, None),  # a UTF-16 surrogate
    (b"\xf5\x80\x80\x80", False, None),  # above U+10FFFF
    (b"\xf0\x9f\x98a", False, None),  # a 4-byte sequence cut short
    (b"\xff", False, None),
    ("é".encode() + b"\x80", False, None),  # an extra continuation byte after a character
    (b"\\x", False, None),  # an escape JSON does not have
    (b"\\u12g4", False, None),
]


@pytest.mark.parametrize(("piece", "valid", "canonical"), PIECES, ids=lambda v: repr(v)[:24])
def test_a_special_byte_at_every_position_around_the_block_edges(
    simd: bool, piece: bytes, valid: bool, canonical: int | None
) -> None:
    for i in POSITIONS:
        body = at(i, piece)
        want = ("t", len(ENV), len(ENV) + 5 + len(body), canonical) if valid else None
        assert member_of(body) == want, (i, piece)
        # the verdict is strict JSON's (orjson: strict UTF-8, RFC 8259)
        try:
            orjson.loads(body)
            ok = True
        except orjson.JSONDecodeError:
            ok = False
        assert ok is valid, (i, piece)


def test_the_closing_quote_at_every_length(simd: bool) -> None:
    # a plain string of n bytes: the member ends right after its closing quote, whatever n is
    for n in range(0, 200):
        body = b'"' + b"b" * n + b'"'
        assert member_of(body) == ("t", len(ENV), len(ENV) + 5 + n + 2, 1), n
    # a string that never ends: deferred, however long the plain run before the line's end
    for n in range(0, 140):
        assert member_of(b'"' + b"b" * n) is None, n


def test_a_character_split_across_every_block_edge(simd: bool) -> None:
    # the k-byte character starts 1 .. k-1 bytes before the 16/32/64/128-byte edges of the string
    for ch in ("é", "€", "😀"):
        raw = ch.encode()
        for edge in (16, 32, 64, 128):
            for back in range(1, len(raw)):
                body = at(edge - back, raw)
                assert member_of(body) == ("t", len(ENV), len(ENV) + 5 + len(body), 1), (ch, edge, back)
                # the same character cut at the edge: invalid
                cut = b'"' + b"a" * (edge - back) + raw[:back] + b"a" * 40 + b'"'
                assert member_of(cut) is None, (ch, edge, back)


# -- the column buffers ---------------------------------------------------------------------------


def _row(offset: int, status: str, **values: object) -> tuple:
    row = dict.fromkeys(sl._ROW_COLUMNS)
    row.update(offset_bytes=offset, line_no=offset + 1, size_bytes=10, chain_status=status, **values)
    return tuple(row[name] for name in sl._ROW_COLUMNS)


def test_entry_cols_buffers_hand_computed() -> None:
    ec = L.EntryCols()
    ec.append_row(_row(0, "unchecked", kind="header", model="m-é", ts="2026-01-01T00:00:01.5Z"))
    ec.append_row(_row(10, "chain_ok", kind="message", is_directive=True, input_tokens=-(2**63)))
    ec.append_row(_row(20, "broken", kind="x" * 300, is_directive=False))
    assert len(ec) == 3 and ec.last_offset() == 20
    ec.truncate(2)  # the third row leaves every column
    assert len(ec) == 2 and ec.last_offset() == 10
    ec.append_row(_row(30, "broken", kind=None, turn_id="t", is_directive=False, input_tokens=2**63 - 1))
    n, cols, ts_other = ec.take()
    assert n == 3 and len(ec) == 0 and len(cols) == 38 and ts_other is False
    by_name = dict(zip((*sl._ROW_COLUMNS, "chain_ok", "ts_at"), cols, strict=True))
    # ts_at: microseconds since 1970-01-01 of the first row's ts, null for the others (no ts)
    at = by_name["ts_at"]
    assert (at[0], at[1][0] & 0b111) == (2, 0b001)
    assert at[2][:8] == ((1767225600 + 1) * 1_000_000 + 500_000).to_bytes(8, "little")
    assert by_name["offset_bytes"] == (0, None, (0).to_bytes(8, "little") + (10).to_bytes(8, "little")
                                       + (30).to_bytes(8, "little"), None)  # fmt: skip
    nulls, valid, offsets, data = by_name["kind"]
    assert (nulls, valid[0] & 0b111, data) == (1, 0b011, b"headermessage")
    assert [int.from_bytes(offsets[i : i + 4], "little") for i in range(0, 16, 4)] == [0, 6, 13, 13]
    assert by_name["model"][3] == "m-é".encode()
    # bools: validity and value bitmaps (row 0 null; True; False)
    assert (by_name["is_directive"][0], by_name["is_directive"][1][0] & 0b111, by_name["is_directive"][2][0] & 0b111) == (
        1, 0b110, 0b010,
    )  # fmt: skip
    # chain_ok follows chain_status: null for unchecked, True for chain_ok, False for broken
    assert (by_name["chain_ok"][1][0] & 0b111, by_name["chain_ok"][2][0] & 0b111) == (0b110, 0b010)
    tokens = by_name["input_tokens"]
    assert tokens[0] == 1 and tokens[2][8:] == (-(2**63)).to_bytes(8, "little", signed=True) + (
        2**63 - 1
    ).to_bytes(8, "little", signed=True)
    # emptied, the buffers start again at row 0
    ec.append_row(_row(40, "unchained", ts="2026-01-01T00:00:00+00:00"))  # not vak's form
    n, cols, ts_other = ec.take()
    assert n == 1 and cols[0][2] == (40).to_bytes(8, "little") and cols[-2][0] == 1 and ts_other is True


def test_entry_cols_refuse_values_of_the_wrong_type() -> None:
    ec = L.EntryCols()
    index = {name: i for i, name in enumerate(sl._ROW_COLUMNS)}
    for name, value in (("offset_bytes", "1"), ("kind", 3), ("is_directive", 1), ("input_tokens", 2**63)):
        row = list(_row(0, "blank"))
        row[index[name]] = value
        with pytest.raises((TypeError, OverflowError)):
            ec.append_row(tuple(row))
    with pytest.raises(ValueError):
        ec.append_row((1, 2, 3))
    assert len(ec) == 0


# -- the batches: compiled scanner + reference reader into one buffer, against Python lists ------


def _scan_all(home: Path, files: list[Path], *, compiled: bool, batch_rows: int) -> tuple:
    saved = sl._EntryCols
    if not compiled:  # the reference rows, in Python lists
        sl._EntryCols = None
    try:
        buf = sl.EntriesBuffer()
        batches: list[pa.RecordBatch] = []
        fields = []
        found: list = []
        for p in files:
            sc = sl.LedgerScanner(
                str(p.relative_to(home)), emit=found.append, buffer=buf, batch_rows=batch_rows
            )
            with p.open("rb") as f:
                batches += sc.scan(f, os.fstat(f.fileno()).st_size, native=None if compiled else False)
            fields.append((sc.fields_table(), sc.state.to_dict()))
        if len(buf):
            batches.append(buf.take())
    finally:
        sl._EntryCols = saved
    assert all(b.schema.equals(sl.ENTRIES_SCHEMA) for b in batches)
    return (
        [b.num_rows for b in batches],
        pa.Table.from_batches(batches, schema=sl.ENTRIES_SCHEMA),
        fields,
        found,
    )


def _assert_same(home: Path, files: list[Path], batch_rows: int) -> pa.Table:
    sizes1, t1, f1, x1 = _scan_all(home, files, compiled=True, batch_rows=batch_rows)
    sizes2, t2, f2, x2 = _scan_all(home, files, compiled=False, batch_rows=batch_rows)
    assert sizes1 == sizes2  # the same rows in the same batches
    assert t1.equals(t2)
    assert all(a.equals(b) and s == z for (a, s), (b, z) in zip(f1, f2, strict=True))
    assert x1 == x2
    return t1


@pytest.mark.parametrize("batch_rows", [4096, 5])
def test_every_ledger_of_a_synthetic_home_in_one_shared_buffer(tmp_path: Path, batch_rows: int) -> None:
    from vakaudit.synth.home import build_home

    home = tmp_path / "home"
    build_home(home, profile="tiny", layout="g2", fsync=False, seed=11)
    files = sorted(p for p in home.rglob("*.jsonl") if "sessions" in p.parts and p.is_file())
    assert files
    table = _assert_same(home, files, batch_rows)
    assert table.num_rows == sum(p.read_bytes().count(b"\n") for p in files)


def test_reference_rows_between_compiled_runs_keep_file_order(tmp_path: Path) -> None:
    # compiled runs broken by lines only the reference reads (CRLF, invalid UTF-8, spaces, a work
    # entry, a blank line, an unknown kind) and a torn last line, in a buffer shared with a second file
    from vakaudit.ledger import SessionLog

    path = tmp_path / "agents/vak/sessions/ws/s1.jsonl"
    path.parent.mkdir(parents=True)
    with SessionLog.create(
        path, {"session_id": "s1", "contract": {"model": "m", "system_prompt": "p" * 90}}
    ) as log:
        for i in range(12):
            text = "x" * (60 + i) + "é" * i + '"\\' * (i % 3)
            log.append_message(
                {"role": "user", "content": [{"type": "text", "text": text}]},
                {
                    "model": "m\\u00e9" if i % 2 else "mé",
                    "usage": {"input_tokens": i, "output_tokens": 2**40},
                },
            )
            log.append("activity", {"activity_kind": "tool", "label": "l" * (i * 11) + "\n€"})
            if i == 5:
                log.append("work", {"kind": "tool_call", "x": 1})
    lines = path.read_bytes().split(b"\n")
    # line 0 is the header, then message and activity lines alternate
    lines[3] = lines[3] + b"\r"  # a message
    lines[4] = lines[4].replace(b'"activity_kind"', b' "activity_kind"')
    lines[7] = lines[7][:-1] + b',"bad":"\xff"}'
    lines[10] = lines[10].replace(b'"kind":"activity"', b'"kind":"made_up"')
    assert b"made_up" in lines[10] and b" " in lines[4]
    lines.insert(9, b"")
    path.write_bytes(b"\n".join(lines[:-1]) + b"\n" + lines[-2][:40])
    other = tmp_path / "agents/vak/sessions/ws/s2.jsonl"
    other.write_bytes(b"\n".join(lines[:6]) + b"\n")
    for batch_rows in (3, 4096):
        table = _assert_same(tmp_path, [path, other, path], batch_rows)
        assert table.column("line_no").to_pylist()[:3] == [1, 2, 3]
        # hand-computed: the decoded model of the second message, with its escape
        kinds = table.column("kind").to_pylist()
        models = [m for m, k in zip(table.column("model").to_pylist(), kinds, strict=True) if k == "message"]
        assert models[:2] == ["mé", "m\\u00e9"]  # the value is the literal text "m\u00e9" (escaped backslash)


@pytest.mark.parametrize("shani", [True, False], ids=["sha-extensions", "openssl"])
def test_line_and_body_digests_at_every_length_around_the_block_edges(tmp_path: Path, shani: bool) -> None:
    # both digests of a row, computed together: lines of 150 .. 420 bytes cross every padding case
    # (tail < 56 or >= 56 bytes, exact blocks) for the line and for its body, a suffix of it
    path = tmp_path / "agents/vak/sessions/ws/d.jsonl"
    path.parent.mkdir(parents=True)
    lines = []
    prev = None
    for i in range(270):
        env = b'{"id":"e%d","parent_id":null,"ts":"2026-01-01T00:00:00Z",' % i
        if prev is not None:
            env += b'"prev_hash":"' + prev.encode() + b'",'
        head = env + b'"kind":"activity"'
        body = b',"activity_kind":"k","label":"' + b"x" * max(0, 150 + i - len(head) - 32) + b'"}'
        line = head + body
        lines.append(line)
        prev = hashlib.sha256(line).hexdigest()
    path.write_bytes(b"\n".join(lines) + b"\n")
    lengths = {len(line) for line in lines}
    assert {n % 64 for n in lengths} == set(range(64))
    try:
        assert L.set_shani(shani) is (shani and _cpu_has("sha_ni"))
        _, table, _, found = _scan_all(tmp_path, [path], compiled=True, batch_rows=4096)
    finally:
        L.set_shani(True)
    assert found == []  # every prev_hash is the digest of the line before
    assert table.column("line_sha256").to_pylist() == [hashlib.sha256(x).hexdigest() for x in lines]
    cut = len(b'"kind":"activity"')
    bodies = [x[x.index(b'"kind":"activity"') + cut :] for x in lines]
    assert table.column("body_sha256").to_pylist() == [hashlib.sha256(b).hexdigest() for b in bodies]
    assert set(table.column("chain_status").to_pylist()) == {"unchecked", "chain_ok"}


def test_the_cpu_specific_paths_are_on_at_import_when_the_cpu_has_them() -> None:
    import subprocess
    import sys

    code = "from vakaudit._native import linescan as L; print(L.simd_paths())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    want = {"avx2": _cpu_has("avx2") and _cpu_has("bmi1"), "sha": _cpu_has("sha_ni") and _cpu_has("sse4_1")}
    assert out.strip() == str(want)


def _chained(payloads: list[bytes]) -> bytes:
    """Ledger lines in vak's envelope form around the raw payload members, each chained to the previous."""
    out = []
    prev = None
    for i, members in enumerate(payloads):
        env = b'{"id":"e%d","parent_id":null,"ts":"2026-01-01T00:00:0%dZ",' % (i, i % 10)
        if prev is not None:
            env += b'"prev_hash":"' + prev.encode() + b'",'
        line = env + members
        out.append(line)
        prev = hashlib.sha256(line).hexdigest()
    return b"\n".join(out) + b"\n"


MESSAGE_PAYLOADS = [
    # the first message line is a directive: user text, no control, no tool result
    b'"kind":"message","message":{"role":"user","content":[{"type":"text","text":"hi \\"x\\" [{"}]},"meta":{}}',
    # duplicate keys: the last one counts (role, model, usage's input_tokens, a block's type)
    b'"kind":"message","message":{"role":"user","content":[{"type":"text","type":"tool_use"}],"role":"assistant"},'
    b'"meta":{"model":"a","usage":{"input_tokens":1,"input_tokens":7,"output_tokens":-3},"model":"b\\u00e9"}}',
    # tool results: string content with escapes and non-ASCII (decoded UTF-8 bytes), null, absent
    b'"kind":"message","message":{"role":"user","content":["s",1,[{"type":"tool_use"}],null,'
    b'{"type":"tool_result","content":"a\\nb\\u00e9\\u20acc\xc3\xa9"},{"type":"tool_result","content":null},'
    b'{"content":"x","type":"tool_result"},{"type":"tool_result"},{"type":"tool_use","input":{"a":[1,{"b":"}"}]}}]},'
    b'"meta":{"stop_reason":"end_turn","usage":{"cache_read_input_tokens":5,"cache_creation_input_tokens":1.5}}}',
    # a control message is no directive; a block type written with an escape is read by the reference
    b'"kind":"message","message":{"role":"user","content":[{"type":"text"}]},"meta":{"control":"compaction"}}',
    b'"kind":"message","message":{"role":"user","content":[{"type":"te\\u0078t"}]},"meta":{}}',
    # keys written with an escape or a non-ASCII byte, where the columns are read: the reference reads them
    b'"kind":"message","message":{"\\u0072ole":"user","content":[]},"meta":{}}',
    b'"kind":"message","message":{"role":"user","content":[]},"meta":{"us\\u0061ge":{"input_tokens":3}}}',
    b'"kind":"message","message":{"role":"user","content":[]},"meta":{"usage":{"inp\xc3\xa9":3}}}',
    b'"kind":"message","message":{"role":"user","content":[{"t\\u0079pe":"text"}]},"meta":{}}',
    b'"kind":"message","message":{"role":"us\\u0065r","content":[{"type":"text"}]},"meta":{}}',
    b'"kind":"header","session_id":"s","contract":{"provider":"p","m\\u006fdel":"m","system_prompt":"x"}}',
    b'"kind":"header","session_id":"s","contract":{"app_version":"3.5.0","model":"m","system_prompt":"a\\"b\xc3\xa9"}}',
    b'"kind":"receipt","purpose":"turn","attempts":[{"a":[1,2]},"x",3,[],{}],"prefix_digest":"","model":"m"}',
    b'"kind":"receipt","attempts":[]}',
]


def test_members_read_in_one_pass_give_the_reference_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "agents/vak/sessions/ws/m.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(_chained(MESSAGE_PAYLOADS))
    by_reference: list[int] = []
    row = sl.LedgerScanner._row

    def spy(self: sl.LedgerScanner, rec: object) -> None:
        by_reference.append(rec.line_no)
        row(self, rec)

    with monkeypatch.context() as m:
        m.setattr(sl.LedgerScanner, "_row", spy)
        _scan_all(tmp_path, [path], compiled=True, batch_rows=4096)
    # the compiled scanner takes every line but those with an escaped or non-ASCII key (or type) it reads
    assert by_reference == [5, 6, 7, 8, 9, 11]
    table = _assert_same(tmp_path, [path], 4096)
    col = {name: table.column(name).to_pylist() for name in table.column_names}
    assert col["line_sha256"][:1] == [hashlib.sha256(path.read_bytes().split(b"\n")[0]).hexdigest()]
    # hand-computed
    assert col["is_directive"][:5] == [True, False, False, False, True]
    assert (col["role"][1], col["model"][1], col["input_tokens"][1], col["output_tokens"][1]) == (
        "assistant", "bé", 7, -3,
    )  # fmt: skip
    assert (col["tool_use_count"][1], col["tool_use_count"][2], col["tool_result_count"][2]) == (1, 1, 4)
    assert col["tool_result_bytes"][2] == len("a\nbé€cé".encode()) + 1
    assert (col["cache_read_input_tokens"][2], col["cache_creation_input_tokens"][2]) == (5, None)
    assert col["stop_reason"][2] == "end_turn" and col["control"][3] == "compaction"
    assert col["role"][5] == "user" and col["input_tokens"][6] == 3 and col["is_directive"][9] is True
    assert (col["model"][10], col["provider"][10]) == ("m", "p")
    assert col["app_version"][11] == "3.5.0"
    assert col["system_prompt_bytes"][11] == len(b'"a\\"b\xc3\xa9"')
    assert (col["attempt_count"][12], col["prefix_digest"][12], col["attempt_count"][13]) == (5, None, 0)


def _ts_values(rnd: random.Random) -> list[str]:
    out = []
    for _ in range(3000):
        y = rnd.choice(
            [1, 4, 100, 400, 1600, 1899, 1969, 1970, 2000, 2024, 2026, 2100, 9999, rnd.randrange(1, 10000)]
        )
        mo, d = rnd.randrange(1, 13), rnd.choice([1, 28, 29, 30, 31, rnd.randrange(1, 32)])
        h, mi, se = (
            rnd.choice([0, 23, rnd.randrange(24)]),
            rnd.randrange(60),
            rnd.choice([0, 59, rnd.randrange(60)]),
        )
        frac = "".join(
            rnd.choice("0123456789") for _ in range(rnd.choice([0, 1, 3, 6, 7, 9, rnd.randrange(10)]))
        )
        out.append(f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{se:02d}" + (f".{frac}" if frac else "") + "Z")
    return out


# strings that are not a real instant in vak's form: the batch's ts_at then comes from ts as before
OTHER_TS = [
    "0000-01-01T00:00:00Z", "2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z",
    "2026-00-01T00:00:00Z", "2026-01-00T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T23:60:00Z",
    "2026-01-01T23:59:60Z", "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00.1234567890Z",
    "2026-01-01T00:00:00", "2026-01-01T00:00:00+02:00", "2026-01-01 00:00:00Z", "garbage", "",
]  # fmt: skip


def _real_day(ts: str) -> bool:
    try:
        datetime(int(ts[:4]), int(ts[5:7]), int(ts[8:10]))
    except ValueError:
        return False
    return True


def test_ts_at_from_the_buffers_equals_the_arrow_cast_of_ts() -> None:
    rnd = random.Random(7)
    values = _ts_values(rnd)
    # hand-computed: microseconds since the epoch by the calendar (datetime), digits past 6 cut
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    for ts in values[:400]:
        y, mo, d, h, mi, se = (
            int(ts[i : i + n]) for i, n in ((0, 4), (5, 2), (8, 2), (11, 2), (14, 2), (17, 2))
        )
        ec = L.EntryCols()
        ec.append_row(_row(0, "blank", ts=ts))
        _, cols, ts_other = ec.take()
        try:
            dt = datetime(y, mo, d, h, mi, se, tzinfo=UTC)
        except ValueError:  # no such day
            assert ts_other is True, ts
            continue
        frac = ts[20:-1] if ts[19] == "." else ""
        want = (dt - epoch) // timedelta(microseconds=1) + int((frac + "000000")[:6])
        assert ts_other is False and cols[-1][2] == want.to_bytes(8, "little", signed=True), ts
    real = [ts for ts in values if _real_day(ts)]
    assert len(real) > 2000
    for chunk in range(0, len(real), 500):
        batch = real[chunk : chunk + 500]
        ec = L.EntryCols()
        buf = sl.EntriesBuffer()
        for i, ts in enumerate(batch):
            ec.append_row(_row(i, "blank", ts=ts))
            buf.add(_row(i, "blank", ts=ts))
        assert ec.take()[2] is False  # the batch's ts_at comes from the buffers, not from the cast
        buf.mark(("agents/vak/sessions/ws/s.jsonl", "s", "vak", "ws"))
        got = buf.take().column("ts_at")
        assert got.equals(timestamps(pa.array(batch, pa.string())))
    for ts in OTHER_TS:
        ec = L.EntryCols()
        ec.append_row(_row(0, "blank", ts=ts))
        assert ec.take()[2] is True, ts
        buf = sl.EntriesBuffer()
        buf.add(_row(0, "blank", ts="2026-01-01T00:00:00Z"))
        buf.add(_row(1, "blank", ts=ts))
        buf.mark(("agents/vak/sessions/ws/s.jsonl", "s", "vak", "ws"))
        with_other = ["2026-01-01T00:00:00Z", ts]
        assert buf.take().column("ts_at").equals(timestamps(pa.array(with_other, pa.string())))
