"""Projection acceptance lines of spec ledger.md §8 (session_log.rs G1/G3, turn_cards.rs,
directive_drift.rs, control_messages.rs, presentation_entries.rs, intent_entries.rs,
capacity_activities.rs, and the G4 context_projection.rs / reset_open_turn.rs lines).

Expected messages are composed by hand from the spec. The fixed rule lines of the thread block are
not reproduced by the spec, so tests use the module constant instead of pinning vak's wording.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ledger_messages import SUMMARY, A, U

from vakaudit.ledger import Entry, SessionLog
from vakaudit.ledger.projection import (
    THREAD_RULES,
    WORK_CONTRACT_RULE,
    Fidelity,
    WorkingSetPlan,
    capacity_profile,
    derive_messages,
    derive_tagged,
    derive_with_plan,
    evidence,
    latest_directive_entry_id,
    non_card_evidence_since,
    packet_needs_compaction,
    packet_transcript,
    tail_sections,
)
from vakaudit.ledger.turns import TurnIndex, TurnIndexBuilder

ARROW = "\u2192"


# -- fixtures --------------------------------------------------------------------------------------


class Chain:
    """A hand-built active chain; ids are e001, e002, ... ."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def add(self, kind: str, payload: dict) -> Entry:
        eid = f"e{len(self.entries) + 1:03d}"
        parent = self.entries[-1].id if self.entries else None
        entry = Entry(eid, parent, "2026-01-01T00:00:00Z", kind, payload)
        self.entries.append(entry)
        return entry

    def msg(self, role: str, content: list, meta: dict | None = None) -> Entry:
        payload: dict = {"message": {"role": role, "content": content}}
        if meta is not None:
            payload["meta"] = meta
        return self.add("message", payload)

    def user(self, text: str) -> Entry:
        return self.msg("user", [{"type": "text", "text": text}])

    def say(self, text: str) -> Entry:
        return self.msg("assistant", [{"type": "text", "text": text}])

    def call(self, cid: str, name: str, tool_input: dict | None = None) -> Entry:
        return self.msg(
            "assistant", [{"type": "tool_use", "id": cid, "name": name, "input": tool_input or {}}]
        )

    def result(self, cid: str, content: str, is_error: bool = False) -> Entry:
        block = {"type": "tool_result", "tool_use_id": cid, "content": content, "is_error": is_error}
        return self.msg("user", [block])

    def control(self, tag: str, text: str) -> Entry:
        return self.msg("user", [{"type": "text", "text": text}], meta={"control": tag})

    def goal(self, revision: int, relation: str, request: str) -> Entry:
        return self.add("goal_update", {"revision": revision, "relation": relation, "request": request})

    def intent(self, note: str | None = None, domains: tuple[str, ...] = ()) -> Entry:
        payload: dict = {
            "reading": {"act": "answer", "domains": list(domains)},
            "engagement": {},
            "provenance": {},
        }
        if note is not None:
            payload["model_visible"] = note
        return self.add("intent", payload)

    def compaction_a(self, summary: str, first_kept: str, reset: bool = False) -> Entry:
        payload = {
            "summary": summary,
            "first_kept_entry_id": first_kept,
            "tokens_before": 10,
            "reset_all": reset,
        }
        return self.add("compaction", payload)

    def packet(self, first: str, last: str, summary: str) -> Entry:
        payload = {
            "summary": summary,
            "first_turn_id": first,
            "last_turn_id": last,
            "model": "m",
            "tokens_before": 10,
            "reset_all": False,
        }
        return self.add("compaction", payload)

    def reset(self, summary: str, keeps_open_turn: bool | None = None) -> Entry:
        payload: dict = {
            "summary": summary,
            "first_turn_id": "",
            "last_turn_id": "",
            "model": "",
            "tokens_before": 10,
            "reset_all": True,
        }
        if keeps_open_turn is not None:
            payload["keeps_open_turn"] = keeps_open_turn
        return self.add("compaction", payload)

    def card(self, turn_id: str, asked: str, narration: str, domains: tuple[str, ...] = ()) -> Entry:
        card = {
            "turn_id": turn_id,
            "asked": asked,
            "did": [],
            "answered": {"presentations": [], "narration": narration},
            "outcome": "completed",
            "reading": {"act": "answer", "domains": list(domains), "modalities": ["text"]},
            "tokens_full": 5,
            "tokens_card": 5,
        }
        return self.add("turn_card", {"turn_id": turn_id, "card": card})

    def activity(self, kind: str, data: dict, label: str = "x") -> Entry:
        return self.add(
            "activity",
            {
                "activity_id": f"a{len(self.entries)}",
                "activity_kind": kind,
                "status": "succeeded",
                "label": label,
                "data": data,
            },
        )


def CALL(cid: str, name: str, tool_input: dict | None = None) -> dict:
    return {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": cid, "name": name, "input": tool_input or {}}],
    }


def RESULT(cid: str, content: str, is_error: bool = False) -> dict:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": cid, "content": content, "is_error": is_error}],
    }


def TAG(eid: str, n: int) -> str:
    return f"[evidence:{eid} \u2014 {n} chars; call recall to expand]"


def header(app_version: str) -> dict:
    return {
        "session_id": "s-test",
        "created_at": "2026-01-01T00:00:00Z",
        "cwd": "/tmp/proj",
        "contract": {
            "app_version": app_version,
            "provider": "scripted",
            "model": "m",
            "route_ladder": [],
            "route_objective": "",
            "route_annotations": [],
            "system_prompt": "",
            "permission_mode": "workspace-write",
            "capabilities": [],
            "prompt_layers": [],
        },
    }


