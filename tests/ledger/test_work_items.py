"""Managed work entries: vak-session's session_log.rs work tests and work.rs unit tests, with their
fixture values (spec ledger.md §4.8, §6.4, §8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vakaudit.errors import CorruptError
from vakaudit.ledger import Entry, SessionLog, session_path
from vakaudit.ledger.work import WorkError, project_work, work_payload

HEADER = {
    "session_id": "s-test",
    "created_at": "2026-01-01T00:00:00Z",
    "cwd": "/tmp/proj",
    "contract": {
        "app_version": "0.1.0",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "route_ladder": [],
        "route_objective": "",
        "route_annotations": [],
        "system_prompt": "system prompt v1",
        "permission_mode": "workspace-write",
        "capabilities": [],
        "prompt_layers": [],
    },
}


def item(item_id: str, *, deps: tuple[str, ...] = (), owner: object = "parent_agent", **kw: object) -> dict:
    return {
        "item_id": item_id,
        "title": kw.get("title", item_id),
        "instructions": kw.get("instructions", item_id),
        "dependencies": list(deps),
        "owner": owner,
        "required": True,
        "readonly": kw.get("readonly", False),
        "path_claims": [],
        "criterion_ids": list(kw.get("criterion_ids", ())),
    }


def contract(contract_id: str, items: list[dict], **kw: object) -> dict:
    return {
        "contract_id": contract_id,
        "revision": kw.get("revision", 0),
        "source_entry_id": kw.get("source_entry_id", "prompt"),
        "objective": kw.get("objective", "test work"),
        "constraints": [],
        "assumptions": list(kw.get("assumptions", ())),
        "criteria": list(kw.get("criteria", ())),
        "items": items,
    }


def created(c: dict) -> dict:
    return {"kind": "contract_created", "contract": c}


def status(src: str, dst: str, reason: str = "test") -> dict:
    return {"kind": "contract_status_changed", "from": src, "to": dst, "reason": reason}


def move(item_id: str, src: str, dst: str, attempt: int, reason: str = "test") -> dict:
    return {"kind": "item_status_changed", "item_id": item_id, "from": src, "to": dst, "attempt": attempt, "reason": reason}  # fmt: skip


def new_log(path: Path, header: dict = HEADER) -> SessionLog:
    return SessionLog.create(path, header, fsync=False)


# -- session_log.rs ---------------------------------------------------------------------------------


def test_invalid_work_transition_is_refused_and_entry_count_is_unchanged(tmp_path: Path) -> None:
    """§8 session_log.rs: "invalid work transition is refused and the entry count is unchanged."

    vak's fixture (invalid_work_event_is_rejected_without_poisoning_the_ledger): activating the
    contract already promoted item "one" to ready, so a second proposed->ready ("duplicate") is invalid.
    """
    path = tmp_path / "work.jsonl"
    log = new_log(path)
    log.append_work("work-atomic", 0, created(contract("work-atomic", [item("one")])))
    log.append_work("work-atomic", 0, status("draft", "active"))
    before = len(log.entries)
    size = path.stat().st_size
    with pytest.raises(WorkError) as err:
        log.append_work("work-atomic", 0, move("one", "proposed", "ready", 0, "duplicate"))
    assert isinstance(err.value, CorruptError)
    assert str(err.value) == "invalid work event: invalid work item 'one' transition Ready -> Ready"
    assert err.value.code == "invalid_item_transition"
    assert len(log.entries) == before
    assert path.stat().st_size == size
    assert log.work_projection() is not None
    log.close()


def test_activation_promotes_ready_items_with_vaks_line(tmp_path: Path) -> None:
    """§6.4: after activation one item_status_changed proposed->ready per item whose dependencies are
    done; the line is §4.8's example, byte for byte after the envelope (two ``kind`` keys)."""
    path = tmp_path / "work.jsonl"
    c = contract("work-1", [item("one"), item("two", deps=("one",)), item("three")])
    with new_log(path) as log:
        log.append_work("work-1", 0, created(c))
        activation = log.append_work("work-1", 0, status("draft", "active"))
        assert activation.payload["kind"]["to"] == "active"
        kinds = [e.payload["kind"]["kind"] for e in log.entries if e.kind == "work"]
        assert kinds == [
            "contract_created",
            "contract_status_changed",
            "item_status_changed",
            "item_status_changed",
        ]
        states = {k: s.status for k, s in log.work_projection().items.items()}
        assert states == {"one": "ready", "three": "ready", "two": "proposed"}
    lines = path.read_bytes().splitlines()
    assert lines[3].endswith(
        b',"kind":"work","contract_id":"work-1","revision":0,"kind":{"kind":"item_status_changed",'
        b'"item_id":"one","from":"proposed","to":"ready","attempt":0,"reason":"dependencies satisfied"}}'
    )
    assert b'"item_id":"three"' in lines[4]
    reopened = SessionLog.open_read_only(path)
    assert reopened.warnings == []
    assert [e.work_event["kind"] for e in reopened.entries if e.kind == "work"] == kinds


