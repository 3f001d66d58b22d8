"""The compiled JSONL column reader (``linescan.jsonl_columns``) gives exactly what the reference gives.

``read_jsonl`` has three paths: the line-at-a-time reference (``fast=False``), the Python block
decoder (the extension switched off) and the compiled chunk reader, which declines every chunk that is
not the plain case. Here: values it decodes are checked against hand-computed expectations, chunks it
must decline are declined, it is really taken on plain chunks, and on generated files (hypothesis) and
the sample and synthetic homes its batches and findings equal the reference's.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonl_compare import assert_same, jsonl_files, spec_of

from vakaudit._native import linescan
from vakaudit.artifacts import _columns, _jsonl, _lines
from vakaudit.artifacts._rowspec import RowSpec

pytestmark = pytest.mark.skipif(
    linescan is None or not hasattr(linescan, "jsonl_columns"), reason="extension not built"
)

ELIGIBLE = (
    "activity_log",
    "budget_alerts",
    "commitments",
    "cost_log",
    "coworking_grants",
    "entities",
    "intent_evidence",
    "operations_actions",
    "routing_evidence",
    "sandbox_executions",
    "security_events",
)


_spec = spec_of


def _native(spec: RowSpec) -> Any:
    return _jsonl._compiled(spec)[3]


def _chunk(spec: RowSpec, lines: list[bytes]) -> dict[str, list[Any]] | None:
    """The compiled reader on one chunk: None when declined, else its columns as Python lists."""
    native = _native(spec)
    part = native.read(b"".join(line + b"\n" for line in lines), 10, 1000)
    if part is None:
        return None
    got = {c.field.name: a.to_pylist() for c, a in zip(native.columns, part.arrays, strict=True)}
    starts = [1000 + sum(len(x) + 1 for x in lines[:i]) for i in range(len(lines))]
    assert [a.to_pylist() for a in part.where] == [
        list(range(10, 10 + len(lines))),
        starts,
        [len(x) + 1 for x in lines],
    ]
    return got


def test_mode_numbers_match_the_extension() -> None:
    for name in ("J_STR", "J_INT", "J_FLOAT", "J_BOOL", "J_TS", "J_UTF8LEN", "J_COUNT", "J_JSON", "J_PATH"):
        assert getattr(_jsonl._J, name) == getattr(linescan, name), name


def test_which_kinds_the_compiled_reader_takes() -> None:
    for name in ELIGIBLE:
        assert _native(_spec(name)) is not None, name
    # a column computed from the whole row (inbox row_type, delivery_jobs text) keeps the Python path
    for name in ("inbox", "delivery_jobs", "gateway_deliveries"):
        assert _native(_spec(name)) is None, name


# --------------------------------------------------------------------------- decoded values


def test_plain_chunk_is_taken_and_values_are_decoded() -> None:
    got = _chunk(
        _spec("sandbox_executions"),
        [
            b'{"kind":"ProcessTelemetry","elapsed_ms":500,"cpu_percent":165.4,"memory_bytes":827090586}',
            b'{"kind":"Stdout","chunk":"a\\u00e9\\ud83d\\ude00","stream":"stdout"}',
            b'{"kind":"ExecutionStarted","code_preview":"ls \xc3\xa9\\n","packages":["a","b",{"c":1}]}',
            b'{"kind":"ExecutionFinished","exit_code":-3,"duration_ms":0,"artifacts":[]}',
            b'{"kind":"x\\"\\\\\\/\\b\\f\\n\\r\\t\\u0001","cpu_percent":-0,"chunk":7,"packages":"p"}',
        ],
    )
    assert got is not None
    assert got["kind"] == [
        "ProcessTelemetry",
        "Stdout",
        "ExecutionStarted",
        "ExecutionFinished",
        'x"\\/\b\f\n\r\t\x01',
    ]
    assert got["elapsed_ms"] == [500, None, None, None, None]
    assert got["cpu_percent"][0] == 165.4
    assert got["cpu_percent"][4] == 0.0 and math.copysign(1, got["cpu_percent"][4]) == 1.0  # int -0 is 0
    assert got["memory_bytes"][0] == 827090586
    assert got["chunk_bytes"] == [None, 7, None, None, None]  # 1 + 2 (é) + 4 (😀); a number has no size
    assert got["code_preview_bytes"] == [None, None, 6, None, None]  # "ls é\n": 3 + 2 + 1
    assert got["package_count"] == [None, None, 3, None, None]  # a string has no count
    assert got["artifact_count"] == [None, None, None, 0, None]
    assert got["exit_code"] == [None, None, None, -3, None]
    assert got["ts"] == [None] * 5 and got["ts_at"] == [None] * 5


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (b"0.1", 0.1),
        (b"-0.0", -0.0),
        (b"1e-5", 1e-05),
        (b"2.5E+3", 2500.0),
        (b"123456789012345", 123456789012345.0),
        (b"0.30000000000000004", 0.30000000000000004),
        (b"9007199254740993.0", 9007199254740992.0),  # correctly rounded (ties to even)
        (b"1.7976931348623157e308", None),  # a 3-digit exponent: declined, checked by the reference below
    ],
)
def test_floats_are_parsed_correctly_rounded(text: bytes, value: float | None, tmp_path: Path) -> None:
    spec = _spec("cost_log")
    line = b'{"usd":' + text + b"}"
    got = _chunk(spec, [line])
    if value is None:
        assert got is None
    else:
        assert got is not None
        assert got["usd"] == [value] and math.copysign(1, got["usd"][0]) == math.copysign(1, value)
        assert got["usd"] == [orjson.loads(line)["usd"]]
    (tmp_path / "c.jsonl").write_bytes(line + b"\n")
    assert_same(tmp_path, "c.jsonl", spec)


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b'{"kind":7}', "a number in a string column (the reference keeps its JSON text)"),
        (b'{"kind":"a","kind":"b"}', "a requested key written twice"),
        (b'{"ki\\u006ed":"a"}', "a top-level key with an escape"),
        (b'{"kind":"\\ud800"}', "a lone surrogate"),
        (b'{"kind":"\\udc00\\ud800"}', "a reversed pair"),
        (b'{"kind":"\xff"}', "invalid UTF-8"),
        (b'{"kind":"a"}\r', "CR before LF"),
        (b"", "a blank line"),
        (b'{"kind": "a"}', "whitespace"),
        (b'{"kind":"a"} ', "trailing bytes"),
        (b"[1]", "not an object"),
        (b'{"elapsed_ms":1.0}', "a float in an int column"),
        (b'{"elapsed_ms":"1"}', "a string in an int column"),
        (b'{"elapsed_ms":true}', "a bool in an int column"),
        (b'{"elapsed_ms":9223372036854775808}', "an int beyond int64"),
        (b'{"cpu_percent":1234567890123456}', "an int of 16 digits in a float column"),
        (b'{"cpu_percent":false}', "a bool in a float column"),
        (b'{"packages":{"a":1,"a":2}}', "an object in a count column"),
        (b'{"x":' + b"[" * 200 + b"]" * 200 + b"}", "nesting deeper than the validator's cap"),
        (b'{"x":NaN}', "NaN"),
    ],
)
def test_chunks_that_are_not_the_plain_case_are_declined(line: bytes, why: str, tmp_path: Path) -> None:
    spec = _spec("sandbox_executions")
    plain = b'{"kind":"ProcessTelemetry","elapsed_ms":1}'
    if b'"kind"' not in line and line.startswith(b"{") and line.endswith(b"}"):
        line = line[:-1] + b',"kind":"k"}'
    assert _chunk(spec, [plain]) is not None
    assert _chunk(spec, [plain, line]) is None, why
    (tmp_path / "d.jsonl").write_bytes(plain + b"\n" + line + b"\n" + plain + b"\n")
    assert_same(tmp_path, "d.jsonl", spec)


def test_a_declined_chunk_still_gives_the_reference_values(tmp_path: Path) -> None:
    (tmp_path / "n.jsonl").write_bytes(b'{"kind":7,"tool":{"a":[1,2.50]}}\n{"kind":"Stdout"}\n')
    table = assert_same(tmp_path, "n.jsonl", _spec("sandbox_executions"))
    assert table.column("kind").to_pylist() == ["7", "Stdout"]
    assert table.column("tool").to_pylist() == ['{"a":[1,2.5]}', None]


def test_sandbox_lines_without_a_top_level_kind_keep_the_unwrapping_path(tmp_path: Path) -> None:
    spec = _spec("sandbox_executions")
    wrapped = b'{"event":{"kind":"Finish","exit_code":0},"ts":"2026-08-24T10:00:00Z"}'
    assert _chunk(spec, [b'{"kind":"Start"}', wrapped]) is None
    (tmp_path / "w.jsonl").write_bytes(b'{"kind":"Start"}\n' + wrapped + b"\n")
    table = assert_same(tmp_path, "w.jsonl", spec)
    assert table.column("kind").to_pylist() == ["Start", "Finish"]
    assert table.column("exit_code").to_pylist() == [None, 0]


def test_null_and_absent_values_are_null_and_other_types_give_no_size() -> None:
    got = _chunk(
        _spec("sandbox_executions"),
        [
            b'{"kind":null,"chunk":null,"packages":null,"cpu_percent":null,"code_preview":[1]}',
            b'{"kind":"k"}',
        ],
    )
    assert got is not None
    assert got["kind"] == [None, "k"]
    assert got["chunk_bytes"] == [None, None]
    assert got["code_preview_bytes"] == [None, None]
    assert got["package_count"] == [None, None]


def test_bool_columns() -> None:
    got = _chunk(
        _spec("intent_evidence"), [b'{"sliced":true}', b'{"sliced":false}', b'{"sliced":null}', b"{}"]
    )
    assert got is not None and got["sliced"] == [True, False, None, None]
    assert _chunk(_spec("intent_evidence"), [b'{"sliced":1}']) is None


def test_trace_json_and_key_paths() -> None:
    spec = _spec("cost_log")
    trace = b'{"run":"r1","session":"s\\u00e9","cause":{"kind":"user","n":[1,-2,true,null]}}'
    got = _chunk(
        spec,
        [
            b'{"trace":' + trace + b',"actor":"usr"}',
            b'{"trace":{"run":"r","x":1.50,"y":"\\/"}}',  # not orjson's form: re-encoded
            b'{"trace":{"run":"a","run":"b","session":5}}',  # duplicate sub-key: the last wins
            b'{"trace":"not an object"}',
            b'{"trace":{"run":{"deep":1},"session":null}}',
            b'{"trace":{"ru\\u006e":"escaped key"}}',
            b'{"trace":null}',
            b"{}",
        ],
    )
    assert got is not None
    assert got["trace"] == [
        '{"run":"r1","session":"sé","cause":{"kind":"user","n":[1,-2,true,null]}}',
        '{"run":"r","x":1.5,"y":"/"}',
        '{"run":"b","session":5}',
        '"not an object"',
        '{"run":{"deep":1},"session":null}',
        '{"run":"escaped key"}',
        None,
        None,
    ]
    assert got["trace_run"] == ["r1", "r", "b", None, '{"deep":1}', "escaped key", None, None]
    assert got["trace_session"] == ["sé", None, "5", None, None, None, None, None]
    assert got["actor"] == ["usr", None, None, None, None, None, None, None]


def test_values_finished_in_python_within_a_file(tmp_path: Path) -> None:
    lines = [b'{"kind":"tool","trace":{"run":%d,"session":"s","x":1.50}}' % i for i in range(50)]
    (tmp_path / "f.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    spec = _spec("activity_log")
    assert _chunk(spec, lines) is not None  # taken, with every trace value finished in Python
    table = assert_same(tmp_path, "f.jsonl", spec, batch_rows=16)
    assert table.column("trace_run").to_pylist() == [str(i) for i in range(50)]
    assert table.column("trace").to_pylist()[3] == '{"run":3,"session":"s","x":1.5}'


def test_nested_key_paths_of_commitments() -> None:
    got = _chunk(
        _spec("commitments"),
        [b'{"spec":{"objective":"o","cwd":"/w"},"advancement":{"kind":"k"}}', b'{"spec":[1]}'],
    )
    assert got is not None
    assert got["objective"] == ["o", None] and got["cwd"] == ["/w", None]
    assert got["advancement_kind"] == ["k", None]


def test_timestamps_are_converted_per_batch_across_compiled_and_declined_chunks(tmp_path: Path) -> None:
    """One batch made of chunks the extension read and chunks it declined converts its timestamps
    together, like the reference (one value Arrow cannot cast sends the whole batch value by value)."""
    lines = [
        b'{"ts":"2026-08-24T10:02:%02d.5Z","kind":"tool","duration_ms":%d}' % (i % 60, i) for i in range(60)
    ]
    lines[30] = b'{"ts":"2026-08-24T10:02:40","kind":7}'  # naive, and a number in a string column
    lines[45] = b'{"ts":"2026-02-30T10:00:00Z","kind":"tool"}'
    (tmp_path / "t.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    spec = _spec("activity_log")
    old = _lines.CHUNK_BYTES
    try:
        _lines.CHUNK_BYTES = 600  # several chunks per batch: some taken, some declined
        for batch_rows in (7, 40, 65_536):
            assert_same(tmp_path, "t.jsonl", spec, batch_rows=batch_rows)
    finally:
        _lines.CHUNK_BYTES = old


def test_the_compiled_path_is_taken_on_sample_sidecars(sample_homes: Path) -> None:
    """On the committed sample homes most chunks of the kinds it reads are plain: it must take them."""
    taken = declined = 0
    for home in sorted(p for p in sample_homes.iterdir() if p.is_dir()):
        for rel_path, spec in jsonl_files(home):
            native = _native(spec)
            if native is None:
                continue
            with (home / rel_path).open("rb") as f:
                for block, terminated in _lines._iter_blocks(f, 0):
                    if terminated:
                        if native.read(block, 1, 0) is None:
                            declined += 1
                        else:
                            taken += 1
    assert taken > declined > 0


# --------------------------------------------------------------------------- whole files


def test_every_sidecar_of_the_sample_homes(sample_homes: Path) -> None:
    checked = 0
    for home in sorted(p for p in sample_homes.iterdir() if p.is_dir()):
        for rel_path, spec in jsonl_files(home):
            assert_same(home, rel_path, spec)
            assert_same(home, rel_path, spec, batch_rows=3)
            checked += 1
    assert checked > 20


def test_the_python_block_path_still_equals_the_reference(
    sample_homes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the extension switched off, read_jsonl's default is the Python block path again."""
    monkeypatch.setattr(_jsonl, "_linescan", None)
    checked = 0
    for home in sorted(p for p in sample_homes.iterdir() if p.is_dir()):
        for rel_path, spec in jsonl_files(home):
            assert_same(home, rel_path, spec, batch_rows=5)
            checked += 1
    assert checked > 20
    (tmp_path / "t.jsonl").write_bytes(b'{"kind":7,"trace":{"run":1.5}}\n{"kind":"k"}\n{"kind"')
    table = assert_same(tmp_path, "t.jsonl", _spec("activity_log"))
    assert table.column("kind").to_pylist() == ["7", "k", None]
    assert table.column("trace_run").to_pylist() == ["1.5", None, None]