G1_VERSION = "2.0.1"
G3_VERSION = "4.0.0"


def new_log(tmp_path: Path, app_version: str, name: str = "s.jsonl") -> SessionLog:
    return SessionLog.create(tmp_path / name, header(app_version), fsync=False)


def append_user(log: SessionLog, text: str) -> Entry:
    return log.append_message({"role": "user", "content": [{"type": "text", "text": text}]})


def append_assistant(log: SessionLog, text: str) -> Entry:
    return log.append_message({"role": "assistant", "content": [{"type": "text", "text": text}]})


# -- session_log.rs --------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [G1_VERSION, G3_VERSION])
def test_create_two_messages_reopen_projects_two(tmp_path: Path, version: str) -> None:
    with new_log(tmp_path, version) as log:
        append_user(log, "hi")
        append_assistant(log, "hello")
    reopened = SessionLog.open_read_only(tmp_path / "s.jsonl")
    assert len(reopened.entries) == 3
    assert reopened.derive_messages() == [U("hi"), A("hello")]


@pytest.mark.parametrize("generation", ["g1", "g1p", "g2", "g3"])
def test_activity_never_enters_the_projection(generation: str) -> None:
    c = Chain()
    c.user("hi")
    c.activity("diagnostic", {"note": "x"})
    c.say("hello")
    c.activity("voice_transcript", {"text": "hi", "finalized": "true"})
    assert derive_messages(c.entries, generation=generation) == [U("hi"), A("hello")]


def test_branching_projects_only_the_active_path_g1(tmp_path: Path) -> None:
    with new_log(tmp_path, G1_VERSION) as log:
        append_user(log, "a")
        b = append_user(log, "b")
        append_user(log, "c")
        log.branch_at(b.id)
        append_user(log, "d")
        assert log.derive_messages() == [U("a"), U("b"), U("d")]
    assert SessionLog.open_read_only(tmp_path / "s.jsonl").derive_messages() == [U("a"), U("b"), U("d")]


def test_branching_projects_only_the_active_path_g3(tmp_path: Path) -> None:
    with new_log(tmp_path, G3_VERSION) as log:
        append_user(log, "a")
        append_assistant(log, "a-reply")
        append_user(log, "b")
        b_reply = append_assistant(log, "b-reply")
        append_user(log, "c")
        append_assistant(log, "c-reply")
        log.branch_at(b_reply.id)
        append_user(log, "d")
        append_assistant(log, "d-reply")
        expected = [U("a"), A("a-reply"), U("b"), A("b-reply"), U("d"), A("d-reply")]
        assert log.derive_messages() == expected


def test_g1_compaction_summary_first_and_a_second_one_replaces_it() -> None:
    c = Chain()
    c.user("one")
    c.say("r1")
    m3 = c.user("two")
    c.say("r2")
    c.compaction_a("S1", m3.id)
    m5 = c.user("three")
    # summary first, then the kept messages; those between the marker and the compaction point stay
    assert derive_messages(c.entries, generation="g1") == [SUMMARY("S1"), U("two"), A("r2"), U("three")]
    c.compaction_a("S2", m5.id)
    assert derive_messages(c.entries, generation="g1") == [SUMMARY("S2"), U("three")]


def test_g1_compaction_edge_cases() -> None:
    c = Chain()
    c.user("one")
    c.compaction_a("lost anchor", "no-such-entry")
    assert derive_messages(c.entries, generation="g1") == [SUMMARY("lost anchor")]
    c.user("two")
    c.compaction_a("handoff", "", reset=True)
    assert derive_messages(c.entries, generation="g1") == [SUMMARY("handoff")]


@pytest.mark.parametrize("version", [G1_VERSION, G3_VERSION])
def test_torn_trailing_line_still_projects_safe(tmp_path: Path, version: str) -> None:
    with new_log(tmp_path, version) as log:
        append_user(log, "safe")
    with open(tmp_path / "s.jsonl", "ab") as f:
        f.write(b'{"id":"torn", "pay')
    reopened = SessionLog.open_read_only(tmp_path / "s.jsonl")
    assert len(reopened.entries) == 2
    assert reopened.warnings
    assert reopened.derive_messages() == [U("safe")]


@pytest.mark.parametrize("generation", ["g1", "g1p", "g2", "g3", "g4"])
def test_turn_capability_binding_is_never_projected(generation: str) -> None:
    c = Chain()
    c.add("header", header("3.0.0"))
    c.add(
        "turn_capabilities_bound",
        {
            "epoch": 7,
            "capability_ids": ["Tool:read"],
            "excluded_ids": ["Tool:bash"],
            "system_prompt": "system",
            "tool_schemas": [{"name": "read"}],
        },
    )
    assert derive_messages(c.entries, generation=generation) == []


def thread_fixture() -> Chain:
    c = Chain()
    c.goal(1, "new", "initial research on WEF")
    c.user("initial research on WEF")
    c.say("here are findings")
    c.goal(2, "adds_to", "use python sandbox")
    c.user("use python sandbox")
    c.say("running in sandbox")
    c.goal(3, "adds_to", "now evaluate global GDP past 5 years")
    c.user("now evaluate global GDP past 5 years")
    return c


