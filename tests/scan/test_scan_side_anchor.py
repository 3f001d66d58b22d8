"""The rescan anchor of an append-only side file: its first 4 KiB and whether it ends in LF.

The anchor is taken from the descriptor the reader read (the file is opened once per scan); these
tests check, against hand-written bytes, that a rescan still reads only what was appended, detects a
rewritten head, and rereads in full a file whose scanned part did not end in LF.
"""

from __future__ import annotations

import json
from pathlib import Path

from vakaudit.scan import scan_home

LOG = "agents/vak/activity-log.jsonl"


def _line(i: int, name: str = "read_file") -> bytes:
    return json.dumps({"ts": f"2026-08-24T09:14:{i:02d}Z", "kind": "tool", "name": name}).encode() + b"\n"


def _home(root: Path, data: bytes) -> Path:
    home = root / "home"
    (home / "agents/vak").mkdir(parents=True)
    (home / LOG).write_bytes(data)
    return home


def _rows(res) -> list[tuple[int, int, int, str | None]]:
    t = res.table("activity_log").sort_by("line_no")
    return list(
        zip(
            t["line_no"].to_pylist(),
            t["offset_bytes"].to_pylist(),
            t["size_bytes"].to_pylist(),
            t["name"].to_pylist(),
            strict=True,
        )
    )


def _violations(res) -> list[str]:
    return [f["message"] for f in res.table("findings").to_pylist() if f["code"] == "append_only_violation"]


def test_appended_lines_are_read_alone(tmp_path: Path) -> None:
    first = b"".join(_line(i) for i in range(3))
    home = _home(tmp_path, first)
    out = tmp_path / "out"
    scan_home(home, out=out, jobs=1)
    more = _line(3, "write_file") + _line(4)
    with open(home / LOG, "ab") as f:
        f.write(more)
    res = scan_home(home, out=out, jobs=1)
    assert res.stats.files_appended == 1 and res.stats.bytes_scanned == len(more)
    # the head check (first 4 KiB of the old bytes), the old bytes again to count their lines, the
    # appended bytes and the new anchor's head
    assert res.stats.bytes_read == len(first) + len(first) + len(more) + len(first + more)
    assert _violations(res) == []
    sizes = [len(x) for x in (_line(0), _line(1), _line(2), _line(3, "write_file"), _line(4))]
    offsets = [sum(sizes[:i]) for i in range(5)]
    assert _rows(res) == [
        (i + 1, offsets[i], sizes[i], "write_file" if i == 3 else "read_file") for i in range(5)
    ]


def test_a_rewritten_head_is_detected_and_the_file_reread(tmp_path: Path) -> None:
    data = b"".join(_line(i) for i in range(3))
    home = _home(tmp_path, data)
    out = tmp_path / "out"
    scan_home(home, out=out, jobs=1)
    rewritten = data.replace(b"read_file", b"edit_file", 1)  # same size, first line changed
    assert len(rewritten) == len(data)
    (home / LOG).write_bytes(rewritten + _line(3))  # grown, so it looks like an append by size
    res = scan_home(home, out=out, jobs=1)
    assert _violations(res) == [
        "append-only file was rewritten since the last scan (its first bytes changed); rescanned from byte 0"
    ]
    assert res.stats.files_full == 1
    assert [r[3] for r in _rows(res)] == ["edit_file", "read_file", "read_file", "read_file"]


def test_a_head_changed_past_the_last_scan_is_not_a_violation(tmp_path: Path) -> None:
    # the anchor covers the scanned bytes only; this file is shorter than 4 KiB
    data = _line(0)
    home = _home(tmp_path, data)
    out = tmp_path / "out"
    scan_home(home, out=out, jobs=1)
    with open(home / LOG, "ab") as f:
        f.write(_line(1))
    res = scan_home(home, out=out, jobs=1)
    assert _violations(res) == [] and res.stats.files_appended == 1
    assert [r[0] for r in _rows(res)] == [1, 2]


