"""Many small JSONL files read into one ``JsonlBundle`` give the rows the reference reader gives per file.

The bundle reads each file like ``read_jsonl`` does but builds Arrow for many files at once (per-file
columns repeated per run of rows, line numbers and offsets listed across files). Its tables must hold
exactly the rows of the line-at-a-time reference (``read_jsonl(fast=False)``) over each file in turn:
same values, types, findings, per-file row counts and end offsets, wherever its batches are cut.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pytest
from jsonl_compare import assert_tables_equal
from test_jsonl_fast_path import SPEC_MODULES, TRICKY_LINES, _random_file, _spec

from vakaudit.artifacts import _lines, _rowspec
from vakaudit.artifacts._base import ReadContext
from vakaudit.artifacts._jsonl import JsonlBundle, read_jsonl
from vakaudit.artifacts._rowspec import RowSpec
from vakaudit.findings import Finding


def _ctx(home: Path, rel: str, found: list[Finding], start: int = 0) -> ReadContext:
    return ReadContext(home, rel, "agents/vak", None, start_offset=start, emit=found.append)


def _reference(home: Path, rels: list[tuple[str, int]], spec: RowSpec):
    found: list[Finding] = []
    batches: list[pa.RecordBatch] = []
    per_file = []
    for rel, start in rels:
        got = [b for b in read_jsonl(_ctx(home, rel, found, start), spec, fast=False) if b.num_rows]
        rows = sum(b.num_rows for b in got)
        end = start
        if rows:
            last = got[-1]
            end = last["offset_bytes"][-1].as_py() + last["size_bytes"][-1].as_py()
        per_file.append((rows, end))
        batches += got
    return pa.Table.from_batches(batches, schema=spec.schema), found, per_file


def _bundled(home: Path, rels: list[tuple[str, int]], spec: RowSpec, flush: int, native: bool):
    found: list[Finding] = []
    bundle = JsonlBundle(spec, flush, native=native)
    per_file = []
    batches = []
    for rel, start in rels:  # as the scan does: the rows are taken whenever the bundle is full
        per_file.append(bundle.add(_ctx(home, rel, found, start)))
        if bundle.full:
            batches += bundle.batches()
    batches += bundle.batches()
    assert bundle.batches() == []  # handed out once
    for b in batches:
        assert b.schema.equals(spec.schema)
    return pa.Table.from_batches(batches, schema=spec.schema), found, per_file, len(batches)


def assert_bundle_same(
    home: Path, rels: list[tuple[str, int]], spec: RowSpec, flush: int, native: bool
) -> int:
    ref, found_r, files_r = _reference(home, rels, spec)
    got, found_b, files_b, n_batches = _bundled(home, rels, spec, flush, native)
    assert files_b == files_r
    assert_tables_equal(got, ref)
    assert found_b == found_r
    return n_batches


def _files(home: Path, rng: random.Random) -> list[tuple[str, int]]:
    """Small files of every sort: tricky lines, random ones, empty, unterminated, CRLF."""
    home.mkdir(parents=True, exist_ok=True)
    data = {
        "tricky.jsonl": b"\n".join(TRICKY_LINES) + b"\n",
        "empty.jsonl": b"",
        "torn.jsonl": b'{"kind":"a","ts":"2026-08-24T10:00:00Z"}\n{"kind":"b","ts":"2026-08',
        "crlf.jsonl": b'{"kind":"a","duration_ms":3}\r\n{"kind":"b","duration_ms":4}\r\n',
        "one.jsonl": b'{"kind":"a","ts":"2026-08-24T10:00:00.5Z","name":"n"}\n',
        "unterminated-ok.jsonl": b'{"kind":"a"}',
    }
    for i in range(8):
        data[f"r{i}.jsonl"] = _random_file(rng)
    names = list(data)
    rng.shuffle(names)
    for name in names:
        (home / name).write_bytes(data[name])
    return [(name, 0) for name in names]


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("flush", [1, 700, 1 << 22])
def test_bundle_equals_the_reference_for_every_jsonl_kind(tmp_path: Path, flush: int, native: bool) -> None:
    rng = random.Random(flush * 2 + native)
    rels = _files(tmp_path / "home", rng)
    for name in SPEC_MODULES:
        n_batches = assert_bundle_same(tmp_path / "home", rels, _spec(name), flush, native)
        if flush == 1:  # built after every file that has rows
            assert n_batches == len(rels) - 1  # all but the empty file
        elif flush == 1 << 22:
            assert n_batches == 1


@pytest.mark.parametrize("seed", range(4))
def test_bundle_with_tiny_read_chunks_and_appended_files(tmp_path: Path, seed: int, monkeypatch) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(_lines, "CHUNK_BYTES", rng.randint(16, 500))  # lines split across many reads
    rels = _files(tmp_path / "home", rng)
    # a rescan of a grown file starts after its last scanned line: line numbers and offsets stay absolute
    data = (tmp_path / "home" / "tricky.jsonl").read_bytes()
    start = data.index(b"\n", len(data) // 2) + 1
    rels.insert(rng.randint(0, len(rels)), ("tricky.jsonl", start))
    for name in SPEC_MODULES:
        assert_bundle_same(tmp_path / "home", rels, _spec(name), rng.choice([1, 300, 1 << 22]), seed % 2 == 0)


def test_per_file_columns_follow_each_file_across_a_batch(tmp_path: Path) -> None:
    """delivery_jobs: the job id decoded from each file name, on each of that file's rows."""
    spec = _spec("delivery_jobs")
    jobs = tmp_path / "delivery" / "jobs"
    jobs.mkdir(parents=True)
    rels = []
    expected = []
    for i, job_id in enumerate(["job-a", "job-é", "job-c", "job-d"]):
        name = job_id.encode().hex() + ".json"
        lines = [
            {"schema_version": 1, "job": {"job_id": job_id}, "state": s}
            for s in ["pending", "delivered"][: i % 2 + 1]
        ]
        (jobs / name).write_bytes(b"".join(json.dumps(x).encode() + b"\n" for x in lines))
        rels.append((f"delivery/jobs/{name}", 0))
        expected += [(f"delivery/jobs/{name}", job_id, n + 1, x["state"]) for n, x in enumerate(lines)]
    (jobs / "zz.json").write_bytes(b'{"state":"pending"}\n')  # a name that is not hex: no job id
    rels.append(("delivery/jobs/zz.json", 0))
    expected.append(("delivery/jobs/zz.json", None, 1, "pending"))
    found: list[Finding] = []
    bundle = JsonlBundle(spec)
    assert [bundle.add(_ctx(tmp_path, rel, found)) for rel, _ in rels][0][0] == 1
    (batch,) = bundle.batches()
    assert found == []
    assert (
        list(
            zip(
                batch["rel_path"].to_pylist(),
                batch["file_job_id"].to_pylist(),
                batch["line_no"].to_pylist(),
                batch["state"].to_pylist(),
                strict=True,
            )
        )
        == expected
    )
    assert set(batch["home_scope"].to_pylist()) == {"agents/vak"}
    assert_bundle_same(tmp_path, rels, spec, 1 << 22, True)