def test_every_sidecar_of_a_synthetic_g2_home(tmp_path: Path) -> None:
    from vakaudit.synth.home import build_home

    build_home(tmp_path / "home", profile="tiny", layout="g2", fsync=False, seed=5)
    kinds = set()
    for rel_path, spec in jsonl_files(tmp_path / "home"):
        assert_same(tmp_path / "home", rel_path, spec)
        kinds.add(id(spec))
    assert len(kinds) >= 8


def test_switched_off_extension_keeps_the_python_paths(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_bytes(b'{"kind":"tool","duration_ms":3,"trace":{"run":"r"}}\n')
    code = (
        "import sys; from pathlib import Path\n"
        "from vakaudit.artifacts import _jsonl, activity_log\n"
        "from vakaudit.artifacts._base import ReadContext\n"
        "assert _jsonl._linescan is None\n"
        "ctx = ReadContext(home=Path(sys.argv[1]), rel_path='a.jsonl', home_scope='', session_id=None,"
        " start_offset=0, emit=print)\n"
        "b, = _jsonl.read_jsonl(ctx, activity_log.ROWS)\n"
        "print(b.column('duration_ms').to_pylist(), b.column('trace_run').to_pylist())\n"
    )
    env = dict(os.environ, VAKAUDIT_NO_NATIVE="1")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[3] ['r']"


# --------------------------------------------------------------------------- generated files

KEYS = [
    "kind", "ts", "name", "success", "duration_ms", "chunk", "packages", "artifacts", "cpu_percent",
    "elapsed_ms", "usd", "input_tokens", "trace", "actor", "spec", "sliced", "event", "x", "ü",
]  # fmt: skip
SUB_KEYS = ["run", "session", "kind", "objective", "cwd", "cause", "a"]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.integers(min_value=-1000, max_value=1000)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["2026-08-24T10:02:40.5Z", "2026-08-24T10:02:40+02:00", "2026-08-24", 'é😀/\\"\x01'])
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.lists(st.tuples(st.sampled_from(SUB_KEYS), inner), max_size=4)
    ),  # pairs: keys may repeat
    max_leaves=8,
)


