"""The shared JSONL streaming: torn and unparseable lines, CRLF, incremental offsets, long lines, batching."""

from __future__ import annotations

from pathlib import Path

from artifact_kind_helpers import run_reader, utc

from vakaudit.findings import FindingCode, Severity

GOOD1 = b'{"ts":"2026-08-24T10:02:40.1Z","kind":"auth_failure","label":"a","detail":"d"}'
GOOD2 = b'{"ts":"2026-08-24T10:03:00Z","kind":"rate_limit","label":"b","detail":"e"}'
# counted by hand: GOOD1 is 78 bytes (79 with LF), GOOD2 74 bytes (75 with LF)


def _write(tmp_path: Path, data: bytes) -> Path:
    (tmp_path / "security-events.jsonl").write_bytes(data)
    return tmp_path


def test_unparseable_middle_line_gives_a_null_row_and_a_finding(tmp_path: Path) -> None:
    home = _write(tmp_path, GOOD1 + b"\n" + b'{"ts": oops\n' + GOOD2 + b"\n")
    rows, findings = run_reader("security_events", home, "security-events.jsonl")
    assert [(r["line_no"], r["offset_bytes"], r["size_bytes"], r["label"]) for r in rows] == [
        (1, 0, 79, "a"),
        (2, 79, 12, None),
        (3, 91, 75, "b"),
    ]
    assert rows[1]["ts"] is None and rows[1]["kind"] is None
    assert [(f.code, f.rel_path, f.line_no, f.offset_bytes) for f in findings] == [
        (FindingCode.SIDECAR_UNPARSEABLE_ROW, "security-events.jsonl", 2, 79)
    ]


def test_torn_last_line_is_a_row_with_a_torn_finding(tmp_path: Path) -> None:
    home = _write(tmp_path, GOOD1 + b"\n" + b'{"ts":"2026-08')
    rows, findings = run_reader("security_events", home, "security-events.jsonl")
    assert [(r["line_no"], r["offset_bytes"], r["size_bytes"], r["kind"]) for r in rows] == [
        (1, 0, 79, "auth_failure"),
        (2, 79, 14, None),
    ]
    assert [(f.code, f.severity, f.line_no, f.offset_bytes) for f in findings] == [
        (FindingCode.TORN_LAST_LINE, Severity.WARNING, 2, 79)
    ]


def test_unterminated_last_line_that_parses_is_read_and_flagged_info(tmp_path: Path) -> None:
    home = _write(tmp_path, GOOD1 + b"\n" + GOOD2)
    rows, findings = run_reader("security_events", home, "security-events.jsonl")
    assert [(r["size_bytes"], r["label"]) for r in rows] == [(79, "a"), (74, "b")]
    assert [(f.code, f.severity, f.line_no) for f in findings] == [
        (FindingCode.TORN_LAST_LINE, Severity.INFO, 2)
    ]


def test_blank_line_and_non_object_lines_are_unparseable_rows(tmp_path: Path) -> None:
    home = _write(tmp_path, b"\n[1,2]\n" + GOOD1 + b"\n")
    rows, findings = run_reader("security_events", home, "security-events.jsonl")
    assert [(r["line_no"], r["offset_bytes"], r["size_bytes"], r["label"]) for r in rows] == [
        (1, 0, 1, None),
        (2, 1, 6, None),
        (3, 7, 79, "a"),
    ]
    assert [(f.code, f.line_no) for f in findings] == [
        (FindingCode.SIDECAR_UNPARSEABLE_ROW, 1),
        (FindingCode.SIDECAR_UNPARSEABLE_ROW, 2),
    ]


def test_crlf_terminator_counts_in_size(tmp_path: Path) -> None:
    home = _write(tmp_path, GOOD1 + b"\r\n" + GOOD2 + b"\n")
    rows, findings = run_reader("security_events", home, "security-events.jsonl")
    assert [(r["offset_bytes"], r["size_bytes"], r["label"]) for r in rows] == [(0, 80, "a"), (80, 75, "b")]
    assert findings == []


