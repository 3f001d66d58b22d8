"""``read_run``, the compiled kernel behind the ledger reader, against expectations independent of it.

Nothing here compares the kernel with its own output. The lines it takes are compared with the
records the reference path (``LedgerReader(native=False)``, through ``LedgerScanner``) reads from the
same bytes; its flags with flags worked out here from each line's envelope (and with the reference
path's chain verdicts when it starts from the reference path's state); its ``at_turn`` with
``parse_envelope``; its digests with hashlib (SHA extensions and OpenSSL); the ``entries`` rows,
``entry_fields`` counts and turn state it writes with those ``LedgerScanner`` builds on the reference
path for the same lines. ``tests/native/test_native_parity.py`` compares whole files read both ways
through the reader; this file holds the kernel's own contract: calls from any line with any
expectation, timestamp key, ``max_lines``, ``base`` and line number, which lines a run takes and
where it stops (the 64/65 members and 128/129 levels edges, lines left to Python), hand-worked flags,
arguments, errors and memory.

The buffers are the ledgers vak itself wrote (shared/vak-samples), the committed sample home's
ledgers, and mutated copies of them (a byte flipped, a line dropped, two lines swapped, an unknown
kind, a work line, a line of 64 and of 65 members, lines nested 128 and 129 levels deep, a line not in
vak's compact form, invalid UTF-8, a raw control byte, an envelope key in the payload, a CRLF line, a
byte order mark, lines carrying at_turn), each inserted line once vouched for by the next line's
prev_hash and once not.
"""

from __future__ import annotations

import copy
import functools
import gc
import hashlib
import io
import json
import random
import re
import tracemalloc
from pathlib import Path

import pyarrow as pa
import pytest

import vakaudit._native as native
import vakaudit.artifacts.session_ledger as sl
from vakaudit.ledger.chain import LineStatus
from vakaudit.ledger.entry import ENVELOPE_KEYS, KNOWN_KINDS, EntryParseError, parse_envelope
from vakaudit.ledger.records import LedgerReader, Record, ts_key
from vakaudit.ledger.vocab import KERNEL_VOCAB

L = native.linescan
pytestmark = pytest.mark.skipif(L is None, reason="the compiled extension is not built")

ROOT = Path(__file__).resolve().parents[2]
LEDGERS = sorted((ROOT / "sample_homes" / "tiny").glob("**/sessions/*/*.jsonl")) + sorted(
    (ROOT.parent / "shared" / "vak-samples").glob("*/*.jsonl")
)
LONG = 2000  # flags V_LONG on some of the sample lines
BROKEN, UNCHAINED, TS_BACK, LONG_BIT, PARENT = 1, 2, 4, 8, 16
REL = "agents/vak/sessions/ws/s1.jsonl"
FACTS = (REL, *sl.path_facts(REL))  # the file facts LedgerScanner marks its rows with
PREV_HASH = re.compile(rb',"prev_hash":"([0-9a-f]{64})"')
# a line's at_turn from the envelope's own bytes (lines parse_envelope reads differently: see at_turn_of)
ENVELOPE_AT_TURN = re.compile(
    rb'^\{"id":"[^"\\]*","parent_id":(?:null|"[^"\\]*"),"ts":"[^"\\]*"(?:,"prev_hash":"[^"\\]*")?'
    rb'(?:,"at_turn":"([^"\\]*)")?,"kind":"'
)
S = LineStatus


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def join(lines: list[bytes]) -> bytes:
    return b"".join(x + b"\n" for x in lines)


# -- the buffers ----------------------------------------------------------------------------------


def rechain(lines: list[bytes]) -> list[bytes]:
    """Every line's prev_hash (where it has one) set to the digest of the line before it."""
    out: list[bytes] = []
    for i, line in enumerate(lines):
        if i and PREV_HASH.search(line):
            line = PREV_HASH.sub(lambda m: b',"prev_hash":"' + sha(out[-1]).encode() + b'"', line, count=1)
        out.append(line)
    return out


def entry(kind: str, payload: bytes, ident: str = "zz-1", at_turn: str | None = None) -> bytes:
    """An entry line in vak's envelope (prev_hash filled by rechain), payload after the kind."""
    env = b'{"id":"%s","parent_id":null,"ts":"2026-01-01T00:00:00.5Z","prev_hash":"%s"' % (
        ident.encode(),
        b"0" * 64,
    )
    if at_turn is not None:
        env += b',"at_turn":"%s"' % at_turn.encode()
    return env + b',"kind":"%s"' % kind.encode() + payload + b"}"


def nested(levels: int) -> bytes:
    """A payload member whose value nests ``levels`` arrays (the line nests levels + 1)."""
    return b',"deep":' + b"[" * levels + b"1" + b"]" * levels


