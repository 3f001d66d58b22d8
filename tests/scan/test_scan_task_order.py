"""Tasks run costliest first, by expected CPU: bytes weighted by kind plus a fixed cost per file.

Expected orders are worked out by hand from the cost model in the engine's comments (CPU per byte
relative to a ledger, measured; a per-file cost in ledger bytes): many small side files cost more
than their bytes say, a checkpoint's base64 much less.
"""

from __future__ import annotations

from vakaudit.scan import plan
from vakaudit.scan.plan import _group, _Item

MIB = 1 << 20


def _item(rel: str, kind: str, size: int) -> _Item:
    return _Item(rel, kind, "agents/vak", None, size, "full")


def test_many_small_files_outrank_a_ledger_of_more_bytes() -> None:
    ledger = _item("agents/vak/sessions/k/s.jsonl", "session_ledger", 3 * MIB)
    ckpt = _item("agents/vak/checkpoints/s/0001.json", "checkpoints", 160 * MIB)
    jobs = [_item(f"delivery/jobs/{i:04x}.json", "delivery_jobs", 1024) for i in range(200)]
    tasks = _group([ledger, ckpt, *jobs], jobs=1)
    # checkpoint: 160 MiB x 0.25 = 40 MiB (+16 KiB), over the 32 MiB side budget: alone;
    # 200 jobs: 200 x (2 KiB + 16 KiB) = 3.5 MiB; the ledger: 3 MiB (+16 KiB)
    assert [[i.rel_path for i in t][:1] for t in tasks] == [
        [ckpt.rel_path],
        [jobs[0].rel_path],
        [ledger.rel_path],
    ]
    assert len(tasks[1]) == 200
    assert plan._task_cost(tasks[1]) == 200 * (2 * 1024 + 16 * 1024)


def test_side_bundles_are_cut_by_cost_not_bytes() -> None:
    # ten 12 MiB checkpoints cost 10 x (3 MiB + 16 KiB) < 32 MiB: one task (each file was one by bytes)
    ckpts = [_item(f"agents/vak/checkpoints/s/{i:04d}.json", "checkpoints", 12 * MIB) for i in range(10)]
    assert [len(t) for t in _group(ckpts, jobs=2)] == [10]
    # twenty 1 MiB sandbox logs cost 2.3 MiB + 16 KiB = 2,428,108.8 each: 14 of them reach 32 MiB
    logs = [
        _item(f"agents/vak/sandbox/executions/{i:02d}.jsonl", "sandbox_executions", MIB) for i in range(20)
    ]
    assert [len(t) for t in _group(logs, jobs=2)] == [14, 6]
    # ledgers keep their byte budget: 1 MiB at least, here 40 MiB // 4 + 1 bytes
    ledgers = [_item(f"agents/vak/sessions/k/{i:02d}.jsonl", "session_ledger", 4 * MIB) for i in range(10)]
    assert [len(t) for t in _group(ledgers, jobs=1)] == [3, 3, 3, 1]


def test_a_bundle_stops_at_the_file_count_and_every_file_lands_once() -> None:
    jobs = [_item(f"delivery/jobs/{i:04x}.json", "delivery_jobs", 100) for i in range(600)]
    tasks = _group(jobs, jobs=2)
    assert sorted(len(t) for t in tasks) == [88, 256, 256]
    assert sorted(i.rel_path for t in tasks for i in t) == sorted(i.rel_path for i in jobs)
