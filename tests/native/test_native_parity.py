"""The compiled kernel behind the ledger reader gives exactly what the reference path gives.

Every session ledger of the committed sample homes, vak's own samples, and mutated copies of them
(bytes changed, lines swapped, duplicated, cut, CR and BOM added) is read both ways
(:class:`~vakaudit.ledger.records.LedgerReader`'s ``native`` parameter): every record (a compiled run
taken line by line), the ``entries`` record batches, the ``entry_fields`` accounting, the resume state
and every finding of the scanner, every field and finding of :func:`verify_ledger`, and what
``SessionLog`` opens, must be identical.
"""

from __future__ import annotations

import functools
import os
import random
from pathlib import Path

import pyarrow as pa
import pytest

import vakaudit.artifacts.session_ledger as sl
import vakaudit.ledger.records as records
import vakaudit.ledger.verdict as fl
from vakaudit.ledger import SessionLog
from vakaudit.ledger.records import LedgerReader, RecordRun

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted(
    p
    for base in (ROOT / "sample_homes", ROOT.parent / "shared" / "vak-samples")
    for p in base.rglob("*.jsonl")
    if p.is_file() and not p.is_symlink() and ("sessions" in p.parts or p.name == "ledger.jsonl")
)


def mutations(data: bytes, seed: int) -> dict[str, bytes]:
    rnd = random.Random(seed)
    lines = data.split(b"\n")
    out = {"as is": data}
    if len(data) > 10:
        for _ in range(4):
            i = rnd.randrange(len(data))
            out[f"byte {i} changed"] = data[:i] + bytes([data[i] ^ (1 << rnd.randrange(8))]) + data[i + 1 :]
        i = rnd.randrange(len(data))
        out["cut"] = data[:i]
        out["cr"] = data.replace(b"}\n", b"}\r\n", 2)
        out["bom"] = b"\xef\xbb\xbf" + data
    if len(lines) > 3:
        a, b = 1, rnd.randrange(2, len(lines) - 1)
        sw = list(lines)
        sw[a], sw[b] = sw[b], sw[a]
        out["swapped"] = b"\n".join(sw)
        out["duplicated"] = b"\n".join(lines[:2] + lines[1:])
        out["blank inserted"] = b"\n".join(lines[:2] + [b"   "] + lines[2:])
    return out


def cases() -> list[tuple[Path, int]]:
    return [(p, i) for i, p in enumerate(SAMPLES)]


def scan_both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple:
    results = []
    for native in (True, False):
        with monkeypatch.context() as m:
            if not native:  # the reference reader, rows in Python lists
                m.setattr(sl, "_EntryCols", None)
            found: list = []
            s = sl.LedgerScanner("agents/vak/sessions/ws/s1.jsonl", emit=found.append)
            with path.open("rb") as f:
                end = f.seek(0, 2)
                batches = list(s.scan(f, end, native=None if native else False))
            table = pa.Table.from_batches(batches, schema=sl.ENTRIES_SCHEMA)
            results.append((table, s.fields_table(), s.state.to_dict(), found))
    return tuple(results)


def _collector(calls: list[tuple]):  # noqa: ANN202
    def on_entry(*args: object) -> None:
        calls.append(args)

    return on_entry


def verify_both(path: Path) -> tuple:
    results = []
    for native in (True, False):
        calls: list[tuple] = []
        report = fl.verify_ledger(path, "s1.jsonl", on_entry=_collector(calls), native=native).to_dict()
        assert report == fl.verify_ledger(path, "s1.jsonl", native=native).to_dict()  # the callback changes nothing
        results.append((report, calls))
    return tuple(results)


def records_both(path: Path) -> tuple:
    """Every record of the file both ways (a compiled run line by line) and the reader's end state."""
    results = []
    for native in (True, False):
        fd = os.open(path, os.O_RDONLY)
        try:
            reader = LedgerReader(functools.partial(os.read, fd), os.fstat(fd).st_size, native=native)
            recs = []
            runs = 0
            for item in reader:
                runs += type(item) is RecordRun
                for r in item.records() if type(item) is RecordRun else (item,):
                    recs.append((r.line_no, r.offset_bytes, r.size_bytes, bytes(r.raw), r.terminated, r.crlf, r.bom,
                                 r.envelope, r.defect, r.digest, r.chain, r.expected, r.ts_back))  # fmt: skip
        finally:
            os.close(fd)
        results.append((recs, reader.line_count, reader.consumed, reader.ends_with_lf, reader.chain.expected,
                        reader.last_line(), reader.head))  # fmt: skip
        if native and any(r[7] is not None and not r[5] and not r[6] for r in recs):  # an entry in vak's form
            assert runs, "the compiled kernel took no line"
    return tuple(results)