def with_at_turn(line: bytes, at: str) -> bytes:
    return line.replace(b',"kind":"', b',"at_turn":"%s","kind":"' % at.encode(), 1)


# name: (line, taken without rows when the next line vouches for it, ... when it does not, taken with
# rows (vouched for or not)). Without rows a line the next line's prev_hash vouches for needs only
# vak's envelope and at most 128 levels; any other line must be strict JSON in vak's compact form, at
# most 64 members, no envelope key among them. With rows a line is taken only in that compact form,
# of a known kind other than work.
INSERTS: dict[str, tuple[bytes, bool, bool, bool]] = {
    "unknown kind": (entry("zz_unknown_kind", b',"a":1'), True, True, False),
    "work line": (entry("work", b',"task":"x"'), True, True, False),
    "65 members": (entry("activity", b"".join(b',"m%d":%d' % (i, i) for i in range(65))), True, False, False),
    "64 members": (entry("activity", b"".join(b',"m%d":%d' % (i, i) for i in range(64))), True, True, True),
    "nested 128 levels": (entry("activity", nested(127)), True, True, True),
    "nested 129 levels": (entry("activity", nested(128)), False, False, False),
    "not compact": (entry("activity", b', "a": 1'), True, False, False),  # whitespace
    "invalid utf-8": (entry("activity", b',"label":"a\xffb"'), True, False, False),
    "raw control byte": (entry("activity", b',"label":"a\x01b"'), True, False, False),
    "envelope key in payload": (entry("activity", b',"at_turn":"t9"'), True, False, False),
    "at_turn of its own": (entry("activity", b',"label":"x"', at_turn="turn-7"), True, True, True),
}


class Buffer:
    """A buffer and what is known of its lines by hand: ``take[i]`` whether the kernel without rows
    must take line i (True) or leave it (False; absent: not known here), ``rows[i]`` the same with
    rows."""

    def __init__(self, name: str, data: bytes, take: dict[int, bool], rows: dict[int, bool]) -> None:
        self.name, self.data, self.take, self.rows = name, data, take, rows


def mutations(path: Path, seed: int) -> list[Buffer]:
    data = path.read_bytes()
    rnd = random.Random(seed)
    lines = data.split(b"\n")[:-1]
    every = dict.fromkeys(range(len(lines) + 1), True)  # vak's lines: each vouched for or compact

    def but(extra: int, known: dict[int, bool | None]) -> dict[int, bool]:
        return {
            i: v
            for i, v in {**dict.fromkeys(range(len(lines) + extra), True), **known}.items()
            if v is not None
        }

    out = [Buffer("as is", data, every, {})]
    for _ in range(3):
        i = rnd.randrange(len(data))
        flipped = data[i] ^ (1 << rnd.randrange(8))
        if flipped != 10 and data[i] != 10:
            out.append(Buffer(f"byte {i} flipped", data[:i] + bytes([flipped]) + data[i + 1 :], {}, {}))
    mid = len(lines) // 2
    if len(lines) > 3:
        # the line before a change is vouched for no more: not known whether it is compact
        out.append(Buffer("line dropped", join(lines[:mid] + lines[mid + 1 :]), but(-1, {mid - 1: None}), {}))
        sw = list(lines)
        sw[mid], sw[mid + 1] = sw[mid + 1], sw[mid]
        out.append(Buffer("lines swapped", join(sw), but(0, {mid - 1: None, mid: None, mid + 1: None}), {}))
    for name, (line, attested, alone, rows) in INSERTS.items():
        out.append(Buffer(name + ", attested", join(rechain(lines[:mid] + [line] + lines[mid:])),
                          but(1, {mid: attested}), {mid: rows}))  # fmt: skip
        out.append(Buffer(name + ", unattested", join(lines[:mid] + [line] + lines[mid:]),
                          but(1, {mid - 1: None, mid: alone}), {mid: rows}))  # fmt: skip
    crlf = list(lines)
    crlf[mid] += b"\r"
    out.append(Buffer("crlf line", join(crlf), but(0, {mid - 1: None, mid: False}), {mid: False}))
    out.append(Buffer("byte order mark", b"\xef\xbb\xbf" + data, but(0, {0: False}), {0: False}))
    # at_turn in the envelope (G4) of two lines in three from the third on, the chain kept whole
    at = [with_at_turn(x, f"turn-{i // 5}") if i > 1 and i % 3 else x for i, x in enumerate(lines)]
    out.append(Buffer("at_turn lines", join(rechain(at)), every, {}))
    return out


BUFFERS = {
    f"{path.parent.name}/{path.name}: {b.name}": b
    for seed, path in enumerate(LEDGERS)
    for b in mutations(path, seed)
}
IDS = list(BUFFERS)


