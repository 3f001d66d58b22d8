"""Which side files get their own Parquet part: many rows do, a big file with few rows does not.

A checkpoint of several MB gives a handful of rows; writing each into its own Parquet file cost more
than reading it. Side files now stream into their own part only when their rows outgrow
``SIDE_PART_BYTES`` of Arrow data; the rows themselves are the same either way.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from vakaudit.scan import scan_home

SID = "01920d6e-8f1a-7c3b-9a55-2f0e6b7d4c10"


def _home(root: Path, telemetry_rows: int) -> Path:
    home = root / "home"
    ckpt = home / "agents/vak/checkpoints" / SID
    ckpt.mkdir(parents=True)
    content = base64.b64encode(b"x" * 1_500_000).decode()  # a 2 MB snapshot file with 2 entries
    doc = {
        "seq": 1,
        "session_id": SID,
        "created_at": "2026-08-24T09:14:57.9Z",
        "label": "go",
        "files": [{"rel_path": "big.bin", "content": content}, {"rel_path": "small.txt", "content": "aGk="}],
        "observed": ["big.bin"],
    }
    (ckpt / "0001.json").write_text(json.dumps(doc, separators=(",", ":")))
    execs = home / "agents/vak/sandbox/executions"
    execs.mkdir(parents=True)
    lines = [
        json.dumps({"kind": "ProcessTelemetry", "elapsed_ms": i * 500, "cpu_percent": 1.5, "memory_bytes": i})
        for i in range(telemetry_rows)
    ]
    (execs / f"{SID}.jsonl").write_text("\n".join(lines) + "\n")
    (home / "agents/vak/activity-log.jsonl").write_text('{"ts":"2026-08-24T09:14:57Z","kind":"tool"}\n')
    return home


def _parts(out: Path, table: str) -> list[str]:
    return sorted(p.name for p in (out / table).glob("*.parquet"))


def _shared(name: str) -> bool:
    """A task's shared part (``b<generation>-<task>``), not a file's own (named by a digest)."""
    return re.fullmatch(r"b\d+-\d+\.parquet", name) is not None


def test_a_big_file_with_few_rows_shares_the_task_part(tmp_path: Path) -> None:
    home = _home(tmp_path, telemetry_rows=20_000)
    out = tmp_path / "out"
    res = scan_home(home, out=out, jobs=1)
    # the 2 MB checkpoint: two rows, written with the other small side files of its task
    ckpt_parts = _parts(out, "checkpoints")
    assert len(ckpt_parts) == 1 and _shared(ckpt_parts[0])
    rows = pq.read_table(out / "checkpoints").to_pylist()
    assert [(r["file_rel_path"], r["content_bytes"], r["encoded_bytes"]) for r in rows] == [
        ("big.bin", 1_500_000, 2_000_000),
        ("small.txt", 2, 4),
    ]
    # 20,000 sandbox rows take several MB of Arrow memory: their own part, streamed
    sandbox_parts = _parts(out, "sandbox_executions")
    assert len(sandbox_parts) == 1 and not _shared(sandbox_parts[0])
    con = res.duckdb()
    n, last = con.execute("SELECT count(*), max(elapsed_ms) FROM sandbox_executions").fetchone()
    assert (n, last) == (20_000, 19_999 * 500)
    assert pl.read_parquet(out / "sandbox_executions" / sandbox_parts[0]).height == 20_000
    assert con.execute("SELECT count(*) FROM activity_log").fetchone()[0] == 1


def test_rows_are_the_same_whichever_part_they_land_in(tmp_path: Path) -> None:
    few = scan_home(_home(tmp_path / "a", telemetry_rows=50), out=tmp_path / "a" / "out", jobs=1)
    many = scan_home(_home(tmp_path / "b", telemetry_rows=20_000), out=tmp_path / "b" / "out", jobs=1)
    assert _shared(_parts(tmp_path / "a" / "out", "sandbox_executions")[0])
    query = (
        "SELECT line_no, offset_bytes, size_bytes, kind, elapsed_ms FROM sandbox_executions ORDER BY line_no"
    )
    small = few.duckdb().execute(query).fetchall()
    large = many.duckdb().execute(query + " LIMIT 50").fetchall()
    assert small == large
