"""The line digests ``scan`` hands from its compiled scanner to the ledger verdict.

The scanner's ``entries`` rows carry each line's SHA-256 (``line_sha256``); the verdict's compiled
pass takes a line's digest from them instead of hashing the line again. These tests hold the
digests against hashlib over the file's lines, and show the verdict really reads them (a wrong one
is a broken chain at the next line), from any first line and with gaps.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import vakaudit.artifacts.session_ledger as sl
import vakaudit.ledger.verdict as fl
from vakaudit.findings import FindingCode
from vakaudit.ledger.chain import LineDigests

ROOT = Path(__file__).resolve().parents[2]
LEDGER = next(p for p in sorted((ROOT / "sample_homes/tiny/agents/vak/sessions").rglob("*.jsonl"))
              if p.stat().st_size > 20_000)  # fmt: skip


def scanned_digests(path: Path, batch_rows: int = 4096) -> LineDigests:
    digests = LineDigests()
    s = sl.LedgerScanner("agents/vak/sessions/ws/s1.jsonl", digests=digests, batch_rows=batch_rows)
    with path.open("rb") as f:
        for _ in s.scan(f, f.seek(0, 2)):
            pass
    return digests


def hashlib_digests(path: Path) -> list[bytes]:
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    return [hashlib.sha256(line).hexdigest().encode() for line in lines[:-1]]


def test_the_scanner_hands_over_the_sha256_of_the_lines_it_vouched_for() -> None:
    # a line the compiled scanner leaves to the reference reader (here a `work` entry) is unknown:
    # zero bytes, which the verdict hashes itself
    assert sl._scan_entries is not None  # the compiled scanner is built
    want = hashlib_digests(LEDGER)
    for batch_rows in (4096, 7):  # one batch, and many (the rows leave the column buffers between runs)
        d = scanned_digests(LEDGER, batch_rows)
        got = [bytes(d.hexes[64 * i : 64 * i + 64]) for i in range(d.lines)]
        assert d.first == 1 and d.lines == len(want)
        assert all(g in (w, bytes(64)) for g, w in zip(got, want, strict=True))
        assert sum(g == w for g, w in zip(got, want, strict=True)) >= 0.9 * len(want)


def test_the_verdict_takes_the_digests_it_is_given(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    path.write_bytes(LEDGER.read_bytes())
    clean = fl.verify_ledger(path, "s1.jsonl")
    d = scanned_digests(path)
    assert fl.verify_ledger(path, "s1.jsonl", known=d).to_dict() == clean.to_dict()
    # a digest that is not line 5's: line 6's prev_hash no longer attests what the verdict was told
    # line 5 is, which is how an edited line 5 reads
    assert bytes(d.hexes[64 * 4 : 64 * 5]) != bytes(64)
    d.hexes[64 * 4 : 64 * 5] = b"0" * 64
    told = fl.verify_ledger(path, "s1.jsonl", known=d)
    assert not any(f.code is FindingCode.LINE_MODIFIED for f in clean.findings)
    assert [f.line_no for f in told.findings if f.code is FindingCode.LINE_MODIFIED] == [5]


@pytest.mark.parametrize("first", [1, 3, 40])
def test_digests_from_any_line_on_and_with_gaps(first: int, tmp_path: Path) -> None:
    # an append-mode scan hands over the lines from where it started; lines it did not vouch for are
    # zero bytes (hashed by the verdict itself), and so are the lines past a limit
    path = tmp_path / "s1.jsonl"
    path.write_bytes(LEDGER.read_bytes())
    want = hashlib_digests(path)
    clean = fl.verify_ledger(path, "s1.jsonl").to_dict()
    d = LineDigests(limit=len(want) // 2)
    d.add(first, b"".join(want[first - 1 : first + 1]))
    d.add(first + 4, b"".join(want[first + 3 :]))  # lines first + 2 and + 3 unknown
    assert d.first == first
    assert bytes(d.hexes[128:256]) == bytes(128)
    assert d.lines == len(want) // 2
    assert fl.verify_ledger(path, "s1.jsonl", known=d).to_dict() == clean