def test_g1_conversation_thread_is_spliced_before_the_latest_user_message() -> None:
    thread = (
        '<conversation_thread revision="3">\n'
        "Primary objective: initial research on WEF\n"
        "User request timeline across turns:\n"
        "- Turn 1: initial research on WEF\n"
        "- Turn 2: use python sandbox\n"
        "- Turn 3: now evaluate global GDP past 5 years\n"
        f"{THREAD_RULES}\n"
        "</conversation_thread>"
    )
    assert derive_messages(thread_fixture().entries, generation="g1") == [
        U("initial research on WEF"),
        A("here are findings"),
        U("use python sandbox"),
        A("running in sandbox"),
        U(thread),
        U("now evaluate global GDP past 5 years"),
    ]


def test_g1_prime_moves_the_thread_to_the_tail_and_lists_only_non_verbatim_directives() -> None:
    c = thread_fixture()
    messages = derive_messages(c.entries, generation="g1p")
    assert all("<conversation_thread" not in str(m) for m in messages)
    # every directive is verbatim in the G1' projection: nothing left to list
    assert tail_sections(c.entries, generation="g1p").thread is None
    c.compaction_a("earlier work", "e008")  # keep only the latest directive
    tail = tail_sections(c.entries, generation="g1p")
    assert tail.thread == (
        '<conversation_thread revision="3">\n'
        "Primary objective: initial research on WEF\n"
        "User request timeline across turns:\n"
        "- Turn 1: initial research on WEF\n"
        "- Turn 2: use python sandbox\n"
        f"{THREAD_RULES}\n"
        "</conversation_thread>"
    )


def trimming_fixture() -> Chain:
    c = Chain()
    c.user("search the web")
    c.call("call-1", "search")
    c.result("call-1", "A" * 2500)
    c.say("found results")
    c.user("now run python")
    c.call("call-2", "python")
    c.result("call-2", "A" * 2500)
    return c


@pytest.mark.parametrize("generation", ["g1", "g1p"])
def test_historical_tool_result_is_trimmed_and_the_open_turn_result_stays_verbatim(generation: str) -> None:
    messages = derive_messages(trimming_fixture().entries, generation=generation)
    trimmed = "A" * 300 + "\n... [historical tool output trimmed; total was 2500 chars]"
    assert messages == [
        U("search the web"),
        CALL("call-1", "search"),
        RESULT("call-1", trimmed),
        A("found results"),
        U("now run python"),
        CALL("call-2", "python"),
        RESULT("call-2", "A" * 2500),
    ]
    assert len(messages[2]["content"][0]["content"]) < 600
    assert len(messages[-1]["content"][0]["content"]) == 2500


def test_trimming_counts_bytes_and_keeps_300_characters() -> None:
    c = Chain()
    c.user("q")
    c.call("a", "t")
    c.result("a", "\u00e9" * 400)  # 800 bytes, 400 characters
    c.call("b", "t")
    c.result("b", "\U0001f600" * 200)  # 800 bytes, 200 characters: cut at byte 300
    c.call("c", "t")
    c.result("c", "x" * 600)  # exactly 600 bytes: kept
    c.control("stop_hook", "[stop-hook]: go on")
    c.user("next")
    messages = derive_messages(c.entries, generation="g1")
    assert (
        messages[2]["content"][0]["content"]
        == "\u00e9" * 300 + "\n... [historical tool output trimmed; total was 800 chars]"
    )
    assert (
        messages[4]["content"][0]["content"]
        == "\U0001f600" * 75 + "\n... [historical tool output trimmed; total was 800 chars]"
    )
    assert messages[6]["content"][0]["content"] == "x" * 600


def packet_fixture() -> tuple[Chain, list[str]]:
    c = Chain()
    ids = []
    for word, reply in (("one", "r1"), ("two", "r2"), ("three", "r3")):
        ids.append(c.user(word).id)
        c.say(reply)
    c.packet(ids[0], ids[1], "P12")
    ids.append(c.user("four").id)
    return c, ids


def test_g3_packet_renders_only_for_its_exact_range() -> None:
    c, (t1, t2, t3, _) = packet_fixture()
    everything = [U("one"), A("r1"), U("two"), A("r2"), U("three"), A("r3"), U("four")]
    assert derive_messages(c.entries, generation="g3") == everything
    all_full = WorkingSetPlan(per_turn=((t1, Fidelity.FULL), (t2, Fidelity.FULL), (t3, Fidelity.FULL)))
    assert derive_with_plan(c.entries, all_full, generation="g3") == everything

    plan = WorkingSetPlan(per_turn=((t3, Fidelity.FULL),), packet_range=(t1, t2))
    assert derive_with_plan(c.entries, plan, generation="g3") == [
        SUMMARY("P12"),
        U("three"),
        A("r3"),
        U("four"),
    ]

    # a range with no stored packet renders cards (provisional here), never a stale summary
    wider = WorkingSetPlan(packet_range=(t1, t3))
    cards = (
        "<turns>\n"
        f'#1 asked: one {ARROW} did: nothing {ARROW} "r1"\n'
        f'#2 asked: two {ARROW} did: nothing {ARROW} "r2"\n'
        f'#3 asked: three {ARROW} did: nothing {ARROW} "r3"\n'
        "</turns>"
    )
    assert derive_with_plan(c.entries, wider, generation="g3") == [U(cards), U("four")]
    other = WorkingSetPlan(per_turn=((t1, Fidelity.FULL), (t3, Fidelity.FULL)), packet_range=(t2, t2))
    assert derive_with_plan(c.entries, other, generation="g3") == [
        U(f'<turns>\n#2 asked: two {ARROW} did: nothing {ARROW} "r2"\n</turns>'),
        U("one"),
        A("r1"),
        U("three"),
        A("r3"),
        U("four"),
    ]


