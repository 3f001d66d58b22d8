"""checkpoints: per-entry sizes of snapshot files (base64 and hashed formats), blobs, temp files."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from artifact_kind_helpers import FIXTURES, run_reader, utc

from vakaudit.artifacts._jsonstream import JsonStreamError, LongString, base64_decoded_len, iter_scalars

SID = "01920d6e-8f1a-7c3b-9a55-2f0e6b7d4c10"
HOME = FIXTURES / "checkpoints"
DIR = f"agents/vak/checkpoints/{SID}"


def test_g1_base64_snapshot_gives_one_row_per_file_with_decoded_sizes() -> None:
    rows, findings = run_reader("checkpoints", HOME, f"{DIR}/0003.json")
    assert findings == []
    common = {
        "rel_path": f"{DIR}/0003.json",
        "home_scope": DIR,
        "session_id": SID,
        "seq": 3,
        "created_at": utc(2026, 8, 24, 9, 14, 57, 900000),
        "format": "base64",
        "label_bytes": 27,  # "fix the failing parser test"
        "files_count": 2,
        "observed_count": 3,
        "snapshot_content_bytes": 2 + 14,  # "hi" and "fn parse() {}\n"
        "hash": None,
        "mtime_ns": None,
    }
    assert rows == [
        {**common, "entry_index": 0, "file_rel_path": "README.md", "content_bytes": 2, "encoded_bytes": 4},
        {
            **common,
            "entry_index": 1,
            "file_rel_path": "src/parser.rs",
            "content_bytes": 14,
            "encoded_bytes": 20,
        },
    ]


def test_later_hashed_manifest_is_recognised() -> None:
    rows, findings = run_reader("checkpoints", HOME, f"{DIR}/0004.json")
    assert findings == []
    assert [
        (
            r["format"],
            r["seq"],
            r["label_bytes"],
            r["file_rel_path"],
            r["content_bytes"],
            r["encoded_bytes"],
            r["hash"],
            r["mtime_ns"],
            r["observed_count"],
        )
        for r in rows
    ] == [("hashed", 4, 2, "src/parser.rs", 14, None, "obj_3f2a", 1787554800000000000, 1)]


def test_snapshot_without_files_still_gives_one_row() -> None:
    rows, _ = run_reader("checkpoints", HOME, f"{DIR}/0005.json")
    assert [
        (r["seq"], r["entry_index"], r["files_count"], r["observed_count"], r["snapshot_content_bytes"])
        for r in rows
    ] == [(5, None, 0, 0, 0)]


def test_blob_is_sized_and_temp_file_gives_no_rows() -> None:
    rows, _ = run_reader("checkpoints", HOME, "agents/vak/checkpoints/blobs/9f2c4e")
    assert [(r["format"], r["hash"], r["content_bytes"]) for r in rows] == [("blob", "9f2c4e", 14)]
    assert run_reader("checkpoints", HOME, f"{DIR}/.0006.tmp") == ([], [])


def test_multi_megabyte_content_is_measured_not_loaded(tmp_path: Path) -> None:
    payload = bytes(range(256)) * (12 * 1024 + 1)  # 3 145 984 bytes
    doc = (
        b'{"seq":7,"session_id":"s","created_at":"2026-08-24T10:00:00Z","label":"big","files":['
        b'{"rel_path":"blob.bin","content":"' + base64.b64encode(payload) + b'"}],"observed":["blob.bin"]}'
    )
    (tmp_path / "0007.json").write_bytes(doc)
    rows, findings = run_reader("checkpoints", tmp_path, "0007.json")
    assert findings == []
    assert [(r["file_rel_path"], r["content_bytes"], r["encoded_bytes"]) for r in rows] == [
        ("blob.bin", 3_145_984, 4 * ((3_145_984 + 2) // 3))
    ]


def test_truncated_snapshot_keeps_entries_before_the_fault_and_reports_it(tmp_path: Path) -> None:
    doc = b'{"seq":8,"files":[{"rel_path":"a","content":"aGk="},{"rel_path":"b","content":"aG'
    (tmp_path / "0008.json").write_bytes(doc)
    rows, findings = run_reader("checkpoints", tmp_path, "0008.json")
    assert [(r["file_rel_path"], r["content_bytes"]) for r in rows] == [("a", 2), ("b", None)]
    assert [(f.code, f.offset_bytes) for f in findings] == [("sidecar_unparseable_row", len(doc))]


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (
            b'{"a":[1,{"b":"x"}],"c":{},"d":[]}',
            [(("a", 0), 1), (("a", 1, "b"), "x"), (("c",), {}), (("d",), [])],
        ),
        (b" [ true , null , -2.5e3 ] ", [((0,), True), ((1,), None), ((2,), -2500.0)]),
        (b'{"k\\"ey":"v\\u00e9\\n"}', [(('k"ey',), "v\u00e9\n")]),
    ],
)
def test_stream_scanner_paths(doc: bytes, expected: list) -> None:
    assert list(iter_scalars(io.BytesIO(doc))) == expected


def test_stream_scanner_long_strings_and_errors() -> None:
    got = list(iter_scalars(io.BytesIO(b'{"c":"QUJDRA=="}'), cap=4))
    assert got == [(("c",), LongString(raw_len=8, has_escape=False, tail=b"QUJDRA=="))]
    assert base64_decoded_len(got[0][1]) == 4  # "ABCD"
    for bad in (b'{"a":1', b'{"a":}', b'{"a":1} x', b"", b'{"a":"abc'):
        with pytest.raises(JsonStreamError):
            list(iter_scalars(io.BytesIO(bad)))
