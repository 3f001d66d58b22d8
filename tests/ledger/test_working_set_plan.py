"""WorkingSetPlan, Fidelity and derive_with_plan (spec ledger.md §7.5, §7.6; §8 working_set_plan.rs).

G3 is the reference generation; the G2 (3.5.0) differences of §7.5 are tested at the end. Expected
messages are composed by hand from the spec.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from ledger_messages import SUMMARY, A, U

from vakaudit.ledger import Entry, Fidelity, SessionLog, WorkingSetPlan
from vakaudit.ledger.projection import derive_messages, derive_with_plan, packet_transcript, tail_sections

ARROW = "\u2192"


class Chain:
    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def add(self, kind: str, payload: dict) -> Entry:
        eid = f"e{len(self.entries) + 1:03d}"
        parent = self.entries[-1].id if self.entries else None
        entry = Entry(eid, parent, "2026-01-01T00:00:00Z", kind, payload)
        self.entries.append(entry)
        return entry

    def user(self, text: str) -> Entry:
        return self.add("message", {"message": {"role": "user", "content": [{"type": "text", "text": text}]}})

    def say(self, text: str) -> Entry:
        return self.add(
            "message", {"message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}
        )

    def turns(self, *pairs: tuple[str, str]) -> list[str]:
        ids = []
        for question, answer in pairs:
            ids.append(self.user(question).id)
            self.say(answer)
        return ids

    def packet(self, first: str, last: str, summary: str) -> Entry:
        return self.add(
            "compaction",
            {
                "summary": summary,
                "first_turn_id": first,
                "last_turn_id": last,
                "model": "m",
                "tokens_before": 1,
                "reset_all": False,
            },
        )

    def compaction_a(self, summary: str, first_kept: str, reset: bool = False) -> Entry:
        return self.add(
            "compaction",
            {"summary": summary, "first_kept_entry_id": first_kept, "tokens_before": 1, "reset_all": reset},
        )

    def card(self, turn_id: str, asked: str, narration: str) -> Entry:
        card = {
            "turn_id": turn_id,
            "asked": asked,
            "did": [],
            "answered": {"presentations": [], "narration": narration},
            "outcome": "completed",
            "reading": {"act": "answer", "domains": [], "modalities": []},
            "tokens_full": 3,
            "tokens_card": 4,
        }
        return self.add("turn_card", {"turn_id": turn_id, "card": card})


def line(n: int, asked: str, narration: str) -> str:
    return f'#{n} asked: {asked} {ARROW} did: nothing {ARROW} "{narration}"'


# -- the value types -------------------------------------------------------------------------------


def test_fidelity_values() -> None:
    assert [f.value for f in Fidelity] == ["Full", "Card", "Packet"]
    assert Fidelity("Card") is Fidelity.CARD


def test_working_set_plan_is_a_frozen_value() -> None:
    plan = WorkingSetPlan(
        per_turn=[("t1", "Card"), ("t2", Fidelity.FULL)],
        packet_range=["a", "b"],
        retrieved=["t2"],
        budget=100,
        spent=40,
    )
    assert plan.per_turn == (("t1", Fidelity.CARD), ("t2", Fidelity.FULL))
    assert plan.packet_range == ("a", "b")
    assert plan.retrieved == ("t2",)
    assert (plan.budget, plan.spent) == (100, 40)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.budget = 1  # type: ignore[misc]
    assert WorkingSetPlan() == WorkingSetPlan(per_turn=(), packet_range=None, retrieved=(), budget=0, spent=0)
    assert hash(plan) == hash(
        WorkingSetPlan(
            per_turn=(("t1", Fidelity.CARD), ("t2", Fidelity.FULL)),
            packet_range=("a", "b"),
            retrieved=("t2",),
            budget=100,
            spent=40,
        )
    )
    with pytest.raises(ValueError):
        WorkingSetPlan(per_turn=(("t1", "Medium"),))


# -- working_set_plan.rs (G3) ----------------------------------------------------------------------


def test_full_plan_gives_two_messages_per_closed_turn_and_no_turns_block() -> None:
    c = Chain()
    t1, t2 = c.turns(("one", "r1"), ("two", "r2"))
    plan = WorkingSetPlan(per_turn=((t1, Fidelity.FULL), (t2, Fidelity.FULL)))
    messages = derive_with_plan(c.entries, plan, generation="g3")
    assert messages == [U("one"), A("r1"), U("two"), A("r2")]


def test_two_card_turns_and_one_full_turn_give_three_messages() -> None:
    c = Chain()
    t1, t2, t3 = c.turns(("one", "r1"), ("two", "r2"), ("three", "r3"))
    plan = WorkingSetPlan(per_turn=((t1, Fidelity.CARD), (t2, Fidelity.CARD), (t3, Fidelity.FULL)))
    messages = derive_with_plan(c.entries, plan, generation="g3")
    assert messages == [
        U("<turns>\n" + line(1, "one", "r1") + "\n" + line(2, "two", "r2") + "\n</turns>"),
        U("three"),
        A("r3"),
    ]
    assert (
        "#1 asked:" in messages[0]["content"][0]["text"] and "#2 asked:" in messages[0]["content"][0]["text"]
    )


def test_written_cards_are_preferred_over_provisional_ones() -> None:
    c = Chain()
    t1, t2 = c.turns(("one", "r1"), ("two", "r2"))
    c.card(t1, "ONE", "written narration")
    plan = WorkingSetPlan(per_turn=((t1, Fidelity.CARD), (t2, Fidelity.CARD)))
    assert derive_with_plan(c.entries, plan, generation="g3") == [
        U("<turns>\n" + line(1, "ONE", "written narration") + "\n" + line(2, "two", "r2") + "\n</turns>")
    ]


def test_packet_range_without_a_stored_packet_renders_cards_never_a_summary() -> None:
    c = Chain()
    t1, t2 = c.turns(("one", "r1"), ("two", "r2"))
    c.user("open")
    messages = derive_with_plan(c.entries, WorkingSetPlan(packet_range=(t1, t2)), generation="g3")
    assert messages == [
        U("<turns>\n" + line(1, "one", "r1") + "\n" + line(2, "two", "r2") + "\n</turns>"),
        U("open"),
    ]
    assert "<context_summary>" not in str(messages)


def test_incremental_packet_survives_reopen_hides_nothing_and_renders_for_its_plan(tmp_path: Path) -> None:
    header = {
        "session_id": "s",
        "created_at": "2026-01-01T00:00:00Z",
        "cwd": "/tmp/p",
        "contract": {
            "app_version": "4.0.0",
            "provider": "p",
            "model": "m",
            "system_prompt": "",
            "permission_mode": "workspace-write",
        },
    }
    path = tmp_path / "s.jsonl"
    with SessionLog.create(path, header, fsync=False) as log:
        ids = []
        for q, a in (("one", "r1"), ("two", "r2"), ("three", "r3")):
            ids.append(log.append_message({"role": "user", "content": [{"type": "text", "text": q}]}).id)
            log.append_message({"role": "assistant", "content": [{"type": "text", "text": a}]})
        log.append(
            "compaction",
            {
                "summary": "turns one and two",
                "first_turn_id": ids[0],
                "last_turn_id": ids[1],
                "model": "m",
                "tokens_before": 9,
                "reset_all": False,
            },
        )
    reopened = SessionLog.open_read_only(path)
    assert reopened.derive_messages() == [U("one"), A("r1"), U("two"), A("r2"), U("three"), A("r3")]
    plan = WorkingSetPlan(per_turn=((ids[2], Fidelity.FULL),), packet_range=(ids[0], ids[1]))
    assert reopened.derive_with_plan(plan) == [SUMMARY("turns one and two"), U("three"), A("r3")]


def test_packets_match_exact_ranges_only_and_the_newest_wins() -> None:
    c = Chain()
    t1, t2, t3 = c.turns(("one", "r1"), ("two", "r2"), ("three", "r3"))
    c.packet(t1, t2, "old")
    c.packet(t1, t3, "wide")
    c.packet(t1, t2, "new")
    assert derive_with_plan(
        c.entries, WorkingSetPlan(per_turn=((t3, Fidelity.FULL),), packet_range=(t1, t2)), generation="g3"
    ) == [
        SUMMARY("new"),
        U("three"),
        A("r3"),
    ]
    assert derive_with_plan(c.entries, WorkingSetPlan(packet_range=(t1, t3)), generation="g3") == [
        SUMMARY("wide")
    ]
    # no packet stored for (t2, t3): every unplanned closed turn is a card, in or out of the range
    assert derive_with_plan(c.entries, WorkingSetPlan(packet_range=(t2, t3)), generation="g3") == [
        U(
            "<turns>\n"
            + line(1, "one", "r1")
            + "\n"
            + line(2, "two", "r2")
            + "\n"
            + line(3, "three", "r3")
            + "\n</turns>"
        )
    ]


def test_transcript_carries_the_prior_summary_forward() -> None:
    c = Chain()
    t1, t2, t3 = c.turns(("one", "r1"), ("two", "r2"), ("three", "r3"))
    c.card(t2, "two", "r2")
    c.card(t3, "three", "r3")
    c.packet(t1, t1, "S1")
    text, chars = packet_transcript(c.entries, t1, t3)
    assert text == "S1\n\n" + line(2, "two", "r2") + "\n" + line(3, "three", "r3") + "\n"
    assert chars == len(text)
    # a longer stored prefix packet is preferred as the seed
    c.packet(t1, t2, "S12")
    assert packet_transcript(c.entries, t1, t3)[0] == "S12\n\n" + line(3, "three", "r3") + "\n"


def test_unknown_turn_ids_in_a_plan_hide_nothing() -> None:
    c = Chain()
    t1, t2 = c.turns(("one", "r1"), ("two", "r2"))
    plan = WorkingSetPlan(per_turn=(("nope", Fidelity.FULL), (t2, Fidelity.FULL)), packet_range=("x", "y"))
    assert derive_with_plan(c.entries, plan, generation="g3") == [
        U("<turns>\n" + line(1, "one", "r1") + "\n</turns>"),
        U("two"),
        A("r2"),
    ]


def test_none_plan_equals_derive_messages() -> None:
    c = Chain()
    c.turns(("one", "r1"))
    c.user("open")
    for generation in ("g1", "g1p", "g2", "g3", "g4"):
        assert derive_with_plan(c.entries, None, generation=generation) == derive_messages(
            c.entries, generation=generation
        )


def test_the_open_turn_is_never_planned() -> None:
    c = Chain()
    (t1,) = c.turns(("one", "r1"))
    t2 = c.user("open").id
    plan = WorkingSetPlan(per_turn=((t1, Fidelity.FULL), (t2, Fidelity.CARD)), packet_range=(t2, t2))
    assert derive_with_plan(c.entries, plan, generation="g3") == [U("one"), A("r1"), U("open")]


# -- G2 (3.5.0) differences ------------------------------------------------------------------------


def test_g2_boundary_is_cumulative_and_its_summary_leads() -> None:
    c = Chain()
    t1, t2 = c.turns(("one", "r1"), ("two", "r2"))
    c.compaction_a("S", t2)
    c.user("three")
    assert derive_messages(c.entries, generation="g2") == [SUMMARY("S"), U("two"), A("r2"), U("three")]
    # G3 does not read shape-A compactions as boundaries or packets
    assert derive_messages(c.entries, generation="g3") == [U("one"), A("r1"), U("two"), A("r2"), U("three")]
    c.compaction_a("S-unknown", "no-such-entry")
    assert derive_messages(c.entries, generation="g2") == [
        SUMMARY("S-unknown"),
        U("one"),
        A("r1"),
        U("two"),
        A("r2"),
        U("three"),
    ]
    c.compaction_a("reset", "", reset=True)
    c.user("four")
    assert derive_messages(c.entries, generation="g2") == [SUMMARY("reset"), U("four")]


def test_g2_unplanned_closed_turns_are_packet_in_range_card_with_a_card_else_full() -> None:
    c = Chain()
    t1, t2, t3 = c.turns(("one", "r1"), ("two", "r2"), ("three", "r3"))
    c.card(t2, "two", "r2 card")
    c.user("four")
    plan = WorkingSetPlan(packet_range=(t1, t1))
    assert derive_with_plan(c.entries, plan, generation="g2") == [
        U("<turns>\n" + line(2, "two", "r2 card") + "\n</turns>"),
        U("three"),
        A("r3"),
        U("four"),
    ]
    # G2 never looks up range-keyed packets: a shape-B line is not a G2 compaction
    c.packet(t1, t1, "P1")
    assert "P1" not in str(derive_with_plan(c.entries, plan, generation="g2"))
    # under G3 the same plan renders the stored packet and a card line for every unplanned turn
    assert derive_with_plan(c.entries, plan, generation="g3") == [
        SUMMARY("P1"),
        U("<turns>\n" + line(2, "two", "r2 card") + "\n" + line(3, "three", "r3") + "\n</turns>"),
        U("four"),
    ]


def test_g2_turns_block_follows_the_summary() -> None:
    c = Chain()
    t1, t2 = c.turns(("one", "r1"), ("two", "r2"))
    c.compaction_a("S", t2)
    t3 = c.user("three").id
    c.say("r3")
    c.card(t3, "three", "r3")
    c.user("four")
    plan = WorkingSetPlan(per_turn=((t2, Fidelity.FULL), (t3, Fidelity.CARD)))
    assert derive_with_plan(c.entries, plan, generation="g2") == [
        SUMMARY("S"),
        U("<turns>\n" + line(3, "three", "r3") + "\n</turns>"),
        U("two"),
        A("r2"),
        U("four"),
    ]


def test_g2_thread_drops_directives_equal_to_a_projected_message() -> None:
    c = Chain()
    c.add("goal_update", {"revision": 1, "relation": "new", "request": "one"})
    t1, t2 = c.turns(("one", "r1"), ("two", "r2"))
    c.add("goal_update", {"revision": 2, "relation": "adds_to", "request": "three"})
    c.user("three")
    assert tail_sections(c.entries, generation="g2").thread is None
    thread = tail_sections(c.entries, generation="g2", plan=WorkingSetPlan(packet_range=(t1, t1))).thread
    assert "- Turn 1: one\n" in thread and "- Turn 2" not in thread and "- Turn 3" not in thread