def test_there_are_ledgers() -> None:
    assert len(LEDGERS) >= 6  # the committed sample home's ledgers (vak's own samples when present)
    assert any(b'"at_turn"' in b.data for b in BUFFERS.values())


# -- the reference path's reading -----------------------------------------------------------------


class Reference:
    """A buffer as the reference path reads it (LedgerScanner over LedgerReader(native=False)): per
    line its record, and the state before it (chain expectation, timestamp key, turn state,
    entry_fields counts); the entries rows of every line."""

    def __init__(self, data: bytes) -> None:
        buffer = sl.EntriesBuffer()
        scanner = sl.LedgerScanner(REL, buffer=buffer, batch_rows=1 << 30)
        reader = scanner.reader(io.BytesIO(data).read, len(data), native=False)
        self.recs: list[Record] = []
        self.key_before: list[bytes | None] = [None]
        self.turns_before: list[list] = [list(reader.turns)]
        self.fields_before: list[dict] = [{}]
        key = None
        for rec in reader:
            assert type(rec) is Record
            scanner.take(rec)
            self.recs.append(rec)
            k = ts_key(rec.envelope[2]) if rec.envelope is not None else None
            if k is not None:
                key = k.encode()
            self.key_before.append(key)
            self.turns_before.append(list(reader.turns))
            self.fields_before.append(copy.deepcopy(scanner.fields))
        list(scanner.finish())
        self.rows = buffer.take()
        assert self.rows.num_rows == len(self.recs)
        self.expected_before = [r.expected for r in self.recs] + [reader.chain.expected]
        self.starts = [r.offset_bytes for r in self.recs]
        self.bounds = [*self.starts, len(data)]

    def fields_of(self, i: int, n: int) -> dict:
        """The entry_fields counts of lines i .. i + n - 1."""
        before, after = self.fields_before[i], self.fields_before[i + n]
        out = {}
        for k, (count, size) in after.items():
            c0, s0 = before.get(k, (0, 0))
            if count != c0:
                out[k] = [count - c0, size - s0]
        return out


@functools.cache
def reference(name: str) -> Reference:
    return Reference(BUFFERS[name].data)


# -- independent readings -------------------------------------------------------------------------


def at_turn_of(line: bytes) -> str | None:
    """The envelope's at_turn: the 5th envelope element of vakaudit's reference parser.

    Two kinds of line the kernel takes only because the next line's prev_hash vouches for them
    are read from the envelope's own bytes instead, as the reference path reads such a line
    (entry.WRITTEN_ENVELOPE): bytes parse_envelope refuses (invalid UTF-8, a raw control byte), and
    a payload holding an envelope key, where parse_envelope (a decoded dict) takes the payload's value.
    """
    try:
        keys = [k for k, _ in json.loads(line, object_pairs_hook=lambda p: p)]
        if not set(keys[keys.index("kind") + 1 :]) & {*ENVELOPE_KEYS, "kind"}:
            return parse_envelope(line)[0][4]
    except (ValueError, EntryParseError):
        pass
    m = ENVELOPE_AT_TURN.match(line)
    assert m is not None
    return None if m.group(1) is None else m.group(1).decode()


def hand_flags(
    lines: list[bytes], envs: list[tuple], expected: str | None, key: bytes | None
) -> tuple[list[tuple], str | None, bytes | None]:
    """The flagged list of a run, worked out from each line's envelope ``(id, parent_id, ts,
    prev_hash, at_turn, kind)`` as read_run's docstring states the flags, and the expectation and
    timestamp key after it."""
    flagged = []
    prev_id = None
    for i, (raw, (ident, parent, ts, prev, _at, _kind)) in enumerate(zip(lines, envs, strict=True)):
        bits = 0
        if expected is not None:
            bits |= UNCHAINED if prev is None else BROKEN if prev != expected else 0
        expected = sha(raw)
        k = ts_key(ts).encode()
        if key is not None and k < key:
            bits |= TS_BACK
        key = k
        if len(raw) > LONG:
            bits |= LONG_BIT
        if parent is not None and (parent != prev_id or parent == ident):
            bits |= PARENT
        prev_id = ident
        if bits:
            flagged.append((i, bits, prev))
    return flagged, expected, key


