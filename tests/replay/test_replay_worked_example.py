"""The worked example of replay spec §17, replayed from a ledger and compared byte for byte."""

from __future__ import annotations

import json

import pytest
from replay_ledgers import BASH, FIND_TOOLS, READ

from vakaudit.ledger import SessionLog
from vakaudit.ledger.jsonenc import dumps
from vakaudit.replay import HostParams, anthropic_body, iter_requests, openai_body
from vakaudit.replay.prefix import prefix_tokens_estimate

SYSTEM = "You are vak, a general-purpose agent."
TOOLS = [FIND_TOOLS, READ, BASH]
DIGEST = "77677126b3312893eb13a8d9b18e1312e6ce6b8b24e982283345d05447819f24"
TEMPORAL = "…time…"
STANCE = "Epistemic stance: operational\n- …\n<CARD_STILL_APPLIES sentence>"
TAIL = (
    "<turn_context>\n…time…\n</turn_context>\n<intent>\nCheck before acting.\n</intent>\n"
    "<stance>\nEpistemic stance: operational\n- …\n<CARD_STILL_APPLIES sentence>\n</stance>"
)
TOOL_USE = {"type": "tool_use", "id": "c1", "name": "bash", "input": {"command": "ls"}}


def _receipt(usage: dict) -> dict:
    return {
        "purpose": "execute",
        "provider": "anthropic",
        "model": "claude-x",
        "winning_attempt": 0,
        "attempts": [
            {
                "ordinal": 0,
                "reason": "initial",
                "domain": "unknown",
                "settlement": "ok",
                "latency_ms": 5,
                "usage": usage,
            }
        ],
        "prefix_digest": DIGEST,
    }


@pytest.fixture
def example_ledger(tmp_path):
    path = tmp_path / "example.jsonl"
    ids = iter(f"0190aaaa-0000-7000-8000-{n:012x}" for n in range(1, 1000))
    clock = iter(range(1_800_000_000_000_000_000, 1_900_000_000_000_000_000, 1_000_000))
    header = {
        "session_id": "s-example",
        "created_at": "2026-01-01T00:00:00Z",
        "cwd": "/tmp/proj",
        "contract": {
            "app_version": "3.5.1",
            "provider": "anthropic",
            "model": "claude-x",
            "system_prompt": SYSTEM,
        },
    }
    log = SessionLog.create(path, header, clock=lambda: next(clock), new_id=lambda: next(ids), fsync=False)
    binding = {
        "epoch": 1,
        "capability_ids": ["Tool:bash", "Tool:read"],
        "excluded_ids": [],
        "system_prompt": SYSTEM,
        "tool_schemas": TOOLS,
        "core_tool_names": ["read", "bash"],
        "deferred_tool_names": [],
        "tool_index": "",
        "tool_domains": {},
    }
    intent = {"reading": {"act": "act", "domains": []}, "engagement": {}, "provenance": {}}
    log.append("turn_capabilities_bound", binding)
    log.append("intent", {**intent, "model_visible": "Check before acting."})
    log.append_message({"role": "user", "content": [{"type": "text", "text": "list the repo"}]})
    u1 = {"input_tokens": 120, "output_tokens": 9}
    # tail 166 bytes + "list the repo" 13 = 179 chars -> estimate 45 -> prefix_tokens 120 - 45
    log.append("receipt", {**_receipt(u1), "prefix_tokens": 75})
    log.append_message({"role": "assistant", "content": [TOOL_USE]}, {"usage": u1})
    result = {"type": "tool_result", "tool_use_id": "c1", "content": "a.txt\nb.txt", "is_error": False}
    log.append_message({"role": "user", "content": [result]})
    u2 = {"input_tokens": 150, "output_tokens": 9}
    log.append("receipt", _receipt(u2))
    log.append_message(
        {"role": "assistant", "content": [{"type": "text", "text": "<answer>"}]}, {"usage": u2}
    )
    log.append("turn_capabilities_bound", {**binding, "epoch": 2})
    log.append("intent", {**intent, "model_visible": "Check before acting."})
    log.append_message({"role": "user", "content": [{"type": "text", "text": "and the sizes?"}]})
    u3 = {"input_tokens": 200, "output_tokens": 9}
    log.append("receipt", _receipt(u3))
    log.append_message({"role": "assistant", "content": [{"type": "text", "text": "tiny"}]}, {"usage": u3})
    log.close()
    return path


