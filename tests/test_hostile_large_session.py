"""A valid 200,000-entry session: scan, analyze and report derive its 98,000 turns in bounded memory.

Before, the turns query held every turn of the ledger in one DuckDB hash table and failed with an
``OutOfMemoryException`` in its 96 MB connection (100k entries passed, 150k failed).
Each command's peak RSS is that child's own, from ``os.wait4``.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.hostile_homes import run_measured

SESSION_ID = "019fd300-0000-7000-8000-000000000001"
LEDGER = Path("agents/vak/sessions/0d994828fe15217e") / f"{SESSION_ID}.jsonl"
TURNS = 98_000  # every 49th turn calls a tool (4 entries), the others are 2: 96,000*2 + 2,000*4 = 200,000
TOOL_EVERY = 49
LIMIT_KIB = 600 * 1024


def _write_ledger(path: Path) -> None:
    from vakaudit.ledger import SessionLog

    ticks = iter(range(1_786_000_000_000_000_000, 1 << 62, 1_000_000_000))
    ids = iter(f"019fd300-0000-7000-8000-{n:012d}" for n in range(2, 1 << 40))
    header = {"session_id": SESSION_ID, "created_at": "2026-08-06T00:00:00Z", "cwd": "/work/p"}
    usage = {"model": "claude-sonnet-4-5", "usage": {"input_tokens": 10, "output_tokens": 2}}
    log = SessionLog.create(path, header, clock=lambda: next(ticks), new_id=lambda: next(ids), fsync=False)
    try:
        for t in range(TURNS):
            log.append_message({"role": "user", "content": [{"type": "text", "text": f"do step {t}"}]})
            if t % TOOL_EVERY == 0:
                call = {"type": "tool_use", "id": f"call_{t}", "name": "read", "input": {"path": "n.txt"}}
                log.append_message({"role": "assistant", "content": [call]}, usage)
                result = {"type": "tool_result", "tool_use_id": f"call_{t}", "content": "ok"}
                log.append_message({"role": "user", "content": [result]})
            log.append_message({"role": "assistant", "content": [{"type": "text", "text": "done"}]}, usage)
    finally:
        log.close()


@pytest.mark.slow
def test_200000_entry_session_no_longer_runs_duckdb_out_of_memory(tmp_path) -> None:
    home = tmp_path / "home"
    _write_ledger(home / LEDGER)
    scan = tmp_path / "scan"
    for args in (
        ("scan", str(home), "--out", str(scan), "-q", "-j", "1"),
        ("analyze", str(scan), "--json"),
        ("report", str(scan), "--format", "json", "-o", str(tmp_path / "report.json")),
    ):
        rc, peak_kib, _, err = run_measured(*args, cwd=tmp_path)
        assert rc == 0, (args[0], err.decode()[-2000:])
        assert peak_kib < LIMIT_KIB, (args[0], peak_kib)
    con = duckdb.connect()
    assert con.sql(f"select count(*) from '{scan}/entries/**/*.parquet'").fetchall() == [(200_001,)]
    turns = con.sql(f"select turn_no, entry_count, tool_use_count from '{scan}/turns/*.parquet'").fetchall()
    assert len(turns) == TURNS
    # in order, one row per turn, each with the entries written for it
    assert turns == [(t + 1, 4 if t % TOOL_EVERY == 0 else 2, 1 if t % TOOL_EVERY == 0 else 0) for t in range(TURNS)]
    sessions = con.sql(f"select entry_count, turn_count from '{scan}/sessions/*.parquet'").fetchall()
    assert sessions == [(200_001, TURNS)]