def check_run(
    name: str, r: tuple, i0: int, max_lines: int, expected: str | None, key: bytes | None, shift: int = 0,
    rows: bool = False,
) -> int:  # fmt: skip
    """read_run's result ``r`` for a call from line ``i0`` of buffer ``name`` (given from byte
    ``shift`` on) against the reference path's records of the lines it took, the hand-worked flags,
    at_turn and hashlib; the lines taken or left against what is known of them. Returns how many
    lines the run took."""
    ref, buf = reference(name), BUFFERS[name]
    n = len(r[1])
    assert len(r) == 11 and 0 <= n <= max_lines
    assert [s + shift for s in r[1]] == ref.starts[i0 : i0 + n]
    assert r[0] + shift == ref.bounds[i0 + n]
    recs = ref.recs[i0 : i0 + n]
    for rec in recs:  # an entry of the reference path, in vak's own form
        assert rec.envelope is not None and rec.defect is None and not rec.crlf and not rec.bom, rec
    lines = [bytes(rec.raw) for rec in recs]
    envs = [rec.envelope for rec in recs]
    assert r[2] == [e[0] for e in envs]
    assert r[3] == [e[1] for e in envs]
    assert r[4] == [e[5] for e in envs]
    assert r[5] == [e[2] for e in envs]
    assert r[6] == [sha(x) for x in lines] == [rec.digest for rec in recs]
    flagged, expected_out, key_out = hand_flags(lines, envs, expected, key)
    assert r[7] == flagged
    assert (r[8], r[9]) == ((expected_out, key_out) if n else (expected, key))
    assert r[10] == [(j, a) for j, x in enumerate(lines) if (a := at_turn_of(x)) is not None]
    if (expected, key) == (ref.expected_before[i0], ref.key_before[i0]):
        # from the reference path's own state: its chain and timestamp verdicts, and its state after
        bits = dict((j, b) for j, b, _p in r[7])
        for j, rec in enumerate(recs):
            b = bits.get(j, 0)
            assert rec.chain is (S.BROKEN if b & BROKEN else S.UNCHAINED if b & UNCHAINED else
                                 S.UNCHECKED if j == 0 and expected is None else S.CHAIN_OK)  # fmt: skip
            assert (rec.ts_back is not None) == bool(b & TS_BACK)
        if n:
            assert (r[8], r[9]) == (ref.expected_before[i0 + n], ref.key_before[i0 + n])
    known = buf.rows if rows else buf.take
    for j in range(i0, i0 + n):
        assert known.get(j) is not False, f"line {j} taken"
        if rows:
            assert envs[j - i0][5] in KNOWN_KINDS and envs[j - i0][5] != "work"
    if n < max_lines and i0 + n < len(ref.recs):
        assert known.get(i0 + n) is not True, f"line {i0 + n} left"
    return n


# -- without rows ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", IDS)
def test_without_rows_from_any_line(name: str) -> None:
    buf, ref = BUFFERS[name].data, reference(name)
    rnd = random.Random(len(buf))
    picks = sorted(set(rnd.sample(range(len(ref.starts)), min(12, len(ref.starts))) + [0]))
    for i0 in picks:
        pos = ref.starts[i0]
        # the reference path's state before the line, none, a digest no line carries, a short one
        for expected, key in (
            (ref.expected_before[i0], ref.key_before[i0]),
            (None, None),
            ("0" * 64, None),
            ("ab", b"2026-01-01T00:00:00.500000000"),
        ):
            for max_lines in (1, 4, 1 << 30):
                r = L.read_run(buf, pos, len(buf), max_lines, expected, key, LONG)
                check_run(name, r, i0, max_lines, expected, key)


@pytest.mark.parametrize("name", IDS)
def test_without_rows_over_the_whole_buffer_in_runs(name: str) -> None:
    # runs of at most 7 lines, each carrying the last one's expectation and timestamp key on (which
    # check_run holds to the reference path's); a line a run stops at is the reference path's to
    # read, and the next run starts from the reference path's state after it
    buf, ref = BUFFERS[name].data, reference(name)
    i, expected, key, taken = 0, None, None, 0
    while i < len(ref.recs):
        r = L.read_run(buf, ref.starts[i], len(buf), 7, expected, key, LONG)
        n = check_run(name, r, i, 7, expected, key)
        taken += n
        if n:
            i, expected, key = i + n, r[8], r[9]
            continue
        i += 1
        expected, key = ref.expected_before[i], ref.key_before[i]
    if BUFFERS[name].take == dict.fromkeys(range(len(ref.recs) + 1), True):
        assert taken == len(ref.recs)


def test_at_turn_is_the_envelopes_own() -> None:
    # a payload member named at_turn on a line the next line's prev_hash vouches for: the kernel
    # takes the line on its envelope (its id, kind, prev_hash are the envelope's), and at_turns
    # reports the envelope's at_turn, none here, where parse_envelope would give the payload's
    lines = rechain(
        [
            entry("activity", b',"label":"a"', "a1", at_turn="t1"),
            entry("activity", b',"at_turn":"t9"', "a2"),
            entry("activity", b',"label":"c"', "a3"),
        ]
    )
    buf = join(lines)
    assert parse_envelope(lines[1])[0][4] == "t9"
    r = L.read_run(buf, 0, len(buf), 10, None, None, LONG)
    assert r[0] == len(buf) and r[10] == [(0, "t1")]
    # with rows the line is not taken (an envelope key among the members): the reference path reads it
    rows = (L.EntryCols(), {}, [0, None, False], 0, 0, KNOWN_KINDS, KERNEL_VOCAB)
    r = L.read_run(buf, 0, len(buf), 10, None, None, LONG, rows)
    assert r[0] == len(lines[0]) + 1 and r[10] == [(0, "t1")]


