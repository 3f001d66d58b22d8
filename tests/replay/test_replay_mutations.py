"""Replay on spec-following ledgers: every checkable check passes; injected mistakes are caught at
exactly the affected steps and nowhere else."""

from __future__ import annotations

from replay_ledgers import BASH, FIND_TOOLS, READ, SYSTEM, WRITE, Plan

from vakaudit.replay import iter_requests

WIDER = [FIND_TOOLS, READ, BASH, WRITE]
ALL_STEPS = {(k, s) for k in range(1, 5) for s in (1, 2)}


def failures(path) -> dict[tuple[int, int], set[str]]:
    """(turn, step) -> names of failed checks, for steps with at least one failure."""
    out = {}
    for s in iter_requests(path):
        bad = {str(c.name) for c in s.checks if c.status == "fail"}
        if bad:
            out[(s.turn, s.step)] = bad
    return out


def test_spec_following_ledger_passes_every_checkable_check(make_ledger):
    path, facts = make_ledger(Plan(tools_by_turn={3: WIDER, 4: WIDER}))
    steps = list(iter_requests(path))
    assert {(s.turn, s.step) for s in steps} == ALL_STEPS
    assert [s.receipt_id for s in steps] == [facts["receipts"][k] for k in sorted(ALL_STEPS)]
    for s in steps:
        statuses = {str(c.name): str(c.status) for c in s.checks}
        assert "fail" not in statuses.values(), (s.turn, s.step, statuses)
        # the checks this ledger supports are decided, not skipped
        for name in ("prefix_digest", "prefix_changed_activity", "prefix_tokens_window"):
            assert statuses[name] == "pass"
        for name in ("binding_consistency", "model_visible_logged", "usage_sanity"):
            assert statuses[name] == "pass"


def test_prefix_tokens_window_is_decided_on_first_receipt_of_each_digest(make_ledger):
    path, _ = make_ledger(Plan(tools_by_turn={3: WIDER, 4: WIDER}))
    measured = {
        (s.turn, s.step)
        for s in iter_requests(path)
        if s.check("prefix_tokens_window").details.get("usage_tokens") is not None
    }
    assert measured == {(1, 1), (3, 1)}


def test_prefix_cache_break_names_the_added_tool(make_ledger):
    path, _ = make_ledger(Plan(tools_by_turn={3: WIDER, 4: WIDER}))
    breaks = {(s.turn, s.step): s.prefix_break for s in iter_requests(path) if s.prefix_break}
    assert list(breaks) == [(3, 1)]
    b = breaks[(3, 1)]
    assert b.tools_added == ("write",)
    assert not b.system_prompt and not b.tool_order and not b.tools_removed


def test_changed_system_prompt_in_one_binding_fails_only_that_turns_digest(make_ledger):
    path, _ = make_ledger(Plan(logged_system={2: SYSTEM + " Be brief."}))
    assert failures(path) == {(2, 1): {"prefix_digest"}, (2, 2): {"prefix_digest"}}
    breaks = {(s.turn, s.step): s.prefix_break.parts for s in iter_requests(path) if s.prefix_break}
    assert breaks == {(2, 1): ["system prompt"], (3, 1): ["system prompt"]}


def test_reordered_tool_in_one_binding_is_caught_in_that_turn_only(make_ledger):
    path, _ = make_ledger(Plan(logged_tools={4: [FIND_TOOLS, BASH, READ]}))
    assert failures(path) == {
        (4, 1): {"prefix_digest", "binding_consistency"},
        (4, 2): {"prefix_digest", "binding_consistency"},
    }
    brk = next(s.prefix_break for s in iter_requests(path) if (s.turn, s.step) == (4, 1))
    assert brk.tool_order and brk.parts == ["tool order"]


def test_missing_prefix_changed_activity_fails_only_at_the_changed_receipt(make_ledger):
    path, _ = make_ledger(Plan(tools_by_turn={3: WIDER, 4: WIDER}, skip_activity={3}))
    assert failures(path) == {(3, 1): {"prefix_changed_activity"}}


def test_edited_tool_result_is_caught_where_the_request_carries_it(make_ledger):
    path, facts = make_ledger()
    data = path.read_bytes().split(b"\n")
    target = facts["result_entries"][2].encode()
    (i,) = [n for n, line in enumerate(data) if target in line[:80]]
    assert b"a.txt\\nb.txt" in data[i]
    data[i] = data[i].replace(b"a.txt\\nb.txt", b"a.txt\\nc.txt")
    path.write_bytes(b"\n".join(data))
    got = failures(path)
    # turn 2 step 2 has the result verbatim; turns 3-4 carry turn 2's Full record (digested result)
    assert got == {k: {"model_visible_logged"} for k in [(2, 2), (3, 1), (3, 2), (4, 1), (4, 2)]}


def test_regime_b_keeps_the_tail_on_the_directive(make_ledger):
    path, _ = make_ledger(Plan(app_version="4.1.0"))
    steps = [s for s in iter_requests(path) if s.turn == 1]
    tail = "<intent>\nNote 1: check before acting.\n</intent>"
    for s in steps:
        assert s.request.messages[0]["content"][0] == {"type": "text", "text": tail}
    step2 = steps[1].request.messages
    assert [b["type"] for b in step2[2]["content"]] == ["tool_result"]


def test_an_entry_edited_after_its_successor_was_written_is_named_where_it_feeds_a_request(make_ledger):
    # the turn-2 directive's text changes in place: the next line's prev_hash still carries the digest
    # vak computed, so the chain does not vouch for that entry, and every request projected from it
    # says so (the requests before turn 2 do not contain it)
    path, facts = make_ledger(Plan(tools_by_turn={3: WIDER, 4: WIDER}))
    directive = facts["directives"][2]
    lines = path.read_bytes().split(b"\n")
    at = next(i for i, line in enumerate(lines) if directive.encode() in line[:60])
    assert b'"text":"' in lines[at]
    lines[at] = lines[at].replace(b'"text":"', b'"text":"edited ', 1)
    path.write_bytes(b"\n".join(lines))
    bad = failures(path)
    assert set(bad) == {k for k in ALL_STEPS if k[0] >= 2}
    assert all("model_visible_logged" in names for names in bad.values())
    step = next(s for s in iter_requests(path) if (s.turn, s.step) == (2, 1))
    details = step.check("model_visible_logged").reason
    assert f"{directive} (line {at + 2} prev_hash does not match)" in details