def _enc_str(s: str, rnd: random.Random) -> bytes:
    out = ['"']
    ascii_only = rnd.random() < 0.3
    for ch in s:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif o < 0x20 or (ascii_only and o > 0x7E) or rnd.random() < 0.03:
            if o > 0xFFFF:
                o -= 0x10000
                out.append(f"\\u{0xD800 + (o >> 10):04x}\\u{0xDC00 + (o & 0x3FF):04x}")
            else:
                out.append(f"\\u{o:04X}" if rnd.random() < 0.2 else f"\\u{o:04x}")
        elif ch == "/" and rnd.random() < 0.5:
            out.append("\\/")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out).encode("utf-8", "surrogatepass")  # a lone surrogate gives invalid UTF-8


def _enc(v: Any, rnd: random.Random) -> bytes:
    if v is None:
        return b"null"
    if v is True or v is False:
        return b"true" if v else b"false"
    if isinstance(v, int):
        return b"-0" if v == 0 and rnd.random() < 0.1 else str(v).encode()
    if isinstance(v, float):
        return (repr(v) if rnd.random() < 0.7 else f"{v:.17g}").encode()  # nan / inf are not JSON
    if isinstance(v, str):
        return _enc_str(v, rnd)
    if isinstance(v, list) and v and all(isinstance(x, tuple) for x in v):
        return b"{" + b",".join(_enc_str(k, rnd) + b":" + _enc(x, rnd) for k, x in v) + b"}"
    if isinstance(v, list):
        return b"[" + b",".join(_enc(x, rnd) for x in v) + b"]"
    return b"{" + b",".join(_enc_str(k, rnd) + b":" + _enc(x, rnd) for k, x in v) + b"}"


