"""Projection of ledgers written by vak itself (/work/shared/vak-samples, packet-era G3 code).

Independent expectations: vak's own ``derive_messages`` output recorded in expected.json, vak's own
message bytes in the ledger lines, the turn cards vak wrote at turn close, and (for the re-serialized
digest messages and the card block) bytes composed by hand from the spec.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vakaudit.ledger import Entry, Fidelity, SessionLog, WorkingSetPlan, dumps
from vakaudit.ledger.projection import THREAD_RULES, derive_tagged, derive_with_plan, tail_sections
from vakaudit.ledger.turns import TurnIndex

ARROW = "\u2192"
EM = "\u2014"


def raw_lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def message_bytes(raw_line: bytes) -> bytes:
    """The ``message`` object of a ledger line, sliced out of vak's own bytes."""
    start = raw_line.index(b'"kind":"message","message":') + len(b'"kind":"message","message":')
    end = raw_line.find(b',"meta":{', start)
    return raw_line[start : end if end >= 0 else len(raw_line) - 1]


def tool_result_bytes(tool_use_id: str, content_json: str) -> bytes:
    return (
        '{"role":"user","content":[{"type":"tool_result","tool_use_id":"'
        + tool_use_id
        + '","content":'
        + content_json
        + ',"is_error":false}]}'
    ).encode()


@pytest.mark.parametrize("name", ["basic", "branch"])
def test_derive_messages_equals_vaks_output(vak_samples: Path, name: str) -> None:
    expected = json.loads((vak_samples / name / "expected.json").read_text(encoding="utf-8"))
    log = SessionLog.open_read_only(vak_samples / name / "ledger.jsonl")
    assert log.generation == "g3"  # app_version "oracle": the packet-era code that wrote them
    assert [e.id for e in log.chain_to_root()] == expected["chain_to_root"]
    assert log.derive_messages() == expected["derive_messages"]


def test_basic_projection_bytes(vak_samples: Path) -> None:
    lines = raw_lines(vak_samples / "basic" / "ledger.jsonl")
    log = SessionLog.open_read_only(vak_samples / "basic" / "ledger.jsonl")
    got = log.derive_messages()
    verbatim = {0: 4, 1: 7, 3: 9, 4: 15, 5: 17, 7: 19, 8: 25, 9: 27, 11: 29}  # message -> 1-based line
    digested = {
        2: tool_result_bytes(
            "call-1",
            f'"1 results:\\n- Caf\u00e9 \u00dcn\u00efcode (https://example.com/a)\\n[evidence:call-1 {EM} 56 chars; call recall to expand]"',
        ),
        6: tool_result_bytes(
            "call-2",
            f'"exit code: 0\\na.txt\\nb.txt\\nexit code: 0\\n[evidence:call-2 {EM} 24 chars; call recall to expand]"',
        ),
        10: tool_result_bytes(
            "call-3",
            f'"headings: # Title\\nFirst paragraph here.\\n(5 lines, 54 bytes)\\n[evidence:call-3 {EM} 54 chars; call recall to expand]"',
        ),
    }
    expected = [message_bytes(lines[verbatim[i] - 1]) if i in verbatim else digested[i] for i in range(12)]
    assert len(got) == 12
    for i, message in enumerate(got):
        assert dumps(message) == expected[i], i
    assert dumps(got) == b"[" + b",".join(expected) + b"]"


def test_branch_projection_bytes(vak_samples: Path) -> None:
    lines = raw_lines(vak_samples / "branch" / "ledger.jsonl")
    got = SessionLog.open_read_only(vak_samples / "branch" / "ledger.jsonl").derive_messages()
    expected = [
        message_bytes(lines[3]),
        message_bytes(lines[5]),
        tool_result_bytes(
            "call-1", f'"array, 0 items\\n[evidence:call-1 {EM} 2 chars; call recall to expand]"'
        ),
        message_bytes(lines[7]),
        message_bytes(lines[21]),
        message_bytes(lines[22]),
    ]
    assert dumps(got) == b"[" + b",".join(expected) + b"]"


def test_branch_in_process_after_branch_at(vak_samples: Path, tmp_path: Path) -> None:
    """Replay vak's own in-process sequence: branch_at, then the two appends, on a copy."""
    sample = vak_samples / "branch"
    expected = json.loads((sample / "expected.json").read_text(encoding="utf-8"))["in_process_after_branch"]
    lines = raw_lines(sample / "ledger.jsonl")
    copy = tmp_path / "ledger.jsonl"
    copy.write_bytes(b"".join(line + b"\n" for line in lines[:21]))
    with SessionLog.open(copy, fsync=False) as log:
        log.branch_at(expected["branch_point"])
        for raw in lines[21:]:
            entry = Entry.from_line(raw)
            log.append(entry.kind, entry.payload, entry_id=entry.id, ts=entry.ts)
        assert log.tail_id == expected["in_process_tail_id"]
        assert [e.id for e in log.chain_to_root()] == expected["in_process_chain_to_root"]
        assert log.derive_messages() == expected["in_process_derive_messages"]
        assert log.total_usage() == expected["in_process_total_usage"]
        turns = log.turn_index().turns
        assert [t.turn_id for t in turns] == [expected["t1"], expected["t2b"]]
    assert copy.read_bytes() == (sample / "ledger.jsonl").read_bytes()