def test_orphaned_running_item_is_interrupted_with_a_blocker(tmp_path: Path) -> None:
    """§8 session_log.rs: "restart reconciliation marks an orphaned running item `interrupted` with a
    blocker" (vak's restart_reconciles_orphaned_running_work_without_replaying_it fixture)."""
    log = new_log(tmp_path / "work-recovery.jsonl")
    c = contract(
        "work-recovery",
        [item("mutate", title="Mutate safely", instructions="perform one operation")],
        source_entry_id="user",
        objective="recover safely",
    )
    log.append_work("work-recovery", 0, created(c))
    log.append_work("work-recovery", 0, status("draft", "active"))
    log.append_work("work-recovery", 0, move("mutate", "ready", "running", 1))
    assert log.reconcile_running_work(set()) == 1
    state = log.work_projection().items["mutate"]
    assert state.status == "interrupted"
    assert state.blocker == "recovered after process restart; review before retry"
    assert state.attempt == 1
    last = log.entries[-1].payload["kind"]
    assert (last["from"], last["to"], last["attempt"]) == ("running", "interrupted", 1)
    assert log.reconcile_running_work(set()) == 0  # nothing left running; nothing replayed
    log.close()


def test_completed_child_ledger_yields_ready_for_verification_and_one_evidence_ref(tmp_path: Path) -> None:
    """§8 session_log.rs: "a completed child ledger yields `ready_for_verification` plus one evidence
    ref" (vak's restart_attaches_completed_child_for_verification_without_marking_it_succeeded)."""
    child_path = session_path(tmp_path, "/tmp/proj", "child-1")
    with new_log(child_path, {**HEADER, "session_id": "child-1"}) as child:
        child.append_child_run("completed")
    log = new_log(tmp_path / "parent.jsonl")
    c = contract("child-recovery", [item("one", owner="subagent")])
    log.append_work("child-recovery", 0, created(c))
    log.append_work("child-recovery", 0, status("draft", "active", "delegating"))
    log.append_work("child-recovery", 0, move("one", "ready", "running", 1, "delegated"))
    log.append_work(
        "child-recovery",
        0,
        {"kind": "item_assigned", "item_id": "one", "owner": "subagent", "child_session_id": "child-1"},
    )
    assert log.reconcile_running_work(set(), tmp_path) == 1
    state = log.work_projection().items["one"]
    assert state.status == "ready_for_verification"
    assert state.evidence == [{"kind": "child_session", "session_id": "child-1"}]
    assert state.blocker is None
    last = log.entries[-1].payload["kind"]
    assert last["reason"] == "recovered completed child; verify its durable evidence"
    assert child_path.read_bytes().count(b"\n") == 2  # the child ledger was not written
    log.close()


@pytest.mark.parametrize(
    ("child_status", "reason"),
    [
        ("failed", "child failed before restart; review before retry"),
        ("aborted", "child was aborted before restart; review before retry"),
        ("max_turns", "child hit its turn limit; review before retry"),
        (None, "recovered after process restart; review before retry"),
    ],
)
def test_unfinished_child_interrupts_with_its_fate(
    tmp_path: Path, child_status: str | None, reason: str
) -> None:
    child_path = session_path(tmp_path, "/tmp/proj", "child-2")
    with new_log(child_path, {**HEADER, "session_id": "child-2"}) as child:
        if child_status is not None:
            child.append_child_run(child_status)
    with new_log(tmp_path / "parent.jsonl") as log:
        log.append_work("w", 0, created(contract("w", [item("one", owner="subagent")])))
        log.append_work("w", 0, status("draft", "active"))
        log.append_work("w", 0, move("one", "ready", "running", 2))
        log.append_work("w", 0, {"kind": "item_assigned", "item_id": "one", "owner": "subagent", "child_session_id": "child-2"})  # fmt: skip
        assert log.reconcile_running_work((), tmp_path) == 1
        state = log.work_projection().items["one"]
        assert (state.status, state.blocker, state.evidence) == ("interrupted", reason, [])