def test_g3_wider_packets_seed_from_the_stored_prefix_packet() -> None:
    c, (t1, t2, t3, _) = packet_fixture()
    assert not packet_needs_compaction(c.entries, t1, t2)
    assert packet_needs_compaction(c.entries, t1, t3)
    assert packet_needs_compaction(c.entries, t2, t2)
    # turn 3 has no written card: its full record text stands in
    assert packet_transcript(c.entries, t1, t3) == ("P12\n\nthree\nr3\n", 14)
    c.card(t3, "three", "r3 narrated")
    text = f'P12\n\n#3 asked: three {ARROW} did: nothing {ARROW} "r3 narrated"\n'
    assert packet_transcript(c.entries, t1, t3) == (text, len(text))
    # without a seed: one card line per turn (written cards only)
    assert packet_transcript(c.entries, t2, t3) == (
        f'two\nr2\n#3 asked: three {ARROW} did: nothing {ARROW} "r3 narrated"\n',
        len(f'two\nr2\n#3 asked: three {ARROW} did: nothing {ARROW} "r3 narrated"\n'),
    )
    assert packet_transcript(c.entries, "nope", t3) == ("", 0)


def test_g3_thread_lists_only_directives_the_plan_leaves_out() -> None:
    c = Chain()
    c.goal(1, "new", "one")
    t1 = c.user("one").id
    c.say("r1")
    c.goal(2, "adds_to", "two")
    t2 = c.user("two").id
    c.say("r2")
    c.goal(3, "adds_to", "three")
    c.user("three")
    plan = WorkingSetPlan(per_turn=((t2, Fidelity.FULL),), packet_range=(t1, t1))
    tail = tail_sections(c.entries, generation="g3", plan=plan)
    assert tail.thread == (
        '<conversation_thread revision="3">\n'
        "Primary objective: one\n"
        "User request timeline across turns:\n"
        "- Turn 1: one\n"
        f"{THREAD_RULES}\n"
        "</conversation_thread>"
    )
    # never spliced into the projection; without a plan everything is verbatim -> no thread
    assert all(
        "<conversation_thread" not in str(m) for m in derive_with_plan(c.entries, plan, generation="g3")
    )
    assert tail_sections(c.entries, generation="g3").thread is None
    # a turn carried as a Card line is covered too
    card_plan = WorkingSetPlan(per_turn=((t1, Fidelity.CARD), (t2, Fidelity.FULL)))
    assert tail_sections(c.entries, generation="g3", plan=card_plan).thread is None


def test_thread_preconditions() -> None:
    def chain_with(updates: list[tuple[int, str, str]]) -> Chain:
        c = Chain()
        for i, (rev, rel, req) in enumerate(updates):
            c.goal(rev, rel, req)
            c.user(f"directive {i}")
            c.say("ok")
        return c

    plan_none = WorkingSetPlan(packet_range=("e002", "e002"))
    one_revision = chain_with([(1, "new", "goal")])
    assert tail_sections(one_revision.entries, generation="g3", plan=plan_none).thread is None
    paused = chain_with([(1, "new", "goal"), (2, "adds_to", "x"), (3, "pauses", "stop")])
    assert tail_sections(paused.entries, generation="g3", plan=plan_none).thread is None
    live = chain_with([(1, "new", "goal"), (2, "adds_to", "x")])
    assert tail_sections(live.entries, generation="g3", plan=plan_none).thread is not None
    empty_objective = chain_with([(1, "new", "  "), (2, "adds_to", "x")])
    assert tail_sections(empty_objective.entries, generation="g3", plan=plan_none).thread is None


def test_thread_cuts_long_directives_at_200_characters() -> None:
    c = Chain()
    c.goal(1, "new", "g")
    t1 = c.user("x" * 250).id
    c.say("ok")
    c.goal(2, "adds_to", "y")
    c.user("now")
    thread = tail_sections(c.entries, generation="g3", plan=WorkingSetPlan(packet_range=(t1, t1))).thread
    assert f"- Turn 1: {'x' * 200}...\n" in thread


def test_g3_closed_turn_digests_its_result_and_the_open_turn_keeps_it_verbatim() -> None:
    c = Chain()
    c.user("fetch")
    c.call("call-1", "webfetch")
    c.result("call-1", "x" * 5000)
    c.say("done")
    c.user("again")
    c.call("call-2", "webfetch")
    c.result("call-2", "y" * 5000)
    messages = derive_messages(c.entries, generation="g3")
    assert messages == [
        U("fetch"),
        CALL("call-1", "webfetch"),
        RESULT("call-1", "(1 lines, 5000 bytes)\n" + TAG("call-1", 5000)),
        A("done"),
        U("again"),
        CALL("call-2", "webfetch"),
        RESULT("call-2", "y" * 5000),
    ]
    assert "trimmed" not in str(messages)
    assert evidence(c.entries, "call-1") == {
        "tool": "webfetch",
        "input": {},
        "content": "x" * 5000,
        "is_error": False,
    }


# -- turn_cards.rs ---------------------------------------------------------------------------------