@pytest.mark.parametrize("name", ["basic", "branch"])
def test_provisional_cards_agree_with_the_cards_vak_wrote(vak_samples: Path, name: str) -> None:
    chain = SessionLog.open_read_only(vak_samples / name / "ledger.jsonl").chain_to_root()
    written = TurnIndex.from_chain(chain, generation="g3")
    without_cards = TurnIndex.from_chain([e for e in chain if e.kind != "turn_card"], generation="g3")
    checked = 0
    for turn, bare in zip(written.turns, without_cards.turns, strict=True):
        assert bare.card is None
        if turn.card is None:  # the branched turn of the branch sample got no card
            continue
        provisional = bare.effective_card()
        assert provisional["outcome"] == "unrecorded"
        for key in ("turn_id", "asked", "did", "answered", "reading"):
            assert provisional[key] == turn.card[key], (turn.number, key)
        checked += 1
    assert checked == (3 if name == "basic" else 1)


def test_all_card_plan_renders_one_turns_block(vak_samples: Path) -> None:
    log = SessionLog.open_read_only(vak_samples / "basic" / "ledger.jsonl")
    turns = log.turn_index().turns
    plan = WorkingSetPlan(per_turn=tuple((t.turn_id, Fidelity.CARD) for t in turns))
    block = (
        "<turns>\n"
        f'#1 asked: Find the caf\u00e9 hours {EM} "today" please {ARROW} did: search {ARROW} '
        'metric "Result 1" [pres:01a22d2b-2692-71a6-b20e-30161796b691; ev:call-1]\n'
        f"#2 asked: Now run ls in C:\\temp {ARROW} did: bash {ARROW} "
        'metric "Result 2" [pres:01a22d2b-2694-721a-9205-5e198de59fbe; ev:call-2]\n'
        f"#3 asked: Summarize \u65e5\u672c\u8a9e text {ARROW} did: read {ARROW} "
        'metric "Result 3" [pres:01a22d2b-2696-74c6-8f21-38a3b0043ee9; ev:call-3]\n'
        "</turns>"
    )
    assert log.derive_with_plan(plan) == [{"role": "user", "content": [{"type": "text", "text": block}]}]


def test_sample_tail_sections(vak_samples: Path) -> None:
    log = SessionLog.open_read_only(vak_samples / "basic" / "ledger.jsonl")
    chain = log.chain_to_root()
    plain = tail_sections(chain, generation="g3")
    assert plain.intent == "<intent>\nAnswer turn 3 directly.\n</intent>"
    assert plain.work_contract is None and plain.workspace is None
    assert plain.thread is None  # every directive is verbatim without a plan
    t1, t2, t3 = (t.turn_id for t in log.turn_index().turns)
    plan = WorkingSetPlan(per_turn=((t3, Fidelity.FULL),), packet_range=(t1, t2))
    assert tail_sections(chain, generation="g3", plan=plan).thread == (
        '<conversation_thread revision="3">\n'
        f'Primary objective: Find the caf\u00e9 hours {EM} "today" please\n'
        "User request timeline across turns:\n"
        f'- Turn 1: Find the caf\u00e9 hours {EM} "today" please\n'
        "- Turn 2: Now run ls in C:\\temp\n"
        f"{THREAD_RULES}\n"
        "</conversation_thread>"
    )
    # no packet is stored for (t1, t2): those turns ride as cards, the third at Full
    messages = derive_with_plan(chain, plan, generation="g3")
    assert messages[0]["content"][0]["text"].startswith("<turns>\n#1 asked: ")
    assert [m["role"] for m in messages[1:]] == ["user", "assistant", "user", "assistant"]


def test_sample_projection_tags_each_message_with_its_entry(vak_samples: Path) -> None:
    chain = SessionLog.open_read_only(vak_samples / "branch" / "ledger.jsonl").chain_to_root()
    tagged = derive_tagged(chain, generation="g3")
    t1 = "01a22d2b-2699-789b-b826-c1a6d97c9bb5"
    t2b = "01a22d2b-269c-7cdb-8b88-5038e3c841f0"
    # closed turns are rendered per turn (full record): the turn id names every message of it
    assert [p.entry_id for p in tagged] == [t1, t1, t1, t1, t2b, t2b]
    assert not any(p.is_control or p.is_summary for p in tagged)