# -- with rows ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", IDS)
def test_with_rows_the_reference_paths_rows_fields_and_turns(name: str) -> None:
    # from the third line on, the buffer handed over from there (base: its file offset, line_no 2):
    # runs of at most 5 lines carrying the expectation, timestamp key and turn state on; at a stop
    # the reference path reads the line and the next run starts from its state after it
    data, ref = BUFFERS[name].data, reference(name)
    first = min(2, len(ref.starts) - 1)
    cut = ref.starts[first]
    view = data[cut:]
    cols = L.EntryCols()  # one for the whole walk, emptied by each take
    i, expected, key = first, ref.expected_before[first], ref.key_before[first]
    turn_state = list(ref.turns_before[first])  # read_run updates it in place
    taken = 0
    while i < len(ref.recs):
        fields: dict = {}
        before = list(turn_state)
        r = L.read_run(view, ref.starts[i] - cut, len(view), 5, expected, key, LONG,
                       (cols, fields, turn_state, cut, i, KNOWN_KINDS, KERNEL_VOCAB))  # fmt: skip
        n = check_run(name, r, i, 5, expected, key, shift=cut, rows=True)
        if n:
            buffer = sl.EntriesBuffer()
            buffer.native = cols
            buffer.mark(FACTS)
            assert buffer.take().to_pydict() == ref.rows.slice(i, n).to_pydict()
            assert fields == ref.fields_of(i, n)
            assert turn_state == ref.turns_before[i + n]
            taken += n
            i, expected, key = i + n, r[8], r[9]
            continue
        # nothing of the line recorded
        assert len(cols) == 0 and fields == {} and turn_state == before
        i += 1
        expected, key, turn_state = ref.expected_before[i], ref.key_before[i], list(ref.turns_before[i])
    assert taken > 0 or len(ref.recs) < 3


def test_a_stop_records_nothing_of_the_line() -> None:
    # a known line, then one the kernel leaves to the reference reader with rows (a work line): the
    # run ends before it, and neither the lists nor the rows, fields or turn state hold any of it
    lines = rechain([entry("activity", b',"label":"a"', "a1"), entry("work", b',"x":1', "w1")])
    buf = join(lines)
    cols, fields, turn_state = L.EntryCols(), {}, [4, "t-4", True]
    r = L.read_run(
        buf, 0, len(buf), 100, None, None, LONG, (cols, fields, turn_state, 0, 0, KNOWN_KINDS, KERNEL_VOCAB)
    )
    assert r[0] == len(lines[0]) + 1 and r[2] == ["a1"] and r[6] == [sha(lines[0])]
    n, out, _ts_other = cols.take()
    assert n == 1
    assert fields == {("activity", "label"): [1, len(b',"label":"a"')],
                      ("activity", "(envelope)"): [1, len(lines[0]) + 1 - len(b',"label":"a"')]}  # fmt: skip
    assert turn_state == [4, "t-4", False]  # the activity line ended the prep
    # without rows the kind does not matter: both lines are taken
    assert L.read_run(buf, 0, len(buf), 100, None, None, LONG)[0] == len(buf)


@pytest.mark.parametrize("name", list(INSERTS))
def test_lines_taken_or_left(name: str) -> None:
    # INSERTS' line between two plain ones, vouched for by the next line's prev_hash or not, read
    # from its own start: taken (the run ends after it) or left (the run ends before it)
    line, attested, alone, with_rows = INSERTS[name]
    a = entry("activity", b',"label":"a"', "a1")
    c = entry("activity", b',"label":"c"', "a3")
    chained = rechain([a, line, c])
    unvouched = [*chained[:2], PREV_HASH.sub(b',"prev_hash":"' + b"f" * 64 + b'"', chained[2])]
    for lines, want in ((chained, attested), (unvouched, alone)):
        buf = join(lines)
        start, after = len(lines[0]) + 1, len(lines[0]) + len(lines[1]) + 2
        r = L.read_run(buf, start, len(buf), 1, sha(lines[0]), None, LONG)
        assert r[0] == (after if want else start), (name, want)
        cols, fields, turns = L.EntryCols(), {}, [0, None, False]
        r = L.read_run(buf, start, len(buf), 1, sha(lines[0]), None, LONG,
                       (cols, fields, turns, 0, 1, KNOWN_KINDS, KERNEL_VOCAB))  # fmt: skip
        assert r[0] == (after if with_rows else start), (name, "rows")
        assert len(cols) == (1 if with_rows else 0)