def test_card_entries_are_never_model_visible_and_a_closed_turn_projects_its_full_record() -> None:
    c = Chain()
    t1 = c.user("one").id
    c.call("k", "search", {"q": "x"})
    c.result("k", "[]")
    c.say("r1")
    c.user("two")
    before = derive_messages(c.entries, generation="g3")
    c.card(t1, "SECRET-ASKED", "SECRET-NARRATION")
    after = derive_messages(c.entries, generation="g3")
    assert after == before
    assert "SECRET" not in str(after)
    index = TurnIndex.from_chain(c.entries, generation="g3")
    assert after[:4] == index.turn_by_id(t1).full_record()
    assert after[2] == RESULT("k", "array, 0 items\n" + TAG("k", 2))


# -- directive_drift.rs ----------------------------------------------------------------------------


def drift_chain(card_domains: tuple[str, ...]) -> tuple[Chain, str]:
    c = Chain()
    c.goal(1, "new", "stocks")
    t1 = c.user("check stocks").id
    c.intent(domains=("finance",))
    c.say("stocks are up")
    c.card(t1, "check stocks", "stocks are up", domains=card_domains)
    c.goal(2, "adds_to", "weather")
    c.user("weather in Delhi")
    c.intent(domains=("weather",))
    return c, t1


def test_domain_disjoint_earlier_directive_is_marked_paused() -> None:
    c, t1 = drift_chain(("finance",))
    thread = tail_sections(c.entries, generation="g3", plan=WorkingSetPlan(packet_range=(t1, t1))).thread
    assert "- Turn 1: check stocks (earlier, now paused)\n" in thread


@pytest.mark.parametrize("domains", [("weather",), ("weather", "finance"), ()])
def test_same_domain_or_undomained_directive_is_never_marked(domains: tuple[str, ...]) -> None:
    c, t1 = drift_chain(domains)
    thread = tail_sections(c.entries, generation="g3", plan=WorkingSetPlan(packet_range=(t1, t1))).thread
    assert "- Turn 1: check stocks\n" in thread


# -- control_messages.rs ---------------------------------------------------------------------------


def test_control_class_comes_from_the_tag_alone_and_each_message_keeps_its_entry_id() -> None:
    c = Chain()
    d = c.user("do it")
    call = c.call("k", "bash", {"command": "ls"})
    res = c.result("k", "ok")
    nudge = c.control("stop_hook", "keep going")  # no marker text: still control
    tagged = derive_tagged(c.entries, generation="g3")
    assert [(p.entry_id, p.is_control) for p in tagged] == [
        (d.id, False),
        (call.id, False),
        (res.id, False),
        (nudge.id, True),
    ]
    g1 = derive_tagged(c.entries, generation="g1")
    assert [(p.entry_id, p.is_control) for p in g1] == [
        (d.id, False),
        (call.id, False),
        (res.id, False),
        (nudge.id, True),
    ]

    c2 = Chain()
    c2.user("first")
    c2.say("answer")
    marker = c2.user("[grounding-check] the user's own words")  # marker text alone: a directive
    c2.msg("assistant", [{"type": "text", "text": "assistant"}], meta={"control": "stop_hook"})
    index = TurnIndex.from_chain(c2.entries, generation="g3")
    assert [t.turn_id for t in index.turns] == ["e001", marker.id]
    assert index.turns[1].closed  # the tagged assistant message is an ordinary final answer
    assert [p.is_control for p in derive_tagged(c2.entries, generation="g3")] == [False] * 4


def test_nudges_reach_only_the_open_turn() -> None:
    c = Chain()
    c.user("do it")
    c.control("fence_check", "[fence-check]: resend")
    assert derive_messages(c.entries, generation="g3") == [U("do it"), U("[fence-check]: resend")]
    c.say("done")
    c.user("next")
    assert derive_messages(c.entries, generation="g3") == [U("do it"), A("done"), U("next")]


# -- presentation_entries.rs -----------------------------------------------------------------------


@pytest.mark.parametrize("generation", ["g1", "g1p", "g3"])
def test_presentations_never_change_the_projection(generation: str) -> None:
    c = Chain()
    t = c.user("show")
    c.say("here")
    before = derive_messages(c.entries, generation=generation)
    c.add(
        "presentation",
        {
            "turn_id": t.id,
            "source": {"kind": "fence", "message_entry_id": "e002"},
            "semantic_type": "metric",
            "payload": {"v": 1},
            "payload_digest": "0" * 64,
            "derived_from": [],
            "title": "T",
            "identity_digest": "T: 1",
        },
    )
    assert derive_messages(c.entries, generation=generation) == before


def test_latest_directive_ignores_control_and_tool_result_messages() -> None:
    c = Chain()
    c.user("old")
    d = c.user("current")
    c.call("k", "read")
    c.result("k", "text")
    c.control("stop_hook", "[stop-hook]: continue")
    assert latest_directive_entry_id(c.entries) == d.id
    assert latest_directive_entry_id([]) is None


def test_non_card_evidence_excludes_card_calls() -> None:
    c = Chain()
    c.call("before", "search")
    c.result("before", "x")
    t = c.user("q")
    c.call("call-1", "search")
    c.result("call-1", "x")
    c.call("card-1", "emit_metric_card")
    c.result("card-1", "{}")
    c.result("call-1", "again")
    assert non_card_evidence_since(c.entries, t.id, lambda name: name.startswith("emit_")) == ["call-1"]


# -- intent_entries.rs (G1) ------------------------------------------------------------------------