def test_incremental_start_offset_keeps_offsets_and_line_numbers_absolute(tmp_path: Path) -> None:
    home = _write(tmp_path, GOOD1 + b"\n" + b"junk\n" + GOOD2 + b"\n" + GOOD1 + b"\n")
    rows, findings = run_reader("security_events", home, "security-events.jsonl", start_offset=84)
    assert [(r["line_no"], r["offset_bytes"], r["size_bytes"], r["label"]) for r in rows] == [
        (3, 84, 75, "b"),
        (4, 159, 79, "a"),
    ]
    assert findings == []  # the junk line lies before start_offset: already reported by the earlier scan


def test_start_offset_at_end_gives_no_rows(tmp_path: Path) -> None:
    home = _write(tmp_path, GOOD1 + b"\n")
    assert run_reader("security_events", home, "security-events.jsonl", start_offset=79) == ([], [])


def test_a_line_longer_than_the_read_chunk_is_one_row(tmp_path: Path) -> None:
    detail = "x" * (3 * 1024 * 1024 + 17)
    line = b'{"ts":"2026-08-24T10:00:00Z","kind":"k","label":"big","detail":"' + detail.encode() + b'"}'
    home = _write(tmp_path, GOOD1 + b"\n" + line + b"\n" + GOOD2 + b"\n")
    rows, findings = run_reader("security_events", home, "security-events.jsonl")
    assert [(r["offset_bytes"], r["size_bytes"], r["label"]) for r in rows] == [
        (0, 79, "a"),
        (79, len(line) + 1, "big"),
        (79 + len(line) + 1, 75, "b"),
    ]
    assert len(rows[1]["detail"]) == 3 * 1024 * 1024 + 17
    assert findings == []


def test_many_rows_are_cut_into_batches_of_at_most_65536(tmp_path: Path) -> None:
    import importlib

    from vakaudit.artifacts._base import ReadContext

    n = 70_000
    (tmp_path / "routing-evidence.jsonl").write_bytes(b'{"latency_ms":1}\n' * n)
    kind = importlib.import_module("vakaudit.artifacts.routing_evidence").KIND
    ctx = ReadContext(home=tmp_path, rel_path="routing-evidence.jsonl", home_scope="", session_id=None)
    sizes = [b.num_rows for b in kind.reader(ctx)]
    assert sizes == [65_536, n - 65_536]


def test_values_of_the_wrong_json_type_are_coerced_or_nulled(tmp_path: Path) -> None:
    (tmp_path / "routing-evidence.jsonl").write_bytes(
        b'{"ts":"2026-08-24T09:15:02Z","provider":123,"latency_ms":"fast","outcome":true}\n'
        b'{"ts":"not a time","provider":"p","latency_ms":12.0,"model":null}\n'
        b'{"ts":"2026-08-24T09:15:02.123456789+00:00","latency_ms":true}\n'
        b'{"ts":"2300-01-01T00:00:00Z","latency_ms":18446744073709551615}\n'
    )
    rows, findings = run_reader("routing_evidence", tmp_path, "routing-evidence.jsonl")
    assert findings == []
    assert [(r["provider"], r["outcome"], r["latency_ms"], r["ts_at"]) for r in rows] == [
        ("123", "true", None, utc(2026, 8, 24, 9, 15, 2)),  # a number where a string goes: its JSON text
        ("p", None, 12, None),  # an integral float is an integer; an unparseable timestamp is null
        (None, None, None, utc(2026, 8, 24, 9, 15, 2, 123456)),  # a bool is not an integer; ns truncated
        (None, None, None, utc(2300, 1, 1)),  # beyond int64 is null; a year beyond 2262 still parses
    ]


def test_typed_columns_all_well_typed_take_the_fast_path_with_the_same_values(tmp_path: Path) -> None:
    (tmp_path / "routing-evidence.jsonl").write_bytes(
        b'{"ts":"2026-08-24T09:15:02+02:00","provider":"a","latency_ms":1,"outcome":"success"}\n'
        b'{"ts":"2026-08-24T09:15:02.5Z","provider":null,"latency_ms":-3}\n'
    )
    rows, _ = run_reader("routing_evidence", tmp_path, "routing-evidence.jsonl")
    assert [(r["provider"], r["latency_ms"], r["ts_at"]) for r in rows] == [
        ("a", 1, utc(2026, 8, 24, 7, 15, 2)),
        (None, -3, utc(2026, 8, 24, 9, 15, 2, 500000)),
    ]