def test_a_crlf_line_and_a_byte_order_mark_are_left() -> None:
    a, b = rechain([entry("activity", b',"label":"a"', "a1"), entry("activity", b',"label":"b"', "a2")])
    for buf, stop in ((a + b"\r\n" + b + b"\n", 0), (b"\xef\xbb\xbf" + a + b"\n" + b + b"\n", 0),
                      (a + b"\n" + b + b"\r\n", len(a) + 1)):  # fmt: skip
        assert L.read_run(buf, 0, len(buf), 10, None, None, LONG)[0] == stop
        rows = (L.EntryCols(), {}, [0, None, False], 0, 0, KNOWN_KINDS, KERNEL_VOCAB)
        assert L.read_run(buf, 0, len(buf), 10, None, None, LONG, rows)[0] == stop


# -- the flags, worked out by hand ----------------------------------------------------------------


def line(
    ident: str, parent: str | None, ts: str, prev: str | None, kind: str = "goal", body: bytes = b""
) -> bytes:
    p = b"null" if parent is None else b'"%s"' % parent.encode()
    pv = b"" if prev is None else b',"prev_hash":"%s"' % prev.encode()
    return b'{"id":"%s","parent_id":%s,"ts":"%s"%s,"kind":"%s"%s}' % (ident.encode(), p, ts.encode(), pv,
                                                                    kind.encode(), body)  # fmt: skip


def hand_lines() -> list[bytes]:
    h = line("h", None, "2026-01-01T00:00:01.5Z", None, "header", b',"session_id":"s"')
    # 01Z sorts after 01.5Z as text but is half a second before it
    a = line("a", "h", "2026-01-01T00:00:01Z", sha(h))
    b = line("b", "zz", "2026-01-01T00:00:02Z", "f" * 64)  # a wrong prev_hash, another parent
    # no prev_hash, its own id as parent (the previous line's id too), as late as b, over LONG bytes
    c = line("b", "b", "2026-01-01T00:00:02Z", None, body=b',"pad":"' + b"x" * LONG + b'"')
    d = line("d", "b", "2026-01-01T00:00:02.000000001Z", sha(c))
    return [h, a, b, c, d]


def test_flags_of_hand_worked_lines() -> None:
    lines = hand_lines()
    buf = join(lines)
    h, a, b, c, d = lines
    r = L.read_run(buf, 0, len(buf), 10, None, None, LONG)
    assert r[0] == len(buf)
    assert r[3] == [None, "h", "zz", "b", "b"]
    assert r[7] == [
        (1, TS_BACK, sha(h)),
        (2, BROKEN | PARENT, "f" * 64),
        (3, UNCHAINED | PARENT | LONG_BIT, None),
    ]
    assert r[8] == sha(d) and r[9] == b"2026-01-01T00:00:02.000000001"
    # what the reference path says of the same lines
    recs = list(LedgerReader(io.BytesIO(buf).read, len(buf), native=False))
    assert [x.chain for x in recs] == [S.UNCHECKED, S.CHAIN_OK, S.BROKEN, S.UNCHAINED, S.CHAIN_OK]
    assert [x.ts_back for x in recs] == [None, "2026-01-01T00:00:01.5Z", None, None, None]
    # an expectation the first line does not meet (it has no prev_hash) and a later timestamp key
    r = L.read_run(buf, 0, len(buf), 2, "0" * 64, b"2026-01-01T00:00:09.000000000", LONG)
    assert r[7] == [(0, UNCHAINED | TS_BACK, None), (1, TS_BACK, sha(h))]
    # from the second line: its parent cannot be checked against a line before the run
    start = len(h) + 1
    r = L.read_run(buf, start, len(buf), 1, None, None, LONG)
    assert r[7] == [(0, PARENT, sha(h))] and r[8] == sha(a) and r[9] == b"2026-01-01T00:00:01.000000000"
    # a line longer than the threshold only
    r = L.read_run(buf, start, len(buf), 1, sha(h), None, len(a) - 1)
    assert r[7] == [(0, LONG_BIT | PARENT, sha(h))]
    r = L.read_run(buf, start, len(buf), 1, sha(h), None, len(a))
    assert r[7] == [(0, PARENT, sha(h))]


def _chain_columns(buf: bytes, expected: str | None) -> tuple[list, list]:
    cols = L.EntryCols()
    r = L.read_run(buf, 0, len(buf), 10, expected, None, LONG, (cols, {}, [0, None, False], 0, 0, KNOWN_KINDS,
                                                                 KERNEL_VOCAB))  # fmt: skip
    assert r[0] == len(buf)
    n, out, _ = cols.take()
    names = sl._ROW_COLUMNS
    status = native.arrow_column(pa.string(), n, out[names.index("chain_status")]).to_pylist()
    chain_ok = native.arrow_column(pa.bool_(), n, out[len(names)]).to_pylist()
    return status, chain_ok


