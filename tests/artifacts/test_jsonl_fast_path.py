"""The block-at-a-time JSONL reader gives exactly what the line-at-a-time reference gives.

``read_jsonl(fast=True)`` frames a read chunk of lines at once, decodes it with one ``map`` and builds
columns per row shape; ``fast=False`` is the line-by-line, column-by-column reader it replaced. Both
run over the same files (hand-made tricky lines, seeded random files, every JSONL file of the sample
homes and of two synthetic homes), and must agree on rows, values, Arrow types, batch sizes and
findings.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from jsonl_compare import assert_same, jsonl_files, read_file, spec_of

from vakaudit.artifacts import _lines

SPEC_MODULES = (
    "activity_log",
    "budget_alerts",
    "commitments",
    "cost_log",
    "coworking_grants",
    "delivery_jobs",
    "entities",
    "feeds_security_log",
    "gateway_deliveries",
    "inbox",
    "intent_evidence",
    "operations_actions",
    "operations_incidents",
    "routing_evidence",
    "sandbox_executions",
    "sandbox_records",
    "security_events",
)


_spec = spec_of
_read = read_file


# --------------------------------------------------------------------------- hand-made tricky files

TRICKY_LINES = [
    b'{"ts":"2026-08-24T10:02:40.1Z","kind":"tool","name":"read","success":true,"duration_ms":5}',
    b'{"ts":"2026-08-24T10:02:40+05:30","kind":"tool","duration_ms":5.0,"success":1}',
    b'{"ts":"2026-08-24T10:02:40","kind":7,"name":{"n":1},"duration_ms":1.5}',  # no tz, int kind
    b'{"ts":12,"kind":null,"duration_ms":true,"usd":false}',
    b'{"kind":"x","duration_ms":9223372036854775807,"usd":18446744073709551615}',
    b'{"kind":"x","duration_ms":9223372036854775808,"usd":9007199254740993}',
    b'{"kind":"x","duration_ms":-9223372036854775809,"usd":1e308}',
    b'{"kind":"x","duration_ms":100000000000000000000000,"input_tokens":-0.0}',
    b'{"kind":"\\u00e9t\\u00e9 \\ud83d\\ude00","name":"caf\xc3\xa9","label":"\xe2\x82\xac"}',
    b'{"kind":"lone","name":"\\ud800"}',  # orjson refuses a lone surrogate: unparseable
    b'{"kind":"bad utf8","name":"\xff"}',
    b'{"trace":{"run":"r1","session":"s1","cause":{"kind":"user"}},"actor":"usr"}',
    b'{"trace":{"run":5,"session":["s"]},"actor":7}',
    b'{"trace":"not an object","actor":null}',
    b'{"trace":null}',
    b'{"kind":"dup","kind":"last wins"}',
    b'{"b":1,"kind":"order"}',
    b'{"kind":"order","b":1}',
    b"{}",
    b"[]",
    b"[1,2]",
    b"42",
    b'"a string"',
    b"null",
    b"",
    b"   ",
    b"{bad",
    b'{"a":1}{"b":2}',
    b'{"a":1} trailing',
    b'{"kind":"Start","tool":"bash","code_preview":"ls \xc3\xa9","packages":["a","b"],"artifacts":{}}',
    b'{"kind":"Output","stream":"stdout","chunk":"x\\ny\\u0000","elapsed_ms":1}',
    b'{"event":{"kind":"Telemetry","elapsed_ms":1},"ts":"2026-08-24T10:00:00Z","execution_id":"e1"}',
    b'{"sandbox_event":{"kind":"Finish","exit_code":0},"tool_use_id":"t"}',
    b'{"event":"not a dict"}',
    b'{"job":{"job_id":"j","content":{"type":"text","markdown":"m"}},"state":"pending","attempts":1}',
    b'{"job":{"content":{"source_markdown":5,"title":"t"}},"packet":{"surface":["x"]}}',
    b'{"incident":{"id":"i1","severity":"high"},"created_at":"2026-08-24T10:00:00.123456789Z"}',
    b'{"created_at":"2026-02-30T10:00:00Z","updated_at":"not a date"}',
    b'{"ts":"2026-08-24T10:02:40.123456789+00:00","ts_at":"ignored"}',
    b'{"nested":' + b"[" * 600 + b"]" * 600 + b"}",
    b'{"deep":' + b"[" * 2000 + b"]" * 2000 + b"}",  # deeper than orjson decodes: unparseable
]


def test_json_text_of_a_value_nested_deeper_than_orjson_writes(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_bytes(b'{"trace":' + b"[" * 300 + b"]" * 300 + b"}\n")
    _, table, findings = _read(tmp_path, "d.jsonl", _spec("cost_log"), fast=True, batch_rows=100)
    assert table.column("trace").to_pylist() == ["[" * 300 + "]" * 300]
    assert findings == []


@pytest.mark.parametrize("name", SPEC_MODULES)
@pytest.mark.parametrize("terminator", [b"\n", b"\r\n"])
def test_tricky_lines_give_the_same_table_and_findings(tmp_path: Path, name: str, terminator: bytes) -> None:
    data = terminator.join(TRICKY_LINES) + terminator
    (tmp_path / "f.jsonl").write_bytes(data)
    assert assert_same(tmp_path, "f.jsonl", _spec(name)).num_rows == len(TRICKY_LINES)
    assert assert_same(tmp_path, "f.jsonl", _spec(name), batch_rows=7).num_rows == len(TRICKY_LINES)


@pytest.mark.parametrize("tail", [b"", b'{"kind":"torn', b'{"kind":"complete"}', b"\r", b"[1]"])
def test_unterminated_tail_and_empty_files(tmp_path: Path, tail: bytes) -> None:
    for i, body in enumerate([b"", b"\n", b"\n\n", b'{"kind":"a"}\n', b'{"kind":"a"}\n' * 100]):
        (tmp_path / f"f{i}.jsonl").write_bytes(body + tail)
        for name in ("activity_log", "sandbox_executions", "delivery_jobs"):
            assert_same(tmp_path, f"f{i}.jsonl", _spec(name))


def test_start_offset_keeps_line_numbers_and_offsets(tmp_path: Path) -> None:
    lines = [b'{"kind":"k%d","duration_ms":%d}' % (i, i) for i in range(300)]
    data = b"\n".join(lines) + b"\n"
    (tmp_path / "f.jsonl").write_bytes(data)
    spec = _spec("activity_log")
    for start in (0, len(lines[0]) + 1, data.index(b'{"kind":"k150"'), len(data)):
        assert_same(tmp_path, "f.jsonl", spec, start=start, batch_rows=64)


@pytest.mark.parametrize("n", [400, 3000])
def test_sparse_event_log_groups_shapes_and_keeps_file_order(tmp_path: Path, n: int) -> None:
    """Several shapes interleaved, rows checked against values written by hand: read key by key
    over all rows (400) and grouped by shape, then put back in file order (3000)."""
    from vakaudit.artifacts._batches import SHAPE_TAKE_MIN_ROWS

    assert 400 < SHAPE_TAKE_MIN_ROWS <= 3000  # one batch of each path
    rows: list[dict[str, Any]] = []
    for i in range(n):
        if i % 7 == 0:
            rows.append({"kind": "Output", "stream": "stderr" if i % 2 else "stdout", "chunk": "é" * (i % 5)})
        elif i % 11 == 0:
            rows.append({"kind": "Finish", "exit_code": i, "duration_ms": i * 10, "artifacts": [1, 2]})
        else:
            rows.append(
                {"kind": "Telemetry", "elapsed_ms": i, "cpu_percent": i / 4, "memory_bytes": i * 1000}
            )
    (tmp_path / "s.jsonl").write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in rows))
    spec = _spec("sandbox_executions")
    assert assert_same(tmp_path, "s.jsonl", spec).num_rows == n
    assert assert_same(tmp_path, "s.jsonl", spec, batch_rows=100).num_rows == n
    _, table, findings = _read(tmp_path, "s.jsonl", spec, fast=True, batch_rows=65_536)
    assert findings == []
    got = table.select(["kind", "elapsed_ms", "cpu_percent", "exit_code", "chunk_bytes", "artifact_count"])
    expected = [
        {
            "kind": r["kind"],
            "elapsed_ms": r.get("elapsed_ms"),
            "cpu_percent": r.get("cpu_percent"),
            "exit_code": r.get("exit_code"),
            "chunk_bytes": len(r["chunk"].encode()) if "chunk" in r else None,
            "artifact_count": len(r["artifacts"]) if "artifacts" in r else None,
        }
        for r in rows
    ]
    assert got.to_pylist() == expected


def test_many_shapes_fall_back_to_column_by_column(tmp_path: Path) -> None:
    lines = [json.dumps({"kind": "k", f"extra{i}": i, "elapsed_ms": i}).encode() for i in range(200)]
    (tmp_path / "m.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    assert assert_same(tmp_path, "m.jsonl", _spec("sandbox_executions")).num_rows == 200


def test_a_value_of_the_wrong_type_in_one_shape_coerces_the_whole_column(tmp_path: Path) -> None:
    lines = [b'{"kind":"Telemetry","elapsed_ms":%d,"cpu_percent":1}' % i for i in range(100)]
    lines[50] = b'{"kind":"Telemetry","elapsed_ms":"12","cpu_percent":true}'
    lines[60] = b'{"kind":"Finish","exit_code":1.0,"duration_ms":2.5}'
    (tmp_path / "w.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    spec = _spec("sandbox_executions")
    assert_same(tmp_path, "w.jsonl", spec)
    _, table, _ = _read(tmp_path, "w.jsonl", spec, fast=True, batch_rows=65_536)
    assert table.column("elapsed_ms")[50].as_py() is None  # a string where an int belongs
    assert table.column("cpu_percent")[50].as_py() is None  # a bool is not a number
    assert table.column("cpu_percent")[0].as_py() == 1.0
    assert table.column("exit_code")[60].as_py() == 1  # an integral float is an int
    assert table.column("duration_ms")[60].as_py() is None  # 2.5 is not


# --------------------------------------------------------------------------- seeded random files

KEYS = [
    "ts", "kind", "name", "success", "duration_ms", "session_id", "plugin", "tool_use_id", "actor",
    "trace", "model", "provider", "input_tokens", "output_tokens", "usd", "source", "elapsed_ms",
    "cpu_percent", "memory_bytes", "chunk", "stream", "packages", "artifacts", "exit_code", "event",
    "job", "state", "attempts", "created_at", "updated_at", "label", "detail", "id", "x",
]  # fmt: skip
VALUES: list[Any] = [
    None, True, False, 0, 1, -1, 7, 2**31, 2**53 + 1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64 - 1,
    0.0, -0.0, 1.0, 1.5, 2.5e-8, 1e300, "", "a", "é", "€uro 😀", "2026-08-24T10:02:40.1Z",
    "2026-08-24T10:02:40.123456789+00:00", "2026-08-24T10:02:40-03:00", "2026-08-24", "nope",
    [], [1, "a"], {}, {"run": "r", "session": "s"}, {"run": 1}, {"kind": "Telemetry", "elapsed_ms": 3},
]  # fmt: skip
BAD_LINES = [b"", b" ", b"{", b"[1]", b"7", b'{"a":"\\ud800"}', b'{"a":"\xff"}', b'{"a":1}x', b"nul"]


def _random_file(rng: random.Random) -> bytes:
    out = []
    shapes = [rng.sample(KEYS, rng.randint(0, 5)) for _ in range(rng.randint(1, 6))]
    bad_rate = rng.choice([0.0, 0.0, 0.03])  # files without a bad line take the block decode
    for _ in range(rng.randint(0, 220)):
        roll = rng.random()
        if roll < bad_rate:
            out.append(rng.choice(BAD_LINES))
            continue
        keys = rng.choice(shapes) if roll < 0.9 else rng.sample(KEYS, rng.randint(0, 8))
        obj = {k: rng.choice(VALUES) for k in keys}
        raw = json.dumps(obj, ensure_ascii=rng.random() < 0.5).encode()
        out.append(raw + (b"\r" if rng.random() < 0.05 else b""))
    data = b"\n".join(out)
    return data if rng.random() < 0.3 else data + b"\n"


@pytest.mark.parametrize("seed", range(12))
def test_random_files_agree_for_every_jsonl_kind(tmp_path: Path, seed: int, monkeypatch) -> None:
    rng = random.Random(seed)
    if seed % 3 == 0:  # tiny read chunks: lines split across many reads
        monkeypatch.setattr(_lines, "CHUNK_BYTES", rng.randint(16, 700))
    for i in range(6):
        (tmp_path / f"r{i}.jsonl").write_bytes(_random_file(rng))
        for name in SPEC_MODULES:
            assert_same(tmp_path, f"r{i}.jsonl", _spec(name), batch_rows=rng.choice([5, 64, 65_536]))


# --------------------------------------------------------------------------- real homes


def test_every_jsonl_file_of_the_sample_homes(sample_homes: Path) -> None:
    checked = 0
    for home in sorted(p for p in sample_homes.iterdir() if p.is_dir()):
        for rel_path, spec in jsonl_files(home):
            assert_same(home, rel_path, spec)
            checked += 1
    assert checked > 20


@pytest.fixture(scope="module")
def synth_homes(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    from vakaudit.synth.home import build_home

    homes = []
    for layout in ("g1", "g2"):
        out = tmp_path_factory.mktemp(f"synth_{layout}") / "home"
        build_home(out, profile="tiny", layout=layout, fsync=False, seed=11)
        homes.append(out)
    return homes


def test_every_jsonl_file_of_synthetic_homes(synth_homes: list[Path]) -> None:
    rows = 0
    for home in synth_homes:
        files = jsonl_files(home)
        assert len({spec for _, spec in files}) >= 8
        for rel_path, spec in files:
            rows += assert_same(home, rel_path, spec).num_rows
            rows += assert_same(home, rel_path, spec, batch_rows=50).num_rows
    assert rows > 1000