def test_g1_intent_note_sits_directly_before_its_turn() -> None:
    c = Chain()
    c.intent("Cite your sources.")
    c.user("q1")
    c.say("a1")
    assert derive_messages(c.entries, generation="g1") == [
        U("<intent>\nCite your sources.\n</intent>"),
        U("q1"),
        A("a1"),
    ]


def test_g1_only_the_newest_note_is_projected_and_a_none_note_adds_nothing() -> None:
    c = Chain()
    c.intent("first note")
    c.user("q1")
    c.say("a1")
    c.intent("second note")
    c.user("q2")
    assert derive_messages(c.entries, generation="g1") == [
        U("q1"),
        A("a1"),
        U("<intent>\nsecond note\n</intent>"),
        U("q2"),
    ]
    c2 = Chain()
    c2.intent(None)
    c2.user("q")
    assert derive_messages(c2.entries, generation="g1") == [U("q")]


def test_g1_intent_is_cut_to_4000_bytes_on_a_character_boundary() -> None:
    c = Chain()
    c.intent("\u00e9" * 5000)
    c.user("q")
    text = derive_messages(c.entries, generation="g1")[0]["content"][0]["text"]
    assert text == "<intent>\n" + "\u00e9" * 1995
    assert len(text.encode("utf-8")) == 3999


def test_intent_moves_to_the_tail_from_g1_prime_on() -> None:
    c = Chain()
    c.user("q")
    c.intent("Answer directly.")
    for generation in ("g1p", "g2", "g3"):
        assert derive_messages(c.entries, generation=generation) == [U("q")]
        assert (
            tail_sections(c.entries, generation=generation).intent == "<intent>\nAnswer directly.\n</intent>"
        )
    c.intent(None)  # the newest intent has no note: no section, older notes never resurface
    assert tail_sections(c.entries, generation="g3").intent is None


def test_goal_state_ignores_status_updates() -> None:
    c = Chain()
    c.goal(1, "new", "ship it")
    c.goal(2, "adds_to", "with tests")
    c.goal(3, "status", "how is it going?")
    index = TurnIndex.from_chain(c.entries, generation="g3")
    assert (index.goal.objective, index.goal.additions, index.goal.control, index.goal.revision) == (
        "ship it",
        ["with tests"],
        "active",
        3,
    )


# -- work contract ---------------------------------------------------------------------------------


def work_chain(final_status: str | None = None) -> Chain:
    c = Chain()
    c.goal(1, "new", "ship it")
    c.user("ship it")
    contract = {
        "contract_id": "work-1",
        "revision": 0,
        "source_entry_id": "e002",
        "objective": "Ship the release",
        "items": [
            {"item_id": "one", "title": "a", "instructions": "", "owner": "parent_agent"},
            {"item_id": "two", "title": "b", "instructions": "", "owner": {"flow": {"name": "deploy"}}},
        ],
    }
    c.add(
        "work",
        {"contract_id": "work-1", "revision": 0, "kind": {"kind": "contract_created", "contract": contract}},
    )
    c.add(
        "work",
        {
            "contract_id": "work-1",
            "revision": 0,
            "kind": {"kind": "contract_status_changed", "from": "draft", "to": "active", "reason": ""},
        },
    )
    c.add(
        "work",
        {
            "contract_id": "work-1",
            "revision": 0,
            "kind": {
                "kind": "item_status_changed",
                "item_id": "one",
                "from": "proposed",
                "to": "ready_for_verification",
                "attempt": 0,
                "reason": "",
            },
        },
    )
    if final_status is not None:
        c.add(
            "work",
            {
                "contract_id": "work-1",
                "revision": 0,
                "kind": {
                    "kind": "contract_status_changed",
                    "from": "active",
                    "to": final_status,
                    "reason": "",
                },
            },
        )
    c.goal(2, "adds_to", "and docs")
    c.user("and docs")
    return c


def test_work_contract_block_in_the_tail_and_spliced_first_in_g1() -> None:
    c = work_chain()
    block = (
        '<work_contract id="work-1" revision="0">\n'
        "Objective: Ship the release\n"
        "Status: Active\n"
        "Items:\n"
        "- one: ReadyForVerification (owner: ParentAgent)\n"
        '- two: Proposed (owner: Flow { name: "deploy" })\n'
        f"{WORK_CONTRACT_RULE}\n"
        "</work_contract>"
    )
    tail = tail_sections(c.entries, generation="g3", plan=WorkingSetPlan(packet_range=("e002", "e002")))
    assert tail.work_contract == block
    assert tail.thread is None  # a work contract suppresses the thread
    assert derive_messages(c.entries, generation="g1")[0] == U(block)
    assert tail_sections(work_chain("completed").entries, generation="g3").work_contract is None


def test_tail_render_order() -> None:
    from vakaudit.ledger.projection import TailSections

    sections = TailSections(
        intent="<intent>\nI\n</intent>", work_contract="<work_contract>W", thread="<t>T", workspace="<w>"
    )
    assert sections.render() == "<intent>\nI\n</intent>\n<work_contract>W\n<w>\n<t>T"
    assert sections.render(turn_context=" now ", stance="calm\n") == (
        "<turn_context>\nnow\n</turn_context>\n<intent>\nI\n</intent>\n<stance>\ncalm\n</stance>\n<work_contract>W\n<w>\n<t>T"
    )
    assert TailSections().render() == ""


# -- capacity_activities.rs ------------------------------------------------------------------------


