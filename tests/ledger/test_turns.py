"""TurnIndex structure and turn renderings (spec ledger.md §7.2, §7.3; §8 "turns.rs unit tests").

Expected values are written by hand from the spec text.
"""

from __future__ import annotations

import hashlib

import pytest

from vakaudit.ledger import Entry, TurnIndex
from vakaudit.ledger.digest import card_line, strip_duplicate_fences
from vakaudit.ledger.turns import Generation, TurnIndexBuilder, generation_for

ARROW = "\u2192"


class Chain:
    """A hand-built active chain; ids are e001, e002, ... unless given."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def add(self, kind: str, payload: dict, eid: str | None = None) -> Entry:
        eid = eid or f"e{len(self.entries) + 1:03d}"
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

    def call(self, cid: str, name: str, tool_input: dict) -> Entry:
        return self.msg("assistant", [{"type": "tool_use", "id": cid, "name": name, "input": tool_input}])

    def result(self, cid: str, content: str, is_error: bool = False) -> Entry:
        block = {"type": "tool_result", "tool_use_id": cid, "content": content, "is_error": is_error}
        return self.msg("user", [block])

    def control(self, tag: str, text: str) -> Entry:
        return self.msg("user", [{"type": "text", "text": text}], meta={"control": tag})

    def presentation(self, turn_id: str, tool_use_id: str, title: str, digest: str = "digest1") -> Entry:
        return self.add(
            "presentation",
            {
                "turn_id": turn_id,
                "source": {"kind": "tool_call", "tool_use_id": tool_use_id},
                "semantic_type": "research.synthesis",
                "skill_id": "skill",
                "skill_version": "1",
                "schema_version": 1,
                "payload": {"takeaways": ["Rust 2.0 shipped"]},
                "payload_digest": digest,
                "derived_from": ["call-1"],
                "title": title,
                "identity_digest": "Rust news: Rust 2.0 shipped",
            },
        )

    def intent(self, domains: list[str], act: str = "answer") -> Entry:
        reading = {
            "act": act,
            "domains": domains,
            "input_modalities": ["text"],
            "output_modalities": ["text"],
        }
        return self.add("intent", {"reading": reading, "engagement": {}, "provenance": {}})


SEARCH_RESULT = '[{"title":"Rust 2.0","url":"https://example.com/a"}]'


def two_closed_one_open() -> tuple[Chain, str, str, str]:
    c = Chain()
    t1 = c.user("hello there").id
    c.say("hi, how can I help?")
    t2 = c.user("search for rust news").id
    c.call("call-1", "search", {"query": "rust news"})
    c.result("call-1", SEARCH_RESULT)
    c.call("card-1", "emit_research_card", {"semantic_type": "research.synthesis"})
    c.result("card-1", '{"presentation":"pres-1","ok":true}')
    c.say("Here is what I found.")
    c.presentation(t2, "card-1", "Rust news")
    t3 = c.user("now check the changelog").id
    c.call("call-2", "webfetch", {"url": "https://example.com/changelog"})
    return c, t1, t2, t3


def test_two_closed_and_one_open_turn_are_indexed() -> None:
    c, t1, t2, t3 = two_closed_one_open()
    index = TurnIndex.from_chain(c.entries, generation="g3")
    assert [t.turn_id for t in index.turns] == [t1, t2, t3]
    assert [t.number for t in index.turns] == [1, 2, 3]
    assert [t.closed for t in index.turns] == [True, True, False]
    assert index.open_turn is index.turns[2]


def test_a_turn_is_never_split() -> None:
    c, _, t2, _ = two_closed_one_open()
    turn = TurnIndex.from_chain(c.entries, generation="g3").turn_by_id(t2)
    assert len(turn.steps) == 2
    assert turn.evidence_ids == ["call-1", "card-1"]
    assert len(turn.presentations) == 1
    assert turn.final_answer.id == "e008"
    # raw tail: two calls, two results, the answer
    assert [e.id for e in turn.raw_tail] == ["e004", "e005", "e006", "e007", "e008"]


def test_full_record_keeps_the_call_pattern_with_digested_result_and_card_ack() -> None:
    c, _, t2, _ = two_closed_one_open()
    record = TurnIndex.from_chain(c.entries, generation="g3").turn_by_id(t2).full_record()
    assert [m["role"] for m in record] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    assert len(SEARCH_RESULT) == 52
    assert record[2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "call-1",
                "content": "1 results:\n- Rust 2.0 (https://example.com/a)\n"
                "[evidence:call-1 \u2014 52 chars; call recall to expand]",
                "is_error": False,
            }
        ],
    }
    # the card call's result becomes the ack naming the presentation ENTRY id
    assert record[4]["content"][0]["content"] == '{"presentation":"e009","ok":true}'
    assert record[3]["content"][0]["name"] == "emit_research_card"
    assert record[5] == {"role": "assistant", "content": [{"type": "text", "text": "Here is what I found."}]}


def test_full_record_drops_thinking_unanswered_calls_and_keeps_errors_verbatim() -> None:
    c = Chain()
    t = c.user("do it").id
    c.msg(
        "assistant",
        [
            {"type": "thinking", "text": "hmm", "signature": "sig"},
            {"type": "text", "text": "calling"},
            {"type": "tool_use", "id": "a", "name": "read", "input": {"path": "x"}},
            {"type": "tool_use", "id": "lost", "name": "read", "input": {"path": "y"}},
        ],
    )
    c.result("a", "boom", is_error=True)
    c.msg(
        "assistant",
        [
            {"type": "thinking", "text": "only thinking"},
            {"type": "tool_use", "id": "z", "name": "x", "input": {}},
        ],
    )
    c.say("done")
    record = TurnIndex.from_chain(c.entries, generation="g3").turn_by_id(t).full_record()
    assert record == [
        {"role": "user", "content": [{"type": "text", "text": "do it"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "calling"},
                {"type": "tool_use", "id": "a", "name": "read", "input": {"path": "x"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "a", "content": "boom", "is_error": True}],
        },
        # the second step had only thinking and an unanswered call: skipped entirely
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
    ]


def test_g4_full_record_drops_text_that_accompanies_tool_calls() -> None:
    c = Chain()
    t = c.user("do it").id
    c.msg(
        "assistant",
        [{"type": "text", "text": "calling"}, {"type": "tool_use", "id": "a", "name": "read", "input": {}}],
    )
    c.result("a", "x", is_error=True)
    c.say("done")
    record = TurnIndex.from_chain(c.entries, generation="g4").turn_by_id(t).full_record("g4")
    assert record[1] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "a", "name": "read", "input": {}}],
    }


def test_duplicate_fences_are_stripped() -> None:
    # canonical payload {"label":"Temperature","unit":"C","value":29.1}: keys sorted, compact
    canonical = b'{"label":"Temperature","unit":"C","value":29.1}'
    digest = hashlib.sha256(canonical).hexdigest()
    fence = '{"semantic_type":"metric","payload":{"label":"Temperature","value":29.1,"unit":"C"}}'
    narration = f"It is 29.1\u00b0C.\n```vak\n{fence}\n```\nStay hydrated."
    assert strip_duplicate_fences(narration, [digest]).strip() == "It is 29.1\u00b0C.\nStay hydrated."
    other = '```vak\n{"semantic_type":"metric","payload":{"label":"Wind"}}\n```'
    assert strip_duplicate_fences(other, [digest]).strip() == other

    # and through a turn's full record: the fence matching a presentation of the turn disappears
    c = Chain()
    t = c.user("temperature?").id
    c.say(narration)
    c.add(
        "presentation",
        {
            "turn_id": t,
            "source": {"kind": "fence", "message_entry_id": "e002"},
            "semantic_type": "metric",
            "payload": {"label": "Temperature", "unit": "C", "value": 29.1},
            "payload_digest": digest,
            "derived_from": [],
            "title": "Temperature",
            "identity_digest": "",
        },
    )
    record = TurnIndex.from_chain(c.entries, generation="g3").turn_by_id(t).full_record()
    assert record[-1]["content"][0]["text"] == "It is 29.1\u00b0C.\nStay hydrated."


def test_card_line_format() -> None:
    c, _, t2, _ = two_closed_one_open()
    turn = TurnIndex.from_chain(c.entries, generation="g3").turn_by_id(t2)
    card = turn.build_card("completed", "Here is what I found.")
    assert card["did"] == [
        {
            "tool": "search",
            "args_digest": {"query": "rust news"},
            "evidence_id": "call-1",
            "shape": "1 results, 52 chars",
        }
    ]
    assert card_line(card, 2) == (
        f'#2 asked: search for rust news {ARROW} did: search {ARROW} research.synthesis "Rust news" [pres:e009; ev:call-1]'
    )


def test_card_line_without_presentation_quotes_twelve_words_of_narration() -> None:
    card = {
        "asked": "q",
        "did": [
            {"tool": "search", "evidence_id": "a"},
            {"tool": "read", "evidence_id": "b"},
            {"tool": "search", "evidence_id": "c"},
        ],
        "answered": {
            "presentations": [],
            "narration": "one two three four five six seven eight nine ten eleven twelve thirteen",
        },
    }
    assert card_line(card, 7) == (
        f'#7 asked: q {ARROW} did: search\u00d72, read {ARROW} "one two three four five six seven eight nine ten eleven twelve\u2026"'
    )
    empty = {"asked": "hi", "did": [], "answered": {"presentations": [], "narration": "hello"}}
    assert card_line(empty, 1) == f'#1 asked: hi {ARROW} did: nothing {ARROW} "hello"'


def test_control_messages_are_not_turns_or_steps() -> None:
    c = Chain()
    t1 = c.user("do a thing").id
    c.call("c1", "bash", {"command": "ls"})
    c.result("c1", "ok")
    c.control("stop_hook", "[stop-hook]: keep going")
    c.say("done")
    index = TurnIndex.from_chain(c.entries, generation="g3")
    assert len(index.turns) == 1
    turn = index.turn_by_id(t1)
    assert len(turn.steps) == 1
    assert turn.closed
    # the nudge stays in the raw tail (open-turn rendering) but not in the full record
    assert [e.id for e in turn.raw_tail] == ["e002", "e003", "e004", "e005"]
    assert all("[stop-hook]" not in str(m) for m in turn.full_record())


def test_control_message_before_any_turn_is_dropped_and_marker_text_alone_is_a_directive() -> None:
    c = Chain()
    c.control("stop_guard", "[stop-guard]: early")
    c.user("[grounding-check] this is the user's own text")
    index = TurnIndex.from_chain(c.entries, generation="g3")
    assert [t.turn_id for t in index.turns] == ["e002"]
    assert index.turns[0].raw_tail == []


def test_intent_reading_attaches_to_the_current_last_turn_in_g3_and_the_next_in_g4() -> None:
    c = Chain()
    t1 = c.user("find the weather").id
    c.intent(["weather"])
    c.say("it is sunny")
    index = TurnIndex.from_chain(c.entries, generation="g3")
    turn = index.turn_by_id(t1)
    assert turn.reading == {"act": "answer", "domains": ["weather"], "modalities": ["text"]}
    assert turn.build_card("completed", "it is sunny")["reading"]["act"] == "answer"

    # intent written before its directive: G3 gives it to the previous turn (the off-by-one),
    # G4 to the directive that follows
    c = Chain()
    c.user("one")
    c.say("a1")
    c.intent(["finance"])
    c.user("two")
    c.say("a2")
    g3 = TurnIndex.from_chain(c.entries, generation="g3")
    assert g3.turns[0].reading["domains"] == ["finance"]
    assert g3.turns[1].reading is None
    g4 = TurnIndex.from_chain(c.entries, generation="g4")
    assert g4.turns[0].reading is None
    assert g4.turns[1].reading["domains"] == ["finance"]


def test_activities_are_ignored_by_turn_structure() -> None:
    c = Chain()
    c.user("hi")
    c.add(
        "activity",
        {
            "activity_id": "a1",
            "activity_kind": "diagnostic",
            "status": "succeeded",
            "label": "note",
            "data": {},
        },
    )
    c.say("hello")
    index = TurnIndex.from_chain(c.entries, generation="g3")
    assert len(index.turns) == 1
    assert [e.id for e in index.turns[0].raw_tail] == ["e003"]


def test_compaction_entries_become_packets_and_a_reset_marks_turns_behind_it() -> None:
    c = Chain()
    t1 = c.user("first").id
    c.say("first answer")
    c.add(
        "compaction",
        {
            "summary": "summary text",
            "first_turn_id": t1,
            "last_turn_id": t1,
            "model": "fixture-model",
            "tokens_before": 100,
            "reset_all": False,
        },
    )
    index = TurnIndex.from_chain(c.entries, generation="g3")
    assert len(index.packets) == 1
    assert index.packets[0].summary == "summary text"
    assert (index.packets[0].first_turn_id, index.packets[0].last_turn_id) == (t1, t1)
    assert not index.turns[0].behind_reset

    c.add(
        "compaction",
        {
            "summary": "handoff",
            "first_turn_id": "",
            "last_turn_id": "",
            "model": "",
            "tokens_before": 5,
            "reset_all": True,
        },
    )
    c.user("second")
    index = TurnIndex.from_chain(c.entries, generation="g3")
    assert len(index.packets) == 1  # a reset is never a packet
    assert [t.behind_reset for t in index.turns] == [True, False]
    # turns behind a reset still count for numbering
    assert index.turns[1].number == 2


def test_user_messages_without_text_and_early_assistant_messages_are_ignored() -> None:
    c = Chain()
    c.say("assistant before any turn")
    c.result("x", "result before any turn")
    t = c.user("look").id
    c.msg(
        "user", [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}]
    )
    c.say("seen")
    index = TurnIndex.from_chain(c.entries, generation="g3")
    assert [x.turn_id for x in index.turns] == [t]
    assert [e.id for e in index.turns[0].raw_tail] == ["e005"]


def test_results_before_a_step_stay_in_the_tail_but_are_not_evidence() -> None:
    c = Chain()
    c.user("go")
    c.result("orphan", "r")
    c.call("k", "read", {})
    c.result("k", "r2")
    index = TurnIndex.from_chain(c.entries, generation="g3")
    turn = index.turns[0]
    assert turn.evidence_ids == ["k"]
    assert [e.id for e in turn.raw_tail] == ["e002", "e003", "e004"]
    assert not turn.closed


def test_cards_attach_by_turn_id_and_a_later_card_replaces_an_earlier_one() -> None:
    c = Chain()
    t = c.user("q").id
    c.say("a")
    c.add("turn_card", {"turn_id": t, "card": {"turn_id": t, "asked": "first"}})
    c.add("turn_card", {"turn_id": t, "card": {"turn_id": t, "asked": "second"}})
    c.add("turn_card", {"turn_id": "unknown", "card": {"asked": "nobody"}})
    index = TurnIndex.from_chain(c.entries, generation="g3")
    assert index.turns[0].card["asked"] == "second"


def test_presentation_written_before_its_directive_still_attaches() -> None:
    c = Chain()
    c.presentation("e002", "card-9", "Early")
    c.user("q")
    c.say("a")
    index = TurnIndex.from_chain(c.entries, generation="g3")
    assert [p.id for p in index.turns[0].presentations] == ["e001"]


def test_provisional_card_for_a_closed_turn_without_one() -> None:
    c = Chain()
    c.user("what is the capital of France")
    long_answer = "Paris is the capital. " + " ".join(["word"] * 70)
    c.say(long_answer)
    c.user("next")
    index = TurnIndex.from_chain(c.entries, generation="g3")
    first = index.turns[0]
    assert first.card is None
    card = first.effective_card()
    assert card["outcome"] == "unrecorded"
    assert card["answered"]["narration"] == "Paris is the capital."  # over 60 words: first sentence
    assert card["asked"] == "what is the capital of France"
    assert index.turns[1].effective_card() is None  # the open turn gets none


def test_incremental_builder_matches_from_chain_on_every_prefix() -> None:
    c, *_ = two_closed_one_open()
    builder = TurnIndexBuilder(generation="g3")
    for i, entry in enumerate(c.entries, start=1):
        builder.add(entry)
        fresh = TurnIndex.from_chain(c.entries[:i], generation="g3")
        live = builder.index
        assert [(t.turn_id, t.closed, len(t.steps), t.evidence_ids) for t in live.turns] == [
            (t.turn_id, t.closed, len(t.steps), t.evidence_ids) for t in fresh.turns
        ]
        assert [t.full_record() for t in live.turns] == [t.full_record() for t in fresh.turns]


def test_turn_index_works_on_entries_parsed_from_lines() -> None:
    line = (
        b'{"id":"a","parent_id":null,"ts":"2026-01-01T00:00:00Z","kind":"message",'
        b'"message":{"role":"user","content":[{"type":"text","text":"hi"}]}}'
    )
    index = TurnIndex.from_chain([Entry.from_line(line)], generation="g3")
    assert index.turns[0].directive_text == "hi"


@pytest.mark.parametrize(
    ("version", "generation"),
    [
        ("2.0.1", "g1"),
        ("3.4.9", "g1"),
        ("3.5.0", "g2"),
        ("3.5", "g2"),
        ("3.5.0-rc.1", "g2"),
        ("3.5.1", "g3"),
        ("4.0.0", "g3"),
        ("oracle", "g3"),
        ("test", "g3"),
        ("", "g3"),
    ],
)
def test_generation_for_app_version(version: str, generation: str) -> None:
    assert generation_for(version) == generation


def test_generation_names() -> None:
    assert [g.value for g in Generation] == ["g1", "g1p", "g2", "g3", "g4"]
    assert TurnIndex.from_chain([], generation="G1'").generation is Generation.G1P
    with pytest.raises(ValueError):
        TurnIndex.from_chain([], generation="g5")