def _steps(path, **host):
    return list(iter_requests(path, host=HostParams(temporal=TEMPORAL, stance=STANCE, **host)))


def test_prefix_digest_and_tokens(example_ledger):
    steps = _steps(example_ledger)
    assert [s.computed_digest for s in steps] == [DIGEST] * 3
    assert prefix_tokens_estimate(SYSTEM, TOOLS) == 90
    assert all(s.check("prefix_digest").status == "pass" for s in steps)


def test_turn1_step1_messages_byte_for_byte(example_ledger):
    s = _steps(example_ledger)[0]
    expected = [
        {
            "role": "user",
            "content": [{"type": "text", "text": TAIL}, {"type": "text", "text": "list the repo"}],
        }
    ]
    assert dumps(s.request.messages) == dumps(expected)
    assert s.request.breakpoints == [None, 0]
    # §11: prefix_tokens = U − estimate(message chars) = 120 − round(179 × 0.25) = 75
    assert s.message_chars == 179
    assert s.check("prefix_tokens_window").status == "pass"


def test_turn1_step2_tail_moves_to_the_tool_result(example_ledger):
    s = _steps(example_ledger)[1]
    expected = [
        {"role": "user", "content": [{"type": "text", "text": "list the repo"}]},
        {"role": "assistant", "content": [TOOL_USE]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "a.txt\nb.txt", "is_error": False},
                {"type": "text", "text": TAIL},
            ],
        },
    ]
    assert dumps(s.request.messages) == dumps(expected)
    assert s.request.breakpoints == [None, 2]


def test_regime_b_keeps_tail_in_message_zero(example_ledger):
    s = _steps(example_ledger, regime="B")[1]
    assert s.request.messages[0]["content"] == [
        {"type": "text", "text": TAIL},
        {"type": "text", "text": "list the repo"},
    ]
    assert s.request.messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "a.txt\nb.txt", "is_error": False}
    ]


def test_turn2_carries_turn1_full_record(example_ledger):
    s = _steps(example_ledger)[2]
    expected = [
        {"role": "user", "content": [{"type": "text", "text": "list the repo"}]},
        {"role": "assistant", "content": [TOOL_USE]},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "c1",
                    "content": "a.txt\nb.txt\n[evidence:c1 — 11 chars; call recall to expand]",
                    "is_error": False,
                }
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "<answer>"}]},
        {
            "role": "user",
            "content": [{"type": "text", "text": TAIL}, {"type": "text", "text": "and the sizes?"}],
        },
    ]
    assert dumps(s.request.messages) == dumps(expected)
    assert s.request.breakpoints == [None, 3, 4]


def test_anthropic_body_of_step2(example_ledger):
    s = _steps(example_ledger, max_tokens=1024)[1]
    body = anthropic_body(s.request)
    eph = {"type": "ephemeral"}
    expected = {
        "model": "claude-x",
        "max_tokens": 1024,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "list the repo"}]},
            {"role": "assistant", "content": [TOOL_USE]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "c1",
                        "content": "a.txt\nb.txt",
                        "is_error": False,
                    },
                    {"type": "text", "text": TAIL, "cache_control": eph},
                ],
            },
        ],
        "stream": True,
        "system": [{"type": "text", "text": SYSTEM, "cache_control": eph}],
        "tools": [
            {"name": t["name"], "description": t["description"], "input_schema": t["input_schema"]}
            for t in TOOLS
        ],
    }
    assert json.dumps(body, sort_keys=True) == json.dumps(expected, sort_keys=True)


def test_openai_body_of_steps(example_ledger):
    steps = _steps(example_ledger)
    one = openai_body(steps[0].request)
    assert one["messages"] == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": TAIL + "\nlist the repo"},
    ]
    two = openai_body(steps[1].request)
    assert two["messages"][1:] == [
        {"role": "user", "content": "list the repo"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command":"ls"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt\nb.txt"},
        {"role": "user", "content": TAIL},
    ]
    assert two["tools"][2] == {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command.",
            "parameters": BASH["input_schema"],
        },
    }
    assert two["prompt_cache_key"] == "s-example"
    assert two["stream_options"] == {"include_usage": True}
