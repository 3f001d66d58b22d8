"""The native line scanner against hand-computed vectors and against the reference Python readers.

The scanner only ever *vouches* for a line (a "plain" record) or *defers* it to the Python path, so
the two properties that matter are: everything it vouches for is what the reference reader would say
(envelope, digest, member spans, validity), and lines in vak's own compact form are vouched for.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import vakaudit._native as native
from vakaudit.artifacts._entry_fields import _split_fields_slow
from vakaudit.ledger.depth import json_depth
from vakaudit.ledger.entry import parse_envelope

L = native.linescan
FLAGS = 3  # BODY_DIGEST | MEMBERS

ENV = b'{"id":"a","parent_id":null,"ts":"2026-01-01T00:00:00.123Z","kind":"x"'


def scan_one(line: bytes, flags: int = FLAGS) -> tuple:
    recs, nxt = L.scan_lines(line + b"\n", 0, len(line) + 1, 10, flags)
    assert nxt == len(line) + 1 and len(recs) == 1
    return recs[0]


def is_plain(line: bytes) -> bool:
    return len(scan_one(line)) == 12


def test_extension_is_built() -> None:
    # setup.py builds it optionally; on this project's machines it must be there, or every test
    # below would only exercise the fallback
    assert native.BUILT and native.AVAILABLE and L is not None
    assert (L.BODY_DIGEST, L.MEMBERS, L.MAX_DEPTH) == (1, 2, 128)


def test_switch_turns_it_off() -> None:
    env = dict(os.environ, VAKAUDIT_NO_NATIVE="1")
    out = subprocess.run(
        [sys.executable, "-c", "import vakaudit._native as n; print(n.BUILT, n.AVAILABLE, n.linescan)"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert out.stdout.split() == ["True", "False", "None"]


def test_plain_record_hand_computed() -> None:
    line = ENV + b',"prev_hash":1,"a":[1,2.5e3,-0,true,null],"bb":"c\\n"}'
    # prev_hash after kind is a repeated envelope key: deferred
    assert not is_plain(line)
    line = (
        b'{"id":"i1","parent_id":"p0","ts":"2026-11-30T12:00:00Z","prev_hash":"' + b"ab" * 32
        + b'","at_turn":"t1","kind":"message","a":[1,2.5e3,-0,true,null],"bb":"c\\n"}'
    )  # fmt: skip
    rec = scan_one(line)
    start, nl, digest, ident, parent, ts, prev, at_turn, kind, cut, body, members = rec
    assert (start, nl) == (0, len(line))
    assert digest == hashlib.sha256(line).hexdigest()
    assert (ident, parent, ts, prev, at_turn, kind) == (
        "i1",
        "p0",
        "2026-11-30T12:00:00Z",
        "ab" * 32,
        "t1",
        "message",
    )
    cut_by_hand = line.index(b'"kind":"message"') + len(b'"kind":"message"')
    assert cut == cut_by_hand
    assert body == hashlib.sha256(line[cut_by_hand:]).hexdigest()
    a0 = cut_by_hand
    a1 = a0 + len(b',"a":[1,2.5e3,-0,true,null]')
    b1 = a1 + len(b',"bb":"c\\n"')
    assert members == [("a", a0, a1, 1), ("bb", a1, b1, 1)]
    assert b1 == len(line) - 1


def test_member_cap() -> None:
    # up to 64 payload members are vouched for; a line with more is left to the reference reader
    def line(n: int) -> bytes:
        return ENV + b"".join(b',"k%d":%d' % (i, i) for i in range(n)) + b"}"

    assert len(scan_one(line(64))[11]) == 64
    assert scan_one(line(65)) == (0, len(line(65)))


def test_flags_off_give_none() -> None:
    rec = scan_one(ENV + b"}", flags=0)
    assert rec[10] is None and rec[11] is None
    assert rec[2] == hashlib.sha256(ENV + b"}").hexdigest()


@pytest.mark.parametrize(
    ("value", "canonical"),
    [
        (b'"plain"', 1),
        (b'"tab\\tquote\\"back\\\\"', 1),
        (b'"\\u001f\\u0000"', 1),  # control characters orjson/serde_json write as \u00XX
        (b'"\\u001F"', 0),  # uppercase hex
        (b'"\\/"', 0),  # escaped solidus
        (b'"\\u00e9"', 0),  # escaped non-ASCII
        (b'"\\u000a"', 0),  # \n written long-hand
        ('"é"'.encode(), 1),
        (b'{"k":"\\/"}', 0),  # nested strings count
    ],
)
def test_canonical_flag(value: bytes, canonical: int) -> None:
    rec = scan_one(ENV + b',"v":' + value + b"}")
    assert rec[11][0][3] == canonical
    # canonical means: the bytes are what orjson writes for the decoded value
    assert (orjson.dumps(orjson.loads(value)) == value) == bool(canonical)


DEFERRED = {
    "leading space": b" " + ENV + b"}",
    "space between members": ENV + b', "a":1}',
    "space after colon": ENV + b',"a": 1}',
    "trailing space": ENV + b"} ",
    "bom": b"\xef\xbb\xbf" + ENV + b"}",
    "crlf": ENV + b"}\r",
    "trailing comma": ENV + b',"a":1,}',
    "trailing bytes": ENV + b"}}",
    "missing parent_id": b'{"id":"a","ts":"2026-01-01T00:00:00Z","kind":"x"}',
    "envelope order": b'{"id":"a","ts":"2026-01-01T00:00:00Z","parent_id":null,"kind":"x"}',
    "ts with offset": b'{"id":"a","parent_id":null,"ts":"2026-01-01T00:00:00+00:00","kind":"x"}',
    "ts ten fraction digits": b'{"id":"a","parent_id":null,"ts":"2026-01-01T00:00:00.0123456789Z","kind":"x"}',
    "escaped id": b'{"id":"a\\u0041","parent_id":null,"ts":"2026-01-01T00:00:00Z","kind":"x"}',
    "non-ascii kind": '{"id":"a","parent_id":null,"ts":"2026-01-01T00:00:00Z","kind":"é"}'.encode(),
    "repeated kind": ENV + b',"kind":"y"}',
    "repeated id": ENV + b',"id":"b"}',
    "escaped key": ENV + b',"a\\n":1}',
    "non-ascii key": ENV + ',"é":1}'.encode(),
    "raw control char": ENV + b',"a":"x\x01y"}',
    "raw tab": ENV + b',"a":"x\ty"}',
    "bad escape": ENV + b',"a":"\\x"}',
    "short unicode escape": ENV + b',"a":"\\u12"}',
    "lone surrogate": ENV + b',"a":"\\ud800"}',
    "surrogate pair": ENV + b',"a":"\\ud83d\\ude00"}',
    "overlong utf-8": ENV + b',"a":"\xc0\xaf"}',
    "utf-8 surrogate": ENV + b',"a":"\xed\xa0\x80"}',
    "above U+10FFFF": ENV + b',"a":"\xf4\x90\x80\x80"}',
    "truncated utf-8": ENV + b',"a":"\xe2\x82"}',
    "stray continuation": ENV + b',"a":"\x80"}',
    "leading zero": ENV + b',"a":01}',
    "bare minus": ENV + b',"a":-}',
    "fraction without digits": ENV + b',"a":1.}',
    "exponent without digits": ENV + b',"a":1e}',
    "19-digit integer": ENV + b',"a":1234567890123456789}',
    "3-digit exponent": ENV + b',"a":1e308}',
    "NaN": ENV + b',"a":NaN}',
    "True": ENV + b',"a":True}',
    "unclosed string": ENV + b',"a":"x}',
    "unclosed array": ENV + b',"a":[1}',
    "depth 129": ENV + b',"a":' + b"[" * 128 + b"]" * 128 + b"}",
    "empty": b"",
    "not an object": b"[1,2]",
}


@pytest.mark.parametrize("name", sorted(DEFERRED))
def test_deferred(name: str) -> None:
    line = DEFERRED[name]
    assert scan_one(line) == (0, len(line))


@pytest.mark.parametrize(
    "line",
    [
        ENV + b"}",
        ENV + b',"a":' + b"[" * 127 + b"]" * 127 + b"}",  # depth 128: serde_json's limit, still readable
        ENV + b',"a":123456789012345678,"b":-0.5e-12,"c":1E+99,"d":0}',
        ENV + b',"a":"\\ud7ff\\ue000","b":"\xf0\x9f\x98\x80","c":"\xe0\xa0\x80"}',
        ENV + b',"a":{},"b":[],"c":{"":null},"d":[[],{}]}',
    ],
)
def test_plain_vectors(line: bytes) -> None:
    assert is_plain(line)
    orjson.loads(line)  # and the reference agrees it is JSON


def test_depth_vectors_against_reference() -> None:
    assert json_depth(DEFERRED["depth 129"]) == 129
    assert json_depth(ENV + b',"a":' + b"[" * 127 + b"]" * 127 + b"}") == 128


def test_framing_max_lines_and_incomplete_tail() -> None:
    a = ENV + b"}"
    buf = a + b"\n\n" + a + b"\n" + a[:10]
    recs, nxt = L.scan_lines(buf, 0, len(buf), 2, 0)
    assert [len(r) for r in recs] == [12, 2] and nxt == len(a) + 2
    assert recs[1] == (len(a) + 1, len(a) + 1)  # the blank line is deferred (Python skips it)
    recs, nxt = L.scan_lines(buf, nxt, len(buf), 10, 0)
    assert len(recs) == 1 and nxt == 2 * len(a) + 3  # the unterminated fragment is left
    with pytest.raises(ValueError):
        L.scan_lines(buf, 5, 2, 10, 0)


# -- differential: whatever the scanner vouches for, the reference reader agrees with -------------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=6), c, max_size=4),
    max_leaves=20,
)


def envelope_line(payload: dict) -> bytes:
    body = orjson.dumps(payload)
    return ENV + (b"," + body[1:] if body != b"{}" else b"}")


def check_against_reference(line: bytes) -> None:
    rec = scan_one(line)
    if len(rec) == 2:
        return
    env, payload = parse_envelope(line)  # raises if the scanner vouched for a bad line
    assert json_depth(line) <= 128
    assert rec[3:9] == (env[0], env[1], env[2], env[3], env[4], env[5])
    assert rec[2] == hashlib.sha256(line).hexdigest()
    members = rec[11]
    assert [k for k, *_ in members] == list(payload)
    assert [(k, e - s) for k, s, e, _c in members] == _split_fields_slow(line)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text(min_size=1, max_size=6).filter(lambda k: k not in {"id", "parent_id", "ts",
       "prev_hash", "at_turn", "kind"}), JSON, max_size=5))  # fmt: skip
@example({"a": 1e300, "b": "x"})  # an exponent the scanner leaves to the reference reader
@example({"a": 12345678901234567890, "b": [1.5e-7, -0.0]})
def test_vak_form_lines_are_plain_and_agree(payload: dict) -> None:
    line = envelope_line(payload)
    check_against_reference(line)
    keys_plain = all(k.isascii() and orjson.dumps(k)[1:-1] == k.encode() for k in payload)
    if keys_plain and not any(_outside_fast_numbers(v) for v in payload.values()):
        assert is_plain(line), line


def _outside_fast_numbers(value: object) -> bool:
    """A value holding a number the scanner leaves to the reference reader: an integer of more than
    18 digits or an exponent of more than 2 digits (either could exceed what a double holds)."""
    if isinstance(value, dict):
        return any(_outside_fast_numbers(v) for v in value.values())
    if isinstance(value, list):
        return any(_outside_fast_numbers(v) for v in value)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return False
    text = orjson.dumps(value).decode()
    mantissa, _, exponent = text.lower().partition("e")
    return len(mantissa.lstrip("-").split(".")[0]) > 18 or len(exponent.lstrip("+-")) > 2


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text(min_size=1, max_size=6), JSON, max_size=4), st.data())
def test_mutated_lines_never_vouched_wrongly(payload: dict, data: st.DataObject) -> None:
    line = bytearray(envelope_line(payload))
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(line) - 1))
        op = data.draw(st.sampled_from(["replace", "insert", "delete"]))
        b = data.draw(
            st.sampled_from(
                list(b'"\\{}[],:0 9e.-tfn\x00\x7f\x80\xc3\xed\xf4') + [data.draw(st.integers(0, 255))]
            )
        )
        if op == "replace":
            line[i] = b
        elif op == "insert":
            line.insert(i, b)
        elif len(line) > 1:
            del line[i]
    raw = bytes(line).replace(b"\n", b" ")
    check_against_reference(raw)


def _has_sha_ni() -> bool:
    with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
        return " sha_ni" in f.read()


@pytest.mark.parametrize("shani", [True, False], ids=["sha-extensions", "openssl"])
def test_one_message_digests_at_every_length_mod_64(shani: bool) -> None:
    # scan_lines' line and body digests and read_run's chain digests: lines of 100 .. 300 bytes
    # cover every tail length (< 56, >= 56 and whole blocks), checked against hashlib
    lines = []
    prev = None
    for i in range(200):
        env = b'{"id":"e%d","parent_id":null,"ts":"2026-01-01T00:00:00Z",' % i
        if prev is not None:
            env += b'"prev_hash":"' + prev.encode() + b'",'
        head = env + b'"kind":"x"'
        line = head + b',"v":"' + b"a" * max(0, 100 + i - len(head) - 8) + b'"}'
        lines.append(line)
        prev = hashlib.sha256(line).hexdigest()
    assert {len(x) % 64 for x in lines} == set(range(64))
    buf = b"\n".join(lines) + b"\n"
    try:
        assert L.set_shani(shani) is (shani and _has_sha_ni())
        recs, nxt = L.scan_lines(buf, 0, len(buf), len(lines), FLAGS)
        run = L.read_run(buf, 0, len(buf), len(lines), None, None, 1 << 30)
    finally:
        L.set_shani(True)
    assert nxt == len(buf) and len(recs) == len(lines)
    assert [r[2] for r in recs] == [hashlib.sha256(x).hexdigest() for x in lines]
    cut = len(b'"kind":"x"')
    assert [r[10] for r in recs] == [hashlib.sha256(x[x.index(b'"kind":"x"') + cut :]).hexdigest() for x in lines]
    assert run[0] == len(buf)
    assert list(run[6]) == [hashlib.sha256(x).hexdigest() for x in lines]
    assert run[7] == []  # every prev_hash is the digest of the line before