def test_a_file_without_a_final_lf_is_reread_in_full(tmp_path: Path) -> None:
    whole = _line(0) + _line(1)
    home = _home(tmp_path, whole[:-5])  # the second line still being written
    out = tmp_path / "out"
    first = scan_home(home, out=out, jobs=1)
    assert first.findings_by_code().get("torn_last_line") == 1
    (home / LOG).write_bytes(whole)  # the write completed
    res = scan_home(home, out=out, jobs=1)
    assert res.stats.files_full == 1 and res.stats.files_appended == 0
    assert res.stats.bytes_scanned == len(whole)
    assert _violations(res) == [] and "torn_last_line" not in res.findings_by_code()
    assert _rows(res) == [(1, 0, len(_line(0)), "read_file"), (2, len(_line(0)), len(_line(1)), "read_file")]


def test_a_long_head_is_anchored_on_its_first_4_kib(tmp_path: Path) -> None:
    lines = [_line(i % 60) for i in range(200)]  # ~13 KB: the last byte lies past the head
    data = b"".join(lines)
    assert len(data) > 4096
    home = _home(tmp_path, data)
    out = tmp_path / "out"
    scan_home(home, out=out, jobs=1)
    with open(home / LOG, "ab") as f:
        f.write(_line(1))
    res = scan_home(home, out=out, jobs=1)
    assert _violations(res) == [] and res.stats.bytes_scanned == len(_line(1))
    # head check + line count of the old bytes + appended bytes + new anchor (4 KiB head, then the last
    # byte read alone)
    assert res.stats.bytes_read == 4096 + len(data) + len(_line(1)) + 4096 + 1
    # a byte changed past the first 4 KiB is not seen by the head check (the anchor is the head)
    changed = bytearray((home / LOG).read_bytes())
    changed[5000] = ord("x") if changed[5000] != ord("x") else ord("y")
    (home / LOG).write_bytes(bytes(changed) + _line(2))
    res = scan_home(home, out=out, jobs=1)
    assert res.stats.files_appended == 1 and _violations(res) == []
    changed[10] = ord("Q")  # and one inside them is
    (home / LOG).write_bytes(bytes(changed) + _line(2) + _line(3))
    res = scan_home(home, out=out, jobs=1)
    assert res.stats.files_full == 1 and len(_violations(res)) == 1


def test_an_append_to_a_large_log_reads_only_the_new_bytes(tmp_path: Path) -> None:
    # a log over the bundling size is read alone; its state keeps the line count, so an append reads
    # the 4 KiB head check, the new bytes and the new anchor, and numbers the new rows on from it
    lines = [_line(i % 60) for i in range(12_000)]  # ~0.9 MB
    data = b"".join(lines)
    home = _home(tmp_path, data)
    out = tmp_path / "out"
    first = scan_home(home, out=out, jobs=1)
    assert first.table("activity_log").num_rows == 12_000
    with open(home / LOG, "ab") as f:
        f.write(_line(7, "edit_file") + _line(8))
    res = scan_home(home, out=out, jobs=1)
    assert _violations(res) == [] and res.stats.files_appended == 1
    new = len(_line(7, "edit_file") + _line(8))
    assert res.stats.bytes_scanned == new
    assert res.stats.bytes_read == 4096 + new + 4096 + 1
    assert _rows(res)[-2:] == [
        (12_001, len(data), len(_line(7, "edit_file")), "edit_file"),
        (12_002, len(data) + len(_line(7, "edit_file")), len(_line(8)), "read_file"),
    ]


def test_an_append_without_a_recorded_line_count_counts_the_old_lines(tmp_path: Path) -> None:
    # a manifest written before line counts were recorded: the old bytes are counted once more
    lines = [_line(i % 60) for i in range(12_000)]
    data = b"".join(lines)
    home = _home(tmp_path, data)
    out = tmp_path / "out"
    scan_home(home, out=out, jobs=1)
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["files"][LOG]["state"]["lines"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    with open(home / LOG, "ab") as f:
        f.write(_line(9))
    res = scan_home(home, out=out, jobs=1)
    assert res.stats.bytes_read == 4096 + len(data) + len(_line(9)) + 4096 + 1
    assert _rows(res)[-1] == (12_001, len(data), len(_line(9)), "read_file")
