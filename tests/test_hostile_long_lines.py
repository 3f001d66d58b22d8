"""A file with no newline (sparse, 1 GiB) and one huge line: every command reads a bounded prefix.

Each command runs as the only child of a fresh runner process, which reports that child's peak RSS
from ``RUSAGE_CHILDREN`` (so no earlier process of the test session counts).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import duckdb
import pytest

from tests.hostile_homes import LEDGER, REPO, SESSIONS, tiny_copy

SPARSE = SESSIONS / "019fc57b-5555-7066-a68c-cce18aef18b7.jsonl"
LIMIT_KIB = 500 * 1024  # each command reached 1-4 GiB before


_RUNNER = (
    "import resource, subprocess, sys; r = subprocess.run([sys.executable, '-m', 'vakaudit', *sys.argv[2:]], "
    "stdout=open(sys.argv[1], 'wb')); "
    "sys.stderr.write('peak_kib=%d rc=%d' % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode))"
)


def _run(*args: str, cwd) -> subprocess.CompletedProcess:
    """The command's exit code, its stdout and, in ``peak_kib``, its peak RSS."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = cwd / "stdout.bin"
    r = subprocess.run([sys.executable, "-c", _RUNNER, str(out), *args], env=env, cwd=cwd, capture_output=True,
                       timeout=1200)  # fmt: skip
    tail = r.stderr.decode().rsplit("peak_kib=", 1)[1]
    r.peak_kib, rc = (int(x) for x in tail.replace("rc=", "").split())
    r.returncode = rc
    r.stdout = out.read_bytes()
    return r


@pytest.mark.slow
def test_sparse_1_gib_ledger_without_newline_is_line_too_long_in_bounded_memory(tmp_path) -> None:
    home = tiny_copy(tmp_path / "home")
    with open(home / SPARSE, "wb") as f:
        f.truncate(1 << 30)  # 1 GiB of zeros, no LF, no disk blocks
    commands = {
        "scan": ("scan", str(home), "--out", str(tmp_path / "scan"), "-q", "-j", "1"),
        "verify": ("verify", str(home), "--json"),
        "replay": ("replay", str(home), "--json"),
        "timeline": ("timeline", str(home), "-o", str(tmp_path / "tl.jsonl")),
        "seal": ("seal", str(home), "-o", str(tmp_path / "seal.json")),
    }
    results = {}
    for name, args in commands.items():
        r = _run(*args, cwd=tmp_path)
        assert r.returncode in (0, 1), (name, r.stderr.decode()[-2000:])
        results[name] = r
        assert r.peak_kib < LIMIT_KIB, name
    rel = SPARSE.as_posix()
    verify = [f for f in json.loads(results["verify"].stdout)["findings"] if f["rel_path"] == rel]
    assert [(f["code"], f["line_no"], f["offset_bytes"]) for f in verify] == [("line_too_long", 1, 0)]
    scan = duckdb.sql(f"select code, line_no, offset_bytes from '{tmp_path}/scan/findings/*.parquet' "
                      f"where rel_path = '{rel}'").fetchall()  # fmt: skip
    assert scan == [("line_too_long", 1, 0)]
    seal = json.loads((tmp_path / "seal.json").read_text())
    rec = next(r for r in seal["files"] if r["rel_path"] == rel)
    assert rec["size_bytes"] == 1 << 30 and rec["line_count"] == 1


@pytest.mark.slow
def test_one_200_mb_line_is_line_too_long_at_the_same_line_in_scan_and_verify(tmp_path) -> None:
    home = tiny_copy(tmp_path / "home")
    lines = (home / LEDGER).read_bytes().split(b"\n")
    off = sum(len(x) + 1 for x in lines[:3])
    big = b'{"id":"big","kind":"message","data":{"text":"' + b"a" * (200 << 20) + b'"}}'
    (home / LEDGER).write_bytes(b"\n".join([*lines[:3], big, *lines[3:]]))
    for name, args in {
        "scan": ("scan", str(home), "--out", str(tmp_path / "scan"), "-q", "-j", "1"),
        "verify": ("verify", str(home), "--json"),
        "replay": ("replay", str(home), "--export", str(tmp_path / "x.jsonl")),
        "timeline": ("timeline", str(home), "-o", str(tmp_path / "tl.jsonl")),
    }.items():
        r = _run(*args, cwd=tmp_path)
        assert r.returncode in (0, 1), (name, r.stderr.decode()[-2000:])
        if name == "verify":
            verify_out = json.loads(r.stdout)
        assert r.peak_kib < LIMIT_KIB, name
    rel = LEDGER.as_posix()
    want = [("line_too_long", 4, off)]
    verify = [(f["code"], f["line_no"], f["offset_bytes"]) for f in verify_out["findings"]
              if f["rel_path"] == rel and f["code"] == "line_too_long"]  # fmt: skip
    assert verify == want
    scan = duckdb.sql(f"select code, line_no, offset_bytes from '{tmp_path}/scan/findings/*.parquet' "
                      f"where rel_path = '{rel}' and code = 'line_too_long'").fetchall()  # fmt: skip
    assert scan == want
