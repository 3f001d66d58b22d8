"""Incremental rescans read only appended bytes; rewrites are detected; a live writer is tolerated."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pytest
from scan_homes import fixed_clock, make_ledger, write_turns

from vakaudit.artifacts.session_ledger import LedgerScanner
from vakaudit.ledger import SessionLog
from vakaudit.scan import scan_home

LEDGER = "agents/vak/sessions/2599eb06cf360587/s1.jsonl"


def _sorted_entries(res) -> pa.Table:
    return res.table("entries").sort_by([("rel_path", "ascending"), ("line_no", "ascending")])


def test_unchanged_home_is_not_reopened(small_home: Path, tmp_path: Path) -> None:
    first = scan_home(small_home, out=tmp_path / "out", jobs=1)
    assert first.stats.bytes_read > 0
    again = scan_home(small_home, out=tmp_path / "out", jobs=1)
    assert again.stats.bytes_read == 0 and again.stats.bytes_scanned == 0
    assert again.stats.files_unchanged == 3  # two ledgers and the cost log; notes.txt has no reader
    assert again.row_counts == first.row_counts
    assert _sorted_entries(again).equals(_sorted_entries(first))


def test_rescan_reads_the_whole_ledger_once_for_its_rows_and_verdict(small_home: Path, tmp_path: Path) -> None:
    led = small_home / LEDGER
    scan_home(small_home, out=tmp_path / "out", jobs=1)
    old = led.read_bytes()
    last_line = old[old.rstrip(b"\n").rfind(b"\n") + 1 :]
    log = SessionLog.open(led, clock=fixed_clock(), fsync=False)
    try:
        write_turns(log, 2, start=100)
    finally:
        log.close()
    appended = led.stat().st_size - len(old)
    res = scan_home(small_home, out=tmp_path / "out", jobs=1)
    # what was read: the two anchors (first 4 KiB and the last scanned line), then the whole file once:
    # its verdict needs every line (an appended line can settle an earlier one's finding) and the same
    # pass gives the appended lines' rows
    assert res.stats.bytes_scanned == appended
    whole = led.stat().st_size
    assert res.stats.bytes_read == min(len(old), 4096) + len(last_line) + whole
    assert res.stats.files_appended == 1 and res.stats.files_unchanged == 2
    # and the tables equal a full scan from scratch
    fresh = scan_home(small_home, out=tmp_path / "fresh", jobs=1)
    for name in ("entries", "entry_fields", "turns", "sessions", "findings"):
        a = res.table(name)
        b = fresh.table(name)
        keys = [
            (c, "ascending")
            for c in a.column_names
            if c in ("rel_path", "line_no", "turn_no", "kind", "field", "code")
        ]
        assert a.sort_by(keys).equals(b.sort_by(keys)), name
    assert sum(
        res.table("entries")["size_bytes"].to_pylist()[i] for i in range(res.row_counts["entries"])
    ) == sum((small_home / r).stat().st_size for r in set(res.table("entries")["rel_path"].to_pylist()))


def test_rewritten_prefix_is_an_append_only_violation(small_home: Path, tmp_path: Path) -> None:
    led = small_home / LEDGER
    scan_home(small_home, out=tmp_path / "out", jobs=1)
    data = led.read_bytes()
    mutated = data.replace(b"question 0", b"question Z", 1)  # same size, an early line changed
    assert mutated != data
    with open(led, "ab") as f:  # and something appended, so it looks like plain growth by size
        f.write(b"\n")
    with open(led, "r+b") as f:
        f.write(mutated)
    res = scan_home(small_home, out=tmp_path / "out", jobs=1)
    v = [x for x in res.table("findings").to_pylist() if x["code"] == "append_only_violation"]
    assert [x["rel_path"] for x in v] == [LEDGER]
    assert res.stats.files_full == 1
    rows = res.table("entries").filter(pa.compute.equal(res.table("entries")["rel_path"], LEDGER))
    assert sum(rows["size_bytes"].to_pylist()) == led.stat().st_size  # rescanned from byte 0, no stale rows


def test_shrunk_ledger_is_an_append_only_violation(small_home: Path, tmp_path: Path) -> None:
    led = small_home / LEDGER
    scan_home(small_home, out=tmp_path / "out", jobs=1)
    data = led.read_bytes()
    cut = data.rstrip(b"\n").rfind(b"\n") + 1
    led.write_bytes(data[:cut])  # last line removed
    res = scan_home(small_home, out=tmp_path / "out", jobs=1)
    assert "append_only_violation" in res.findings_by_code()
    n = sum(1 for r in res.table("entries")["rel_path"].to_pylist() if r == LEDGER)
    assert n == data[:cut].count(b"\n")


def test_deleted_file_leaves_the_tables(small_home: Path, tmp_path: Path) -> None:
    scan_home(small_home, out=tmp_path / "out", jobs=1)
    (small_home / LEDGER).unlink()
    res = scan_home(small_home, out=tmp_path / "out", jobs=1)
    assert LEDGER not in set(res.table("entries")["rel_path"].to_pylist())
    assert res.row_counts["sessions"] == 1


def test_scanner_leaves_a_line_in_flight_for_the_next_scan(tmp_path: Path) -> None:
    led = make_ledger(tmp_path / "s.jsonl", 1)
    good = led.stat().st_size
    with open(led, "ab") as f:
        f.write(b'{"id":"half')
    findings = []
    scanner = LedgerScanner("sessions/k/s.jsonl", emit=findings.append)
    with open(led, "rb") as f:
        rows = sum(b.num_rows for b in scanner.scan(f, led.stat().st_size, still_growing=lambda: True))
    assert rows == led.read_bytes()[:good].count(b"\n")  # every complete line, not the fragment
    assert scanner.state.offset == good and not scanner.state.torn
    assert [f.code.value for f in findings] == ["ledger_growing"]


WRITER = textwrap.dedent(
    """
    import itertools, os, sys, time
    from pathlib import Path
    from vakaudit.ledger import SessionLog
    path, ready, stop = sys.argv[1:4]
    log = SessionLog.open(path, fsync=False)
    n = 0
    while not os.path.exists(stop):
        log.append_message({"role": "assistant", "content": [{"type": "text", "text": "x" * 3000}]})
        n += 1
        if n == 20:
            Path(ready).write_text("ready")
    log.close()
    """
)


@pytest.mark.live_writer
def test_ledger_appended_by_another_process_gives_a_consistent_prefix(tmp_path: Path) -> None:
    home = tmp_path / "home"
    led = make_ledger(home / LEDGER, 1200)  # ~6 MB: the scan lasts long enough for the writer to append
    ready, stop = tmp_path / "ready", tmp_path / "stop"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(led), str(ready), str(stop)])
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert writer.poll() is None and time.monotonic() < deadline, "writer did not start"
            time.sleep(0.01)
        res = scan_home(home, out=tmp_path / "out", jobs=1)
    finally:
        stop.write_text("stop")
        writer.wait(timeout=60)
    rows = res.table("entries").to_pylist()
    # a consistent prefix: every row parsed and chained, no torn or unparseable line, ends on a line end
    assert all(r["kind"] is not None for r in rows)
    assert all(r["chain_ok"] for r in rows[1:])
    codes = res.findings_by_code()
    assert "torn_last_line" not in codes and "unparseable_line" not in codes
    covered = sum(r["size_bytes"] for r in rows)
    data = led.read_bytes()
    assert data[covered - 1 : covered] == b"\n" and covered < len(data)
    assert codes.get("ledger_growing") == 1
    # the next scan picks up the rest as an append, and the whole file is then covered
    res2 = scan_home(home, out=tmp_path / "out", jobs=1)
    assert res2.stats.files_appended == 1
    assert "ledger_growing" not in res2.findings_by_code()  # the note was about the previous scan
    assert sum(res2.table("entries")["size_bytes"].to_pylist()) == os.path.getsize(led)


def _routing_rows(n: int, start: int = 0) -> bytes:
    return b"".join(
        b'{"ts":"2026-08-24T09:15:02.481220Z","provider":"anthropic","model":"claude-sonnet-4",'
        b'"outcome":"success","latency_ms":%d}\n' % (start + i)
        for i in range(n)
    )


def test_large_side_file_streams_into_its_own_part_and_grows(small_home: Path, tmp_path: Path) -> None:
    import vakaudit.scan.worker as worker

    side = small_home / "agents/vak/routing-evidence.jsonl"
    side.write_bytes(_routing_rows(12_000))
    assert side.stat().st_size >= worker.SIDE_PART_BYTES
    res = scan_home(small_home, out=tmp_path / "out", jobs=1)
    parts = sorted(p.name for p in (tmp_path / "out/routing_evidence").glob("*.parquet"))
    assert len(parts) == 1  # the big file's own part
    assert res.row_counts["routing_evidence"] == 12_000 == res.table("routing_evidence").num_rows
    with open(side, "ab") as f:
        f.write(_routing_rows(500, start=12_000))
    again = scan_home(small_home, out=tmp_path / "out", jobs=1)
    t = again.table("routing_evidence")
    assert again.row_counts["routing_evidence"] == 12_500 == t.num_rows
    assert sorted(t["latency_ms"].to_pylist()) == list(range(12_500))  # no row lost, none twice
    assert sum(t["size_bytes"].to_pylist()) == side.stat().st_size


def test_small_side_files_share_a_part_and_a_changed_one_leaves_it(small_home: Path, tmp_path: Path) -> None:
    root_log = small_home / "cost-log.jsonl"
    agent_log = small_home / "agents/vak/cost-log.jsonl"
    row = agent_log.read_bytes()
    root_log.write_bytes(row.replace(b'"s1"', b'"s9"') * 3)
    scan_home(small_home, out=tmp_path / "out", jobs=1)
    assert len(list((tmp_path / "out/cost_log").glob("*.parquet"))) == 1  # both files, one part
    agent_log.write_bytes(row.replace(b'"m1"', b'"m2"') * 2)  # rewritten (the cost log compacts)
    res = scan_home(small_home, out=tmp_path / "out", jobs=1)
    fresh = scan_home(small_home, out=tmp_path / "fresh", jobs=1)
    keys = [("rel_path", "ascending"), ("line_no", "ascending")]
    assert res.table("cost_log").sort_by(keys).equals(fresh.table("cost_log").sort_by(keys))
    assert res.row_counts["cost_log"] == 5 == fresh.row_counts["cost_log"]
    models = sorted(res.table("cost_log")["model"].to_pylist())
    assert models == ["m1", "m1", "m1", "m2", "m2"]
