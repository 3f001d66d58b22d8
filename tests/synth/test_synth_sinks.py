"""Side-ledger bounds: the cost log's 5 MiB / 90-day compaction and the budget alerts' 2,000 rows."""

from __future__ import annotations

import json
from pathlib import Path

from vakaudit.ledger.ids import format_ts
from vakaudit.synth.sinks import BudgetAlertSink, CostLogSink

DAY_NS = 86_400 * 1_000_000_000
T0 = 1_785_571_200_000_000_000


def test_cost_log_compacts_at_5_mib_keeping_90_days(tmp_path: Path) -> None:
    sink = CostLogSink(tmp_path / "cost-log.jsonl")
    pad = "x" * 900
    n = 0
    while sink.size < 5 * 1024 * 1024:  # rows spread over 200 days, ~1 KB each
        ts = T0 + (n % 200) * DAY_NS
        sink.append_at({"ts": format_ts(ts), "model": "m", "session_id": pad}, ts)
        n += 1
    before = sum(1 for _ in open(tmp_path / "cost-log.jsonl", "rb"))
    now = T0 + 200 * DAY_NS
    sink.append_at({"ts": format_ts(now), "model": "m", "session_id": "last"}, now)
    sink.close()
    rows = [json.loads(x) for x in (tmp_path / "cost-log.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) < before
    cutoff = format_ts(now - 90 * DAY_NS)
    assert all(r["ts"] >= cutoff for r in rows)
    assert rows[-1]["session_id"] == "last"
    assert not (tmp_path / "cost-log.jsonl.compact.tmp").exists()


def test_budget_alerts_keep_the_last_2000_rows_past_1_mib(tmp_path: Path) -> None:
    sink = BudgetAlertSink(tmp_path / "budget-alerts.jsonl")
    i = 0
    while sink.size < 1024 * 1024:
        sink.append(
            {"kind": "budget_alert", "ts": format_ts(T0 + i), "level": "eighty", "session_id": "s" * 200}
        )
        i += 1
    sink.append({"kind": "budget_alert", "ts": "last", "level": "full", "session_id": "s"})
    sink.close()
    lines = (tmp_path / "budget-alerts.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2001  # ~3,500 rows of ~300 bytes reached 1 MiB; the last 2,000 survive
    assert json.loads(lines[-1])["ts"] == "last"
    assert json.loads(lines[0])["ts"] == format_ts(T0 + i - 2000)


def test_streamed_checkpoint_is_the_compact_json_of_the_document(tmp_path: Path) -> None:
    import random

    from vakaudit.ledger.jsonenc import dumps
    from vakaudit.synth.checkpoints import Workspace, store_checkpoint
    from vakaudit.synth.content import ContentPools

    ws = Workspace(ContentPools(0, corpus_bytes=200_000), random.Random(1), 50_000)
    path = store_checkpoint(tmp_path, "s-1", 7, "2026-08-01T08:00:00Z", 'fix the "parser" — ✓', ws)
    doc = {
        "seq": 7,
        "session_id": "s-1",
        "created_at": "2026-08-01T08:00:00Z",
        "label": 'fix the "parser" — ✓',
        "files": [{"rel_path": r, "content": ws.content(r)} for r in sorted(ws.files)],
        "observed": sorted(set(ws.files) | set(ws.ignored)),
    }
    assert path == tmp_path / "checkpoints" / "s-1" / "0007.json"
    assert path.read_bytes() == dumps(doc)
    assert json.loads(path.read_bytes()) == doc
