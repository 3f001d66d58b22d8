"""Timeline: every entry, sidecar row and file time, sorted, with the fields timeline tools import."""

from __future__ import annotations

import json
import os
from pathlib import Path

from vakaudit.forensics import TIMELINE_SCHEMA, build_timeline


def test_timeline_of_a_synthetic_home(tmp_path: Path) -> None:
    from vakaudit.synth import build_home

    home = tmp_path / "home"
    build_home(home, profile="tiny", fsync=False)
    table = build_timeline(home)
    assert table.schema == TIMELINE_SCHEMA
    rows = table.to_pylist()
    stamps = [r["timestamp"] for r in rows]
    assert stamps == sorted(stamps)
    # one row per non-blank ledger line (independent count from the files themselves)
    ledgers = sorted(home.rglob("sessions/*/*.jsonl"))
    n_lines = sum(sum(1 for x in p.read_bytes().split(b"\n") if x.strip()) for p in ledgers)
    assert sum(1 for r in rows if r["source"] == "session_ledger") == n_lines
    # every routing-evidence row is there with its line number
    routing = sorted(home.rglob("routing-evidence.jsonl"))
    n_routing = sum(len(p.read_bytes().splitlines()) for p in routing)
    assert sum(1 for r in rows if r["source"] == "routing_evidence") == n_routing
    # two file times per regular file (modified, metadata changed)
    n_files = sum(1 for p in home.rglob("*") if p.is_file() and not p.is_symlink())
    assert sum(1 for r in rows if r["source"] == "file") == 2 * n_files
    for r in rows:
        assert r["datetime"].endswith("Z") and len(r["message"]) <= 200 and not r["rel_path"].startswith("/")
        if r["timestamp_desc"] == "File modified":
            assert r["timestamp"] == os.lstat(home / r["rel_path"]).st_mtime_ns // 1000


def test_ledger_entry_rows_carry_line_and_id(sample_homes: Path) -> None:
    home = sample_homes / "broken" / "clean" / "home"
    rows = [r for r in build_timeline(home).to_pylist() if r["source"] == "session_ledger"]
    ledger = next(home.rglob("*.jsonl")).read_bytes().splitlines()
    assert [r["line_no"] for r in rows] == list(range(1, 8))
    assert [r["entry_id"] for r in rows] == [json.loads(x)["id"] for x in ledger]
    assert rows[0]["datetime"] == "2026-09-20T10:00:01.250000Z"
    assert rows[1]["message"] == "user: what is in notes.txt?"