def test_newest_matching_capacity_profile_wins_by_key() -> None:
    c = Chain()
    c.user("q")
    key_a = '{"provider":"p","model":"a","quantisation":null}'
    key_b = '{"model":"b","provider":"p","quantisation":null}'
    c.activity("capacity_probe", {"key": key_a, "profile": '{"horizon":1000}'})
    c.activity("capacity_probe", {"key": key_b, "profile": '{"horizon":2000}'})
    c.activity("capacity_feedback", {"key": key_a, "profile": '{"horizon":900}'})
    c.activity("diagnostic", {"key": key_a, "profile": '{"horizon":1}'})  # not a capacity activity
    c.activity("capacity_feedback", {"key": key_a, "profile": "not json"})  # passed over
    assert capacity_profile(c.entries, {"provider": "p", "model": "a", "quantisation": None}) == {
        "horizon": 900
    }
    # the key compares as parsed JSON: order of keys does not matter
    assert capacity_profile(c.entries, '{"quantisation":null,"model":"b","provider":"p"}') == {
        "horizon": 2000
    }
    assert capacity_profile(c.entries, {"provider": "p", "model": "zzz", "quantisation": None}) is None
    assert capacity_profile(c.entries, {"provider": "p", "model": "a", "quantisation": 0}) is None
    assert derive_messages(c.entries, generation="g3") == [U("q")]


# -- G4 (context_projection.rs / reset_open_turn.rs) -----------------------------------------------


def test_g4_card_block_sits_just_before_the_open_turn_and_full_records_stay_stable() -> None:
    c = Chain()
    t1 = c.user("one").id
    c.say("r1")
    t2 = c.user("two").id
    c.say("r2")
    c.user("three")
    plan = WorkingSetPlan(per_turn=((t1, Fidelity.CARD), (t2, Fidelity.FULL)))
    first = derive_with_plan(c.entries, plan, generation="g4")
    assert first == [
        U("two"),
        A("r2"),
        U(f'<turns>\n#1 asked: one {ARROW} did: nothing {ARROW} "r1"\n</turns>'),
        U("three"),
    ]
    t3 = "e005"
    c.say("r3")
    c.user("four")
    plan = WorkingSetPlan(per_turn=((t1, Fidelity.CARD), (t2, Fidelity.FULL), (t3, Fidelity.CARD)))
    second = derive_with_plan(c.entries, plan, generation="g4")
    assert second[:2] == first[:2]
    assert second[2] == U(
        f'<turns>\n#1 asked: one {ARROW} did: nothing {ARROW} "r1"\n#3 asked: three {ARROW} did: nothing {ARROW} "r3"\n</turns>'
    )
    assert second[3] == U("four")


def test_g4_packet_summary_names_the_turn_numbers() -> None:
    c, (t1, t2, _, _) = packet_fixture()
    messages = derive_with_plan(c.entries, WorkingSetPlan(packet_range=(t1, t2)), generation="g4")
    assert messages[0]["content"][0]["text"].startswith("<context_summary>\nSummary of turns 1-2;")


def reset_chain(keeps_open_turn: bool | None) -> Chain:
    c = Chain()
    c.user("one")
    c.say("r1")
    c.user("two")
    c.call("a", "read")
    c.result("a", "[]")
    c.reset("handoff", keeps_open_turn=keeps_open_turn)
    c.call("b", "read")
    c.result("b", "[1]")
    return c


def test_g4_reset_keeps_the_open_turn_directive_and_post_reset_steps() -> None:
    kept = derive_messages(reset_chain(True).entries, generation="g4")
    assert kept == [SUMMARY("handoff"), U("two"), CALL("b", "read"), RESULT("b", "[1]")]
    hidden = derive_messages(reset_chain(False).entries, generation="g4")
    assert hidden == [SUMMARY("handoff")]


def test_g3_reset_hides_finished_turns_and_an_open_turn_that_began_before_it() -> None:
    assert derive_messages(reset_chain(None).entries, generation="g3") == [SUMMARY("handoff")]
    c = reset_chain(None)
    c.say("done")
    c.user("after reset")
    c.say("fine")
    assert derive_messages(c.entries, generation="g3") == [SUMMARY("handoff"), U("after reset"), A("fine")]


# -- incremental use -------------------------------------------------------------------------------


@pytest.mark.parametrize("generation", ["g1", "g1p", "g2", "g3", "g4"])
def test_projection_from_a_live_builder_equals_projection_from_each_prefix(generation: str) -> None:
    c, (t1, t2, _, _) = packet_fixture()
    c.say("r4")
    c.goal(1, "new", "x")
    c.intent("note", domains=("d",))
    c.compaction_a("S", "e007")
    plan = WorkingSetPlan(packet_range=(t1, t2))
    builder = TurnIndexBuilder(generation=generation)
    for i, entry in enumerate(c.entries, start=1):
        builder.add(entry)
        prefix = c.entries[:i]
        assert derive_messages(builder.index, generation=generation) == derive_messages(
            prefix, generation=generation
        )
        assert derive_with_plan(builder.index, plan, generation=generation) == derive_with_plan(
            prefix, plan, generation=generation
        )
        assert tail_sections(builder.index, generation=generation, plan=plan) == tail_sections(
            prefix, generation=generation, plan=plan
        )