lines_st = st.lists(
    st.tuples(st.lists(st.tuples(st.sampled_from(KEYS), values), max_size=6), st.integers(0, 99)),
    min_size=1,
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=lines_st, seed=st.integers(0, 2**32 - 1), spec_name=st.sampled_from(ELIGIBLE), tail=st.booleans())
def test_generated_files_agree_with_the_reference(
    rows: list[tuple[list[tuple[str, Any]], int]], seed: int, spec_name: str, tail: bool, tmp_path_factory
) -> None:
    rnd = random.Random(seed)
    spec = _spec(spec_name)
    out = []
    for members, roll in rows:
        if spec_name == "sandbox_executions" and roll < 80 and all(k != "kind" for k, _ in members):
            members = [("kind", "Stdout"), *members]
        line = b"{" + b",".join(_enc_str(k, rnd) + b":" + _enc(v, rnd) for k, v in members) + b"}"
        if roll < 3:
            line += b"\r"
        elif roll < 5:
            line = line[: rnd.randrange(len(line) + 1)]
        elif roll < 7:
            line = json.dumps(dict(members), default=str).encode()  # spaces after ':' and ','
        out.append(line)
    data = b"\n".join(out) + (b"" if tail else b"\n")
    home = tmp_path_factory.mktemp("gen")
    (home / "g.jsonl").write_bytes(data)
    old = _lines.CHUNK_BYTES
    try:
        _lines.CHUNK_BYTES = rnd.choice([64, 300, 1 << 20])
        assert_same(home, "g.jsonl", spec, batch_rows=rnd.choice([4, 65_536]))
    finally:
        _lines.CHUNK_BYTES = old


