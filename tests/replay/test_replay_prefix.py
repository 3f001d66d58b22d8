"""Prefix digest, token estimate and character accounting against the replay spec's vectors."""

from __future__ import annotations

import hashlib

from vakaudit.replay.prefix import (
    estimate_tokens,
    prefix_chars,
    prefix_digest,
    request_message_chars,
)

SYSTEM = "You are vak, a general-purpose agent."


def _schema(prop: str) -> dict:
    return {"properties": {prop: {"type": "string"}}, "required": [prop], "type": "object"}


TOOLS = [
    {
        "name": "find_tools",
        "description": "Search tools not currently loaded.",
        "input_schema": _schema("query"),
    },
    {"name": "read", "description": "Read a file.", "input_schema": _schema("path")},
    {"name": "bash", "description": "Run a shell command.", "input_schema": _schema("command")},
]


def test_worked_example_digest_and_prefix_tokens():
    # replay spec §17: 360 bytes, SHA-256 77677126…, 90 tokens uncalibrated
    assert prefix_chars(SYSTEM, TOOLS) == 360
    assert prefix_digest(SYSTEM, TOOLS) == "77677126b3312893eb13a8d9b18e1312e6ce6b8b24e982283345d05447819f24"
    assert estimate_tokens(360) == 90


def test_worked_example_digest_input_bytes_spelled_out():
    raw = (
        SYSTEM
        + 'find_toolsSearch tools not currently loaded.{"properties":{"query":{"type":"string"}},"required":["query"],"type":"object"}'
        + 'readRead a file.{"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"}'
        + 'bashRun a shell command.{"properties":{"command":{"type":"string"}},"required":["command"],"type":"object"}'
    ).encode()
    assert len(raw) == 360
    assert prefix_digest(SYSTEM, TOOLS) == hashlib.sha256(raw).hexdigest()


def test_defer_flag_is_not_hashed_and_order_matters():
    deferred = [dict(TOOLS[0]), dict(TOOLS[1]), dict(TOOLS[2], defer=True)]
    assert prefix_digest(SYSTEM, deferred) == prefix_digest(SYSTEM, TOOLS)
    assert prefix_digest(SYSTEM, [TOOLS[0], TOOLS[2], TOOLS[1]]) != prefix_digest(SYSTEM, TOOLS)


def test_float_lexemes_follow_serde_json():
    tool = {"name": "t", "description": "", "input_schema": {"default": 1e-7, "max": 1e16, "x": 100.0}}
    raw = b't{"default":1e-7,"max":1e16,"x":100.0}'
    assert prefix_digest("", [tool]) == hashlib.sha256(raw).hexdigest()


def test_estimate_tokens_rounds_half_away_from_zero():
    # §10.2: 1234 × 0.25 = 308.5 → 309 (Python's round() would give 308)
    assert estimate_tokens(1234) == 309
    assert estimate_tokens(1830) == 458  # §17 receipt example
    assert estimate_tokens(0) == 0
    assert estimate_tokens(3, 0.5) == 2


def test_request_message_chars_counts_bytes_per_block_kind():
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "héllo"}]},  # 6 bytes
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "text": "ignored"},
                {"type": "tool_use", "id": "c1", "name": "bash", "input": {"command": "ls"}},  # 16
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "c1",
                    "content": "a.txt\nb.txt",
                    "is_error": False,
                },  # 11
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
            ],
        },
        {"role": "assistant", "content": [{"type": "provider", "kind": "x", "raw": {"a": 1}}]},  # 7
    ]
    assert request_message_chars(messages) == 6 + 16 + 11 + 7


def test_compose_tail_block_order_and_trimming():
    from vakaudit.replay import compose_tail

    # §7.2: turn_context, intent, stance, work contract, workspace, thread; empty blocks vanish
    got = compose_tail(
        temporal="  Monday 10:00 UTC \n",
        intent="<intent>\nI\n</intent>",
        stance="",
        work_contract=None,
        thread='<conversation_thread revision="2">\nT\n</conversation_thread>',
    )
    assert got == (
        "<turn_context>\nMonday 10:00 UTC\n</turn_context>\n<intent>\nI\n</intent>\n"
        '<conversation_thread revision="2">\nT\n</conversation_thread>'
    )
    assert compose_tail() == ""