def test_kind_readers_bundle_their_small_files_with_their_file_filter(tmp_path: Path) -> None:
    from vakaudit.artifacts import get_kind

    bundled = get_kind("cost_log").reader.bundle
    assert bundled.file_bytes == _rowspec.BUNDLE_FILE_BYTES
    (tmp_path / "cost-log.jsonl").write_bytes(b'{"model":"m","usd":0.5}\n')
    (tmp_path / "cost-log.jsonl.compact.tmp").write_bytes(b'{"model":"m","usd":0.5}\n')
    bundle = bundled.new()
    found: list[Finding] = []
    assert bundle.add(_ctx(tmp_path, "cost-log.jsonl", found)) == (1, 24)
    assert bundle.add(_ctx(tmp_path, "cost-log.jsonl.compact.tmp", found)) == (0, 0)  # the temp file: no rows
    (batch,) = bundle.batches()
    assert batch["rel_path"].to_pylist() == ["cost-log.jsonl"] and batch["usd"].to_pylist() == [0.5]


class _FailingRaw:
    """A real file whose reads fail after ``ok`` bytes (a disk error half-way through a file)."""

    def __init__(self, path: Path, ok: int) -> None:
        self._f = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by __exit__
        self._ok = ok

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()

    def __getattr__(self, name: str):
        return getattr(self._f, name)

    def _check(self) -> None:
        if self._f.tell() >= self._ok:
            raise OSError(5, "Input/output error")

    def read(self, n: int = -1) -> bytes:
        self._check()
        return self._f.read(n)

    def readinto(self, b) -> int:
        self._check()
        return self._f.readinto(b)


class _FailingContext(ReadContext):
    def open(self):  # type: ignore[override]
        return _FailingRaw(self.path, 600)


@pytest.mark.parametrize("native", [True, False])
def test_a_file_failing_half_way_leaves_no_rows(tmp_path: Path, monkeypatch, native: bool) -> None:
    monkeypatch.setattr(_lines, "CHUNK_BYTES", 256)
    spec = _spec("activity_log")
    line = b'{"kind":"tool","name":"read_file","ts":"2026-08-24T10:00:00Z"}\n'
    for name in ("a.jsonl", "b.jsonl", "c.jsonl"):
        (tmp_path / name).write_bytes(line * 40)  # 2.6 KB: many chunks of 256 bytes
    found: list[Finding] = []
    bundle = JsonlBundle(spec, native=native)
    assert bundle.add(_ctx(tmp_path, "a.jsonl", found)) == (40, 40 * len(line))
    with pytest.raises(OSError):
        bundle.add(_FailingContext(tmp_path, "b.jsonl", "", None))
    assert bundle.add(_ctx(tmp_path, "c.jsonl", found)) == (40, 40 * len(line))
    (batch,) = bundle.batches()
    assert batch["rel_path"].to_pylist() == ["a.jsonl"] * 40 + ["c.jsonl"] * 40
    assert batch["line_no"].to_pylist() == list(range(1, 41)) * 2
    assert batch["offset_bytes"].to_pylist() == [i * len(line) for i in range(40)] * 2