def session_both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple:
    results = []
    for native in (True, False):
        with monkeypatch.context() as m:
            if not native:
                m.setattr(records, "linescan", None)
            try:
                log = SessionLog.open_read_only(path, strict_utf8=False)
            except Exception as exc:  # noqa: BLE001 - the same error both ways is the expectation
                results.append(repr(exc))
                continue
            results.append(([(e.id, e.parent_id, e.ts, e.prev_hash, e.at_turn, e.kind, e.raw) for e in log.entries],
                            log.line_nos, log.warnings, log.tail_hash, log.tail_id))  # fmt: skip
    return tuple(results)


def test_there_are_samples() -> None:
    assert len(SAMPLES) >= 25  # tiny's ledgers, the broken homes', vak's two


@pytest.mark.parametrize(("path", "seed"), cases(), ids=lambda v: v.name if isinstance(v, Path) else str(v))
def test_scan_and_verify_identical(
    path: Path, seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = path.read_bytes()
    for name, variant in mutations(data, seed).items():
        f = tmp_path / "ledger.jsonl"
        f.write_bytes(variant)
        r1, r2 = records_both(f)
        assert r1 == r2, (path, name)
        (t1, f1, s1, x1), (t2, f2, s2, x2) = scan_both(f, monkeypatch)
        assert t1.equals(t2), (path, name)
        assert f1.equals(f2), (path, name)
        assert (s1, x1) == (s2, x2), (path, name)
        v1, v2 = verify_both(f)
        assert v1 == v2, (path, name)
        l1, l2 = session_both(f, monkeypatch)
        assert l1 == l2, (path, name)


def test_long_lines_and_chunk_boundaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # lines far longer than one read, a line ending exactly on a chunk boundary, and a torn tail
    from vakaudit.ledger import SessionLog

    path = tmp_path / "big.jsonl"
    with SessionLog.create(path, {"session_id": "s", "contract": {"model": "m"}}) as log:
        for i in range(6):
            log.append_message(
                {"role": "user", "content": [{"type": "text", "text": "x" * (700_000 * i + 1)}]}
            )
    data = path.read_bytes()
    for variant in (data, data[:-1], data + b'{"id":"half'):
        path.write_bytes(variant)
        r1, r2 = records_both(path)
        assert r1 == r2
        (t1, f1, s1, x1), (t2, f2, s2, x2) = scan_both(path, monkeypatch)
        assert t1.equals(t2) and f1.equals(f2) and s1 == s2 and x1 == x2
        v1, v2 = verify_both(path)
        assert v1 == v2
        assert v1[0]["line_count"] == variant.count(b"\n") + (not variant.endswith(b"\n"))
        assert session_both(path, monkeypatch)[0] == session_both(path, monkeypatch)[1]


@pytest.mark.parametrize("avx2", [True, False])
def test_nesting_check_both_simd_paths(avx2: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # attested lines get only the 64-byte-block nesting check: brackets inside strings, escaped
    # quotes and backslash runs at every position around a block boundary, and 128 vs 129 levels
    from vakaudit._native import linescan
    from vakaudit.ledger import SessionLog

    def nested(levels: int) -> object:
        value: object = "end"
        for _ in range(levels):
            value = [value]
        return value

    tricky = ['a"b', "x\\", "\\\\", '\\"]}', "{[", "]}", '"', "\\" * 5 + '"', "é{"]
    path = tmp_path / "nest.jsonl"
    with SessionLog.create(path, {"session_id": "s", "contract": {"model": "m"}}) as log:
        for pad in range(140):
            for t in tricky:
                log.append_message({"role": "user", "content": [{"type": "text", "text": "p" * pad + t + "[{"}]})
        # the line, "message", "content" and the block are 4 levels: 124 more make 128, 125 make 129
        at_limit = log.append_message({"role": "user", "content": [{"type": "text", "x": nested(124)}]})
        too_deep = log.append_message({"role": "user", "content": [{"type": "text", "x": nested(125)}]})
        log.append_message({"role": "user", "content": [{"type": "text", "text": "after"}]})
    try:
        # AVX2 is used exactly when asked for and the CPU says it has it (avx2, popcnt, bmi1)
        assert linescan.set_avx2(avx2) is (avx2 and _cpu_flags() >= {"avx2", "popcnt", "bmi1"})
        native, pure = verify_both(path)
    finally:
        linescan.set_avx2(True)
    assert native == pure
    deep = [f["entry_id"] for f in native[0]["findings"] if f["code"] == "nesting_too_deep"]
    assert deep == [too_deep.id] and at_limit.id not in deep


def _cpu_flags() -> set[str]:
    """The CPU's feature flags as the kernel lists them (empty where /proc/cpuinfo is not Linux's)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()