def test_the_rows_chain_status_follows_the_flags() -> None:
    buf = join(hand_lines())
    assert _chain_columns(buf, None) == (
        ["unchecked", "chain_ok", "broken", "unchained", "chain_ok"],
        [None, True, False, None, True],
    )
    assert _chain_columns(buf, "0" * 64)[0][:2] == ["unchained", "chain_ok"]


def test_an_expectation_of_any_length_is_compared_as_it_is() -> None:
    # ChainVerifier.link compares prev_hash with the expectation as strings, whatever their length
    one = join([line("a", None, "2026-01-01T00:00:00Z", "ab")])
    for expected, bits, status in (("ab", 0, "chain_ok"), ("abc", BROKEN, "broken"), ("a", BROKEN, "broken")):
        r = L.read_run(one, 0, len(one), 1, expected, None, LONG)
        assert r[7] == ([(0, bits, "ab")] if bits else [])
        assert _chain_columns(one, expected)[0] == [status]
    # nothing taken: the expectation is handed back as given
    assert L.read_run(b"not a line\n", 0, 11, 1, "ab", None, LONG)[8] == "ab"


# -- the digests ----------------------------------------------------------------------------------


def _column(out: list, name_index: int, n: int, type_: pa.DataType) -> list:
    return native.arrow_column(type_, n, out[name_index]).to_pylist()


