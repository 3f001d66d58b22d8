"""G2 (3.5.0) turn-counting ``plan_compaction`` (spec ledger.md §7.1, §7.5, §7.6), with the fixture of
vak-agent's test that compacts "the WEF research turn" (``plan_compaction(1)`` over two turns)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ledger_messages import SUMMARY, A, U, header

from vakaudit.ledger import SessionLog


def two_turns(log: SessionLog) -> tuple[str, str]:
    t1 = log.append_message(U("initial research on WEF")).id
    log.append_message(A("here are findings"))
    t2 = log.append_message(U("use python sandbox")).id
    log.append_message(A("running in sandbox"))
    return t1, t2


def test_keep_recent_counts_turns_and_a_repeated_plan_folds_the_summary(tmp_path: Path) -> None:
    """§7.1: in G2 ``keep_recent`` counts whole turns; ``older`` is every projected message before the
    first kept turn, the prior summary included; the partition lists turn ids."""
    path = tmp_path / "s.jsonl"
    with SessionLog.create(path, header("3.5.0"), fsync=False) as log:
        assert log.generation == "g2"
        t1, t2 = two_turns(log)
        plan = log.plan_compaction(1)
        assert plan.older == (U("initial research on WEF"), A("here are findings"))
        assert plan.first_kept_entry_id == t2
        assert (plan.dropped_entry_ids, plan.selected_entry_ids) == ((t1,), (t2,))
        assert log.plan_compaction(2) is None
        log.apply_compaction(plan, "summary of the WEF research turn", 999)
        assert log.derive_messages() == [
            SUMMARY("summary of the WEF research turn"),
            U("use python sandbox"),
            A("running in sandbox"),
        ]
        # an open third turn is one kept run (vak's code counts it), never summarised
        t3 = log.append_message(U("now evaluate global GDP past 5 years")).id
        again = log.plan_compaction(1)
        assert again.older == (SUMMARY("summary of the WEF research turn"), U("use python sandbox"), A("running in sandbox"))  # fmt: skip
        assert (again.first_kept_entry_id, again.dropped_entry_ids, again.selected_entry_ids) == (
            t3,
            (t2,),
            (t3,),
        )
        assert log.plan_compaction(2) is None
        assert log.plan_compaction(0) is None  # vak indexes past its run list here
    line = path.read_bytes().splitlines()[5]
    assert line.endswith(
        b'"kind":"compaction","summary":"summary of the WEF research turn","first_kept_entry_id":"'
        + t2.encode()
        + b'","tokens_before":999,"partition":{"selected_entry_ids":["'
        + t2.encode()
        + b'"],"dropped_entry_ids":["'
        + t1.encode()
        + b'"]},"reset_all":false}'
    )


def test_an_open_turn_with_tool_steps_is_a_single_run(tmp_path: Path) -> None:
    with SessionLog.create(tmp_path / "s.jsonl", header("3.5.0"), fsync=False) as log:
        t1 = log.append_message(U("one")).id
        log.append_message(A("r1"))
        t2 = log.append_message(U("two")).id
        log.append_message({"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "read", "input": {}}]})  # fmt: skip
        log.append_message({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "x", "is_error": False}]})  # fmt: skip
        plan = log.plan_compaction(1)
        assert (plan.first_kept_entry_id, plan.dropped_entry_ids, plan.selected_entry_ids) == (
            t2,
            (t1,),
            (t2,),
        )
        assert plan.older == (U("one"), A("r1"))
        assert log.plan_compaction(2) is None


def test_other_generations(tmp_path: Path) -> None:
    """G1 keeps the message-level planner (session_log.rs: 8 messages, keep 2 -> 6 older); G3 plans by
    packets and has no ``plan_compaction`` here."""
    with SessionLog.create(tmp_path / "g1.jsonl", header("2.0.1"), fsync=False) as log:
        for i in range(8):
            log.append_message(U(f"m{i}"))
        assert len(log.plan_compaction(2).older) == 6
    with SessionLog.create(tmp_path / "g3.jsonl", header("4.0.0"), fsync=False) as log:
        two_turns(log)
        with pytest.raises(ValueError):
            log.plan_compaction(1)
