"""Small side files are read into one bundle per kind per task; their rows must be each file's own.

A home with many delivery jobs (one JSON document per line, job id in the file name), activity logs
in two scopes (one small, one read alone because it is big) and checkpoints is scanned; every row is
checked against the bytes of its file (line numbers, offsets, sizes, per-file columns). A bundle that
fails to build its rows (a bug) must cost nothing: its files are then read one by one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vakaudit.artifacts import _jsonl, _rowspec, checkpoints
from vakaudit.scan import scan_home

SID = "01920d6e-8f1a-7c3b-9a55-2f0e6b7d4c10"


def _home(root: Path) -> Path:
    home = root / "home"
    jobs = home / "delivery" / "jobs"
    jobs.mkdir(parents=True)
    for i in range(40):
        job_id = f"job-{i:03d}"
        states = ["pending", "delivered", "dead_letter"][: i % 3 + 1]
        lines = [
            {"schema_version": 1, "job": {"job_id": job_id, "target": "t"}, "state": s, "attempts": n}
            for n, s in enumerate(states)
        ]
        (jobs / f"{job_id.encode().hex()}.json").write_bytes(
            b"".join(json.dumps(x).encode() + b"\n" for x in lines)
        )
    (jobs / "notes.txt").write_bytes(b"not a job\n")
    vak = home / "agents" / "vak"
    vak.mkdir(parents=True)
    small = [{"ts": f"2026-08-24T09:00:{i:02d}Z", "kind": "tool", "name": f"n{i}"} for i in range(5)]
    (home / "activity-log.jsonl").write_bytes(b"".join(json.dumps(x).encode() + b"\n" for x in small))
    big = [
        {"ts": "2026-08-24T10:00:00Z", "kind": "tool", "name": "x" * 40, "duration_ms": i}
        for i in range(9000)
    ]
    (vak / "activity-log.jsonl").write_bytes(b"".join(json.dumps(x).encode() + b"\n" for x in big))
    assert (vak / "activity-log.jsonl").stat().st_size > _rowspec.BUNDLE_FILE_BYTES
    ckpt = vak / "checkpoints" / SID
    ckpt.mkdir(parents=True)
    for seq in range(1, 4):
        doc = {
            "seq": seq,
            "session_id": SID,
            "files": [{"rel_path": f"f{k}", "content": "QUJD"} for k in range(seq)],
        }
        (ckpt / f"{seq:04d}.json").write_text(json.dumps(doc))
    return home


def _expected_lines(home: Path, rel: str) -> list[tuple[int, int, int]]:
    data = (home / rel).read_bytes()
    out, offset = [], 0
    for n, line in enumerate(data.split(b"\n")[:-1], start=1):
        out.append((n, offset, len(line) + 1))
        offset += len(line) + 1
    return out


def _table_rows(res, table: str) -> list[tuple]:
    return res.duckdb().execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()


def test_rows_of_bundled_files_are_their_own(tmp_path: Path) -> None:
    home = _home(tmp_path)
    res = scan_home(home, out=tmp_path / "out", jobs=1)
    con = res.duckdb()
    got = con.execute(
        "SELECT rel_path, home_scope, file_job_id, line_no, offset_bytes, size_bytes, job_id, attempts "
        "FROM delivery_jobs ORDER BY rel_path, line_no"
    ).fetchall()
    expected = []
    for path in sorted((home / "delivery" / "jobs").glob("*.json")):
        rel = path.relative_to(home).as_posix()
        job_id = bytes.fromhex(path.stem).decode()
        for (n, off, size), line in zip(
            _expected_lines(home, rel), path.read_bytes().splitlines(), strict=True
        ):
            expected.append((rel, "", job_id, n, off, size, job_id, json.loads(line)["attempts"]))
    assert got == expected and len(got) == 14 * 1 + 13 * 2 + 13 * 3  # i % 3 + 1 lines for i < 40
    act = con.execute(
        "SELECT rel_path, home_scope, line_no, offset_bytes, size_bytes FROM activity_log ORDER BY rel_path, line_no"
    ).fetchall()
    big, small = "agents/vak/activity-log.jsonl", "activity-log.jsonl"
    assert act == [(small, "", *x) for x in _expected_lines(home, small)] + [
        (big, "agents/vak", *x) for x in _expected_lines(home, big)
    ]
    ck = con.execute(
        "SELECT rel_path, seq, files_count, entry_index FROM checkpoints ORDER BY rel_path, entry_index"
    ).fetchall()
    d = f"agents/vak/checkpoints/{SID}/"
    assert ck == [(d + "0001.json", 1, 1, 0), (d + "0002.json", 2, 2, 0), (d + "0002.json", 2, 2, 1)] + [
        (d + "0003.json", 3, 3, k) for k in range(3)
    ]
    assert "reader_failed" not in res.findings_by_code()


def test_a_bundle_that_fails_to_build_reads_its_files_one_by_one(tmp_path: Path, monkeypatch) -> None:
    home = _home(tmp_path)
    good = scan_home(home, out=tmp_path / "good", jobs=1)

    def broken(self):
        raise RuntimeError("a bug building many files' rows")

    monkeypatch.setattr(_jsonl.JsonlBundle, "_build", broken)
    monkeypatch.setattr(checkpoints, "_batch", _fail_for_many(checkpoints._batch))
    res = scan_home(home, out=tmp_path / "bad", jobs=1)
    for table in ("delivery_jobs", "activity_log", "checkpoints"):
        assert _table_rows(res, table) == _table_rows(good, table), table
    assert res.findings_by_code() == good.findings_by_code()
    assert res.row_counts == good.row_counts


def _fail_for_many(batch):
    def build(files):
        if len(files) > 1:  # the reader itself builds one file at a time: that still works
            raise RuntimeError("a bug building many files' rows")
        return batch(files)

    return build


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_appended_bundled_file_gives_only_its_new_rows(tmp_path: Path, jobs: int) -> None:
    home = _home(tmp_path)
    out = tmp_path / "out"
    scan_home(home, out=out, jobs=jobs)
    path = home / "delivery" / "jobs" / f"{b'job-000'.hex()}.json"
    more = json.dumps(
        {"schema_version": 1, "job": {"job_id": "job-000"}, "state": "delivered", "attempts": 1}
    )
    with open(path, "ab") as f:
        f.write(more.encode() + b"\n")
    res = scan_home(home, out=out, jobs=jobs)
    assert res.stats.files_appended == 1 and res.stats.bytes_scanned == len(more) + 1
    rel = path.relative_to(home).as_posix()
    rows = (
        res.duckdb()
        .execute(
            "SELECT line_no, offset_bytes, size_bytes, state FROM delivery_jobs WHERE rel_path = ? ORDER BY line_no",
            [rel],
        )
        .fetchall()
    )
    assert rows == [
        (n, off, size, s)
        for (n, off, size), s in zip(_expected_lines(home, rel), ["pending", "delivered"], strict=True)
    ]