_BIG_NUMBER = re.compile(rb"\d{19,}|[eE][+-]?\d{3,}")  # beyond what the validator vouches for


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.lists(st.tuples(st.sampled_from(KEYS), values), max_size=6), min_size=1, max_size=8))
def test_chunks_orjson_writes_are_taken(rows: list[list[tuple[str, Any]]]) -> None:
    """A chunk of lines written by orjson with every value of its column's type is read by the
    extension (unless a number is beyond what the validator vouches for), with the values
    ``orjson.loads`` gives back."""
    spec = _spec("activity_log")
    keep = {k: str for k in ("kind", "name", "session_id", "plugin", "tool_use_id", "ts", "actor")}
    lines = []
    for members in rows:
        obj = {}
        for k, v in members:
            if k in keep and not isinstance(v, keep[k] | None):
                v = None
            elif k == "success" and not isinstance(v, bool):
                v = None
            elif k == "duration_ms" and not (type(v) is int and abs(v) < 2**63):
                v = None
            obj[k] = _as_json(v)
        try:
            lines.append(orjson.dumps(obj))
        except (TypeError, orjson.JSONEncodeError):  # lone surrogates, ints beyond 64 bits
            return
    got = _chunk(spec, lines)
    if got is None:
        assert any(_BIG_NUMBER.search(line) for line in lines)
        return
    decoded = [orjson.loads(line) for line in lines]
    assert got["kind"] == [o.get("kind") for o in decoded]
    assert got["duration_ms"] == [o.get("duration_ms") for o in decoded]
    assert got["success"] == [o.get("success") for o in decoded]
    assert got["ts"] == [o.get("ts") for o in decoded]
    assert got["trace"] == [_columns.to_json(o.get("trace")) for o in decoded]
    assert got["trace_run"] == [_run(o.get("trace")) for o in decoded]


def _as_json(v: Any) -> Any:
    """The generated value as orjson would write it (key/value pair lists are objects)."""
    if isinstance(v, list) and v and all(isinstance(x, tuple) for x in v):
        return {k: _as_json(x) for k, x in v}
    if isinstance(v, list):
        return [_as_json(x) for x in v]
    return v


def _run(trace: Any) -> Any:
    if not isinstance(trace, dict):
        return None
    run = trace.get("run")
    return run if run is None or isinstance(run, str) else _columns.to_json(run)