def test_child_ledger_held_by_a_live_writer_counts_as_unfinished(tmp_path: Path) -> None:
    """vak opens the child ledger for writing: while another handle holds its lock the child's status
    is unknown, so the item is interrupted even if a completed marker is already on disk."""
    child_path = session_path(tmp_path, "/tmp/proj", "child-3")
    child = new_log(child_path, {**HEADER, "session_id": "child-3"})
    child.append_child_run("completed")
    with new_log(tmp_path / "parent.jsonl") as log:
        log.append_work("w", 0, created(contract("w", [item("one", owner="subagent")])))
        log.append_work("w", 0, status("draft", "active"))
        log.append_work("w", 0, move("one", "ready", "running", 1))
        log.append_work(
            "w",
            0,
            {"kind": "item_assigned", "item_id": "one", "owner": "subagent", "child_session_id": "child-3"},
        )
        assert log.reconcile_running_work((), tmp_path) == 1
        state = log.work_projection().items["one"]
        assert (state.status, state.blocker) == (
            "interrupted",
            "recovered after process restart; review before retry",
        )
    child.close()


def test_live_child_stays_running_and_reconciliation_survives_a_reopen(tmp_path: Path) -> None:
    """A child reported live keeps its item running. After a reopen the work lines are read back (vak's
    own reader skips them, §2.4), so the orphan is still found."""
    path = tmp_path / "p.jsonl"
    with new_log(path) as log:
        log.append_work("w", 0, created(contract("w", [item("a", owner="subagent"), item("b")])))
        log.append_work("w", 0, status("draft", "active"))
        log.append_work("w", 0, move("a", "ready", "running", 1))
        log.append_work("w", 0, move("b", "ready", "running", 1))
        log.append_work("w", 0, {"kind": "item_assigned", "item_id": "a", "owner": "subagent", "child_session_id": "c-1"})  # fmt: skip
        line = path.read_bytes().splitlines()[-1]
        assert line.endswith(b'"kind":{"kind":"item_assigned","item_id":"a","owner":"subagent","child_session_id":"c-1"}}')  # fmt: skip
    with SessionLog.open(path, fsync=False) as log:
        assert log.reconcile_running_work({"c-1"}) == 1
        items = log.work_projection().items
        assert (items["a"].status, items["b"].status) == ("running", "interrupted")


def test_item_assigned_writes_a_null_child_session_id(tmp_path: Path) -> None:
    payload = work_payload("w", 0, {"kind": "item_assigned", "owner": "human", "item_id": "x"})
    assert list(payload["kind"]) == ["kind", "item_id", "owner", "child_session_id"]
    assert payload["kind"]["child_session_id"] is None


def test_contract_defaults_are_written_in_vaks_field_order() -> None:
    c = {"items": [{"owner": "human", "title": "t", "item_id": "i", "instructions": "do"}], "objective": "o",
         "contract_id": "c", "source_entry_id": "s", "revision": 0,
         "criteria": [{"statement": "tests pass", "kind": {"command": "make test", "kind": "shell"}, "criterion_id": "k"}]}  # fmt: skip
    out = work_payload("c", 0, created(c))["kind"]["contract"]
    assert list(out) == ["contract_id", "revision", "source_entry_id", "objective", "constraints", "assumptions", "criteria", "items"]  # fmt: skip
    assert out["items"][0] == {
        "item_id": "i", "title": "t", "instructions": "do", "dependencies": [], "owner": "human",
        "required": True, "readonly": False, "path_claims": [], "criterion_ids": [],
    }  # fmt: skip
    assert list(out["items"][0]) == list(item("i"))
    assert out["criteria"] == [{"criterion_id": "k", "statement": "tests pass", "kind": {"kind": "shell", "command": "make test"}, "required": True}]  # fmt: skip
    assert list(out["criteria"][0]["kind"]) == ["kind", "command"]


# -- work.rs unit tests ------------------------------------------------------------------------------


def work_entries(*events: tuple[int, dict], contract_id: str = "work-1") -> list[Entry]:
    return [
        Entry(f"e{i}", None, "2026-01-01T00:00:00Z", "work", work_payload(contract_id, rev, ev))
        for i, (rev, ev) in enumerate(events)
    ]


def unit_contract(items: list[dict]) -> dict:
    criteria = [
        {"criterion_id": "tests", "statement": "tests pass", "kind": {"kind": "semantic"}, "required": True}
    ]
    return contract("work-1", items, source_entry_id="user-1", objective="ship the change", criteria=criteria)


def unit_item(item_id: str, deps: tuple[str, ...] = ()) -> dict:
    return item(item_id, deps=deps, instructions="do the work", criterion_ids=("tests",))


def test_rejects_dependency_cycles() -> None:
    c = unit_contract([unit_item("a", ("b",)), unit_item("b", ("a",))])
    with pytest.raises(WorkError) as err:
        project_work(work_entries((0, created(c))))
    assert err.value.code == "dependency_cycle"