def test_a_turn_index_for_another_generation_is_refused() -> None:
    index = TurnIndex.from_chain([], generation="g3")
    with pytest.raises(ValueError):
        derive_messages(index, generation="g2")
    with pytest.raises(ValueError):
        derive_messages([], generation="g9")


# -- message-level compaction planning (G1/G1', §7.1) ----------------------------------------------


def compaction_chain() -> Chain:
    c = Chain()
    c.user("one")  # e001
    c.say("r1")  # e002
    c.call("k", "read")  # e003
    c.result("k", "text")  # e004
    c.say("r2")  # e005
    c.user("two")  # e006
    c.say("r3")  # e007
    return c


def test_plan_compaction_moves_the_boundary_past_tool_results() -> None:
    from vakaudit.ledger.projection import plan_compaction

    c = compaction_chain()
    for keep in (3, 4):  # keep=4 would start the kept part at the tool result e004: moved to e005
        plan = plan_compaction(c.entries, keep, generation="g1")
        assert plan.first_kept_entry_id == "e005"
        assert plan.older == (U("one"), A("r1"), CALL("k", "read"), RESULT("k", "text"))
        assert plan.dropped_entry_ids == ("e001", "e002", "e003", "e004")
        assert plan.selected_entry_ids == ("e005", "e006", "e007")
        assert plan.partition() == {
            "selected_entry_ids": ["e005", "e006", "e007"],
            "dropped_entry_ids": ["e001", "e002", "e003", "e004"],
        }
    assert plan_compaction(c.entries, 7, generation="g1") is None
    assert plan_compaction(c.entries, 0, generation="g1") is None
    # applying the plan: summary first, then the kept messages
    c.compaction_a("S", "e005")
    assert derive_messages(c.entries, generation="g1") == [SUMMARY("S"), A("r2"), U("two"), A("r3")]
    # a second plan summarises the first summary (it is part of `older`, never of the partition)
    plan = plan_compaction(c.entries, 1, generation="g1")
    assert plan.older == (SUMMARY("S"), A("r2"), U("two"))
    assert plan.dropped_entry_ids == ("e005", "e006")


def test_control_messages_and_intent_notes_never_reach_the_summariser_input() -> None:
    from vakaudit.ledger.projection import plan_compaction

    c = Chain()
    c.intent("Be brief.")
    c.user("one")
    c.control("stop_hook", "[stop-hook]: go on")
    c.say("r1")
    c.user("two")
    c.say("r2")
    plan = plan_compaction(c.entries, 2, generation="g1")
    assert plan.older == (U("one"), A("r1"))
    assert "e003" not in plan.dropped_entry_ids  # control: in neither side of the partition
    with pytest.raises(ValueError):
        plan_compaction(c.entries, 2, generation="g3")


def test_presentation_duplicate_check_is_per_turn_and_digest_and_chain_order_is_kept() -> None:
    from vakaudit.ledger.projection import has_presentation

    c = Chain()
    t1 = c.user("one").id
    for title, digest in (("first", "d1"), ("second", "d2")):
        c.add(
            "presentation",
            {
                "turn_id": t1,
                "source": {"kind": "fence", "message_entry_id": t1},
                "payload_digest": digest,
                "title": title,
            },
        )
    assert has_presentation(c.entries, t1, "d1")
    assert not has_presentation(c.entries, t1, "d3")
    assert not has_presentation(c.entries, "other-turn", "d1")
    turn = TurnIndex.from_chain(c.entries, generation="g3").turns[0]
    assert [p.payload["title"] for p in turn.presentations] == ["first", "second"]


def test_g4_workspace_section_comes_from_the_newest_workspace_delta_activity() -> None:
    # The activity shape is unconfirmed in the spec (§7.7): this pins the port's reading of it
    # (data.section == "workspace_delta", the delta text in `detail`), not vak's.
    c = Chain()
    c.user("edit files")
    c.add(
        "activity",
        {
            "activity_id": "w1",
            "activity_kind": "diagnostic",
            "status": "succeeded",
            "label": "ws",
            "detail": "old",
            "data": {"section": "workspace_delta"},
        },
    )
    c.add(
        "activity",
        {
            "activity_id": "w2",
            "activity_kind": "diagnostic",
            "status": "succeeded",
            "label": "ws",
            "detail": "a.txt changed",
            "data": {"section": "workspace_delta"},
        },
    )
    assert (
        tail_sections(c.entries, generation="g4").workspace
        == "<workspace_delta>\na.txt changed\n</workspace_delta>"
    )
    assert tail_sections(c.entries, generation="g3").workspace is None
    assert derive_messages(c.entries, generation="g4") == [U("edit files")]


def test_projected_blocks_take_vak_llm_serialization_order() -> None:
    # unknown keys are dropped and a missing is_error is written, as serde would on re-serializing
    c = Chain()
    c.user("go")
    c.msg("assistant", [{"name": "read", "type": "tool_use", "input": {}, "id": "k", "extra": 1}])
    c.msg("user", [{"tool_use_id": "k", "type": "tool_result", "content": "boom"}])
    for generation in ("g1", "g3"):
        messages = derive_messages(c.entries, generation=generation)
        assert [list(b) for m in messages for b in m["content"]] == [
            ["type", "text"],
            ["type", "id", "name", "input"],
            ["type", "tool_use_id", "content", "is_error"],
        ]
        assert messages[2]["content"][0]["is_error"] is False
    c.say("done")
    closed = derive_messages(c.entries, generation="g3")
    assert list(closed[1]["content"][0]) == ["type", "id", "name", "input"]