@pytest.mark.parametrize("shani", [True, False], ids=["sha-extensions", "openssl"])
def test_digests_are_hashlib_digests(shani: bool) -> None:
    col = {name: i for i, name in enumerate(sl._ROW_COLUMNS)}
    checked = 0
    try:
        L.set_shani(shani)
        for b in list(BUFFERS.values())[:: max(1, len(BUFFERS) // 40)]:
            buf = b.data
            plain = L.read_run(buf, 0, len(buf), 1 << 30, None, None, LONG)
            assert plain[6] == [sha(buf[s : buf.index(b"\n", s)]) for s in plain[1]]
            pos, expected, line_no = 0, None, 0
            cols, fields, turn_state = L.EntryCols(), {}, [0, None, False]
            while pos < len(buf):
                rows = (cols, fields, turn_state, 0, line_no, KNOWN_KINDS, KERNEL_VOCAB)
                r = L.read_run(buf, pos, len(buf), 1 << 20, expected, None, LONG, rows)
                if r[0] == pos:
                    lf = buf.find(b"\n", pos)
                    if lf < 0:
                        break
                    pos, expected, line_no = lf + 1, None, line_no + 1
                    continue
                n, out, _ = cols.take()
                offsets = _column(out, col["offset_bytes"], n, pa.int64())
                kinds = _column(out, col["kind"], n, pa.string())
                digests = _column(out, col["line_sha256"], n, pa.string())
                bodies = _column(out, col["body_sha256"], n, pa.string())
                turn_ids = _column(out, col["turn_id"], n, pa.string())
                assert offsets == r[1] and digests == r[6]  # one digest per line, the same hex in both
                for i in range(n):
                    raw = buf[offsets[i] : buf.index(b"\n", offsets[i])]
                    assert digests[i] == sha(raw)
                    kind = b',"kind":"%s"' % kinds[i].encode()
                    assert bodies[i] == sha(raw[raw.index(kind) + len(kind) :])
                    at = at_turn_of(raw)
                    if at is not None:
                        assert turn_ids[i] == at
                checked += n
                pos, expected, line_no = r[0], r[8], line_no + n
    finally:
        L.set_shani(True)
    assert checked > 1000


# -- arguments and errors -------------------------------------------------------------------------


def fresh_rows(
    turn_state: list | None = None, known: object = KNOWN_KINDS, vocab: object = KERNEL_VOCAB
) -> tuple:
    """A rows tuple with new buffers: (cols, fields, turn_state, base 0, line_no 0, known, vocab)."""
    return (L.EntryCols(), {}, [0, None, False] if turn_state is None else turn_state, 0, 0, known, vocab)


def _sample() -> bytes:
    return join(rechain([entry("activity", b',"label":"%d"' % i, f"e{i}") for i in range(20)]))


def test_rows_by_keyword_and_by_position_are_the_same() -> None:
    buf = _sample()
    a = L.read_run(buf, 0, len(buf), 50, None, None, LONG, fresh_rows())
    b = L.read_run(
        buf,
        0,
        len(buf),
        50,
        None,
        None,
        LONG,
        rows=fresh_rows(None, frozenset(KNOWN_KINDS), (set(KERNEL_VOCAB[0]), *KERNEL_VOCAB[1:])),
    )
    assert a == b and a[0] == len(buf)
    assert L.read_run(buf, 0, len(buf), 50, None, None, LONG, rows=None) == L.read_run(
        buf, 0, len(buf), 50, None, None, LONG
    )


def test_bad_arguments() -> None:
    buf = _sample()
    n = len(buf)
    good = fresh_rows()
    for args in ((buf, -1, n, 5), (buf, 0, n + 1, 5), (buf, 5, 4, 5), (buf, 0, n, 0)):
        with pytest.raises(ValueError, match="read_run: bad range"):
            L.read_run(*args, None, None, LONG)
    with pytest.raises(ValueError, match="29 bytes"):
        L.read_run(buf, 0, n, 5, None, b"2026", LONG)
    with pytest.raises(TypeError):
        L.read_run(buf, 0, n, 5, b"not a str", None, LONG)
    with pytest.raises(TypeError, match="tuple"):
        L.read_run(buf, 0, n, 5, None, None, LONG, [good])
    with pytest.raises(TypeError):
        L.read_run(buf, 0, n, 5, None, None, LONG, ({},) + good[1:])
    with pytest.raises(ValueError, match="turn_state"):
        L.read_run(buf, 0, n, 5, None, None, LONG, good[:2] + ([0, None],) + good[3:])
    with pytest.raises(TypeError, match="known must be a set"):
        L.read_run(buf, 0, n, 5, None, None, LONG, good[:5] + (list(KNOWN_KINDS), KERNEL_VOCAB))
    with pytest.raises(TypeError, match="vocab"):
        L.read_run(buf, 0, n, 5, None, None, LONG, good[:6] + (KERNEL_VOCAB[:-1],))
    with pytest.raises(TypeError, match="vocab"):
        L.read_run(buf, 0, n, 5, None, None, LONG, good[:6] + ((list(KERNEL_VOCAB[0]), *KERNEL_VOCAB[1:]),))
    assert len(good[0]) == 0 and good[1] == {} and good[2] == [0, None, False]


def test_a_python_error_midway_leaves_the_turn_state_alone() -> None:
    # a row that takes its turn_id from the state meets a turn_id that is not a str: the error
    # propagates, and the state is not written back
    buf = _sample()
    turn_state = [3, 12345, False]
    with pytest.raises(TypeError):
        L.read_run(buf, 0, len(buf), 50, None, None, LONG, fresh_rows(turn_state))
    assert turn_state == [3, 12345, False]


def test_no_memory_kept_after_errors_or_runs() -> None:
    buf = _sample()
    n = len(buf)

    def once() -> None:
        for rows in (fresh_rows([0, None]), fresh_rows([3, 1, False])):
            try:  # (not pytest.raises: its exception records would count as memory kept)
                L.read_run(buf, 0, n, 50, None, None, LONG, rows)
            except (ValueError, TypeError):
                pass
            else:
                raise AssertionError("no error")
        L.read_run(buf, 0, n, 50, None, None, LONG, fresh_rows())
        L.read_run(buf, 0, n, 50, "0" * 64, None, LONG)

    for _ in range(50):
        once()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(2000):
            once()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, grown


def test_the_turn_vocabulary_is_the_callers_data() -> None:
    # the kernel keeps no word of the turn rule: with another directive role and another prep
    # follower handed in, an "operator" message opens a turn and a "user" one does not, and a
    # "goal" after a prep entry is numbered with the turn it prepares (hand-worked numbers)
    def msg(role: str, ident: str) -> bytes:
        body = b',"message":{"role":"%s","content":[{"type":"text","text":"x"}]},"meta":{}' % role.encode()
        return entry("message", body, ident)

    lines = rechain([entry("header", b"", "h"), msg("operator", "d1"), msg("user", "u"),
                     entry("turn_capabilities_ref", b',"epoch":1', "p"), entry("goal", b"", "g"),
                     msg("operator", "d2")])  # fmt: skip
    buf = join(lines)
    prep, header, _follower, kind, _role, text, result = KERNEL_VOCAB
    vocab = (prep, header, "goal", kind, "operator", text, result)
    cols = L.EntryCols()
    turn_state = [0, None, False]
    r = L.read_run(buf, 0, len(buf), 10, None, None, LONG, (cols, {}, turn_state, 0, 0, KNOWN_KINDS, vocab))
    assert r[0] == len(buf)
    n, out, _ = cols.take()
    names = sl._ROW_COLUMNS
    turn_no = native.arrow_column(pa.int64(), n, out[names.index("turn_no")]).to_pylist()
    directive = native.arrow_column(pa.bool_(), n, out[names.index("is_directive")]).to_pylist()
    assert directive == [None, True, False, None, None, True]
    assert turn_no == [None, 1, 1, 2, 2, 2]
    assert turn_state == [2, "d2", False]