def test_projects_lifecycle_and_rejects_model_completion() -> None:
    events = [
        (0, created(unit_contract([unit_item("implement")]))),
        (0, status("draft", "active", "confirmed")),
        (0, move("implement", "proposed", "ready", 0, "")),
    ]
    projection = project_work(work_entries(*events))
    assert projection.status == "active"
    assert projection.items["implement"].status == "ready"
    with pytest.raises(WorkError) as err:
        project_work(work_entries(*events, (0, move("implement", "ready", "succeeded", 1, "done"))))
    assert err.value.code == "model_completion"


def _verified_lifecycle() -> list[tuple[int, dict]]:
    evidence = {"kind": "ledger_entry", "session_id": "s", "entry_id": "result"}
    return [
        (0, created(unit_contract([unit_item("implement")]))),
        (0, status("draft", "active", "confirmed")),
        (0, move("implement", "proposed", "ready", 1, "")),
        (0, move("implement", "ready", "running", 1, "")),
        (0, {"kind": "evidence_attached", "item_id": "implement", "evidence": evidence}),
        (0, move("implement", "running", "ready_for_verification", 1, "")),
        (
            0,
            {
                "kind": "verification_recorded",
                "criterion_id": "tests",
                "result": {"kind": "passed", "evidence": "result"},
            },
        ),  # fmt: skip
        (0, {"kind": "item_verified", "item_id": "implement", "attempt": 1}),
    ]


def test_verifier_can_complete_only_with_evidence_and_passed_criteria() -> None:
    events = _verified_lifecycle()
    assert project_work(work_entries(*events)).items["implement"].status == "succeeded"
    without_pass = [e for e in events if e[1]["kind"] != "verification_recorded"]
    with pytest.raises(WorkError):
        project_work(work_entries(*without_pass))
    no_evidence = [e for e in events if e[1]["kind"] != "evidence_attached"]
    with pytest.raises(WorkError):  # ready_for_verification needs evidence
        project_work(work_entries(*no_evidence))


def test_item_events_need_an_active_contract() -> None:
    with pytest.raises(WorkError) as err:
        project_work(
            work_entries(
                (0, created(unit_contract([unit_item("a")]))), (0, move("a", "proposed", "ready", 0))
            )
        )
    assert err.value.code == "invalid_event"


def test_assumption_resolution_is_projected_and_late_resolution_refused() -> None:
    assumption = {
        "assumption_id": "scope",
        "text": "use the current workspace",
        "requires_confirmation": True,
    }
    c = unit_contract([unit_item("implement")])
    c["assumptions"] = [assumption]
    resolve = {"kind": "assumption_resolved", "assumption_id": "scope", "resolution": "confirmed"}
    projection = project_work(work_entries((0, created(c)), (0, resolve)))
    assert projection.contract["assumptions"][0]["resolution"] == "confirmed"
    events = _verified_lifecycle()
    events[0] = (0, created(c))
    events += [(0, status("active", "verifying", "verification started")), (0, status("verifying", "completed", "verified"))]  # fmt: skip
    assert project_work(work_entries(*events)).status == "completed"
    with pytest.raises(WorkError) as err:
        project_work(work_entries(*events, (0, {**resolve, "resolution": "changed"})))
    assert err.value.code == "invalid_event"


def test_revision_requires_next_revision_and_valid_contract() -> None:
    c = unit_contract([unit_item("a")])
    revised = {"kind": "contract_revised", "previous_revision": 0, "contract": {**c, "revision": 1}, "reason": "discovery"}  # fmt: skip
    assert project_work(work_entries((0, created(c)), (1, revised))).contract["revision"] == 1
    with pytest.raises(WorkError) as err:
        project_work(work_entries((0, created(c)), (0, revised)))
    assert err.value.code == "wrong_revision"


def test_refused_contract_transition_and_wrong_contract(tmp_path: Path) -> None:
    with new_log(tmp_path / "w.jsonl") as log:
        log.append_work("w", 0, created(contract("w", [item("one")])))
        with pytest.raises(WorkError, match="invalid work status transition Draft -> Completed"):
            log.append_work("w", 0, status("draft", "completed"))
        with pytest.raises(WorkError, match="belongs to contract 'other', active contract is 'w'"):
            log.append_work("other", 0, status("draft", "active"))
        with pytest.raises(WorkError, match="not valid for the current contract state"):
            log.append_work("x", 0, created(contract("x", [item("y")])))  # the current one is not settled
        assert len(log.entries) == 2
    with new_log(tmp_path / "empty.jsonl") as log:
        with pytest.raises(WorkError, match="work contract is empty"):
            log.append_work("x", 0, created(contract("x", [])))
        with pytest.raises(WorkError, match="work revision 1 is not the expected revision 0"):
            log.append_work("x", 1, created(contract("x", [item("y")])))
        assert len(log.entries) == 1
