"""Spec-following test ledgers for replay, written with SessionLog (spec replay.md §1.3 order).

Receipts carry the prefix digest computed here with hashlib + json (not with vakaudit.replay),
`prefix_tokens` computed from message chars counted by hand from the spec's rules, and a
`prefix-changed` activity wherever the digest moves. Knobs inject writer mistakes at chosen turns.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from vakaudit.ledger import SessionLog

SYSTEM = "You are vak, a general-purpose agent."


def schema(prop: str) -> dict:
    return {"properties": {prop: {"type": "string"}}, "required": [prop], "type": "object"}


FIND_TOOLS = {
    "name": "find_tools",
    "description": "Search tools not currently loaded.",
    "input_schema": schema("query"),
}
READ = {"name": "read", "description": "Read a file.", "input_schema": schema("path")}
BASH = {"name": "bash", "description": "Run a shell command.", "input_schema": schema("command")}
WRITE = {"name": "write", "description": "Write a file.", "input_schema": schema("path")}


def digest_of(system: str, tools: list[dict]) -> str:
    """§11 restated independently: sha256(system + Σ name + description + compact schema)."""
    raw = system.encode()
    for t in tools:
        raw += t["name"].encode() + t["description"].encode()
        raw += json.dumps(t["input_schema"], separators=(",", ":"), ensure_ascii=False).encode()
    return hashlib.sha256(raw).hexdigest()


def est(chars: int) -> int:
    return math.floor(chars * 0.25 + 0.5)


def nbytes(s: str) -> int:
    return len(s.encode())


@dataclass
class Plan:
    """A session to write: per turn, the tools sent and the writer mistakes to make."""

    turns: int = 4
    tools_by_turn: dict[int, list[dict]] = field(default_factory=dict)
    logged_system: dict[int, str] = field(default_factory=dict)  # binding logs another prompt
    logged_tools: dict[int, list[dict]] = field(default_factory=dict)  # binding logs another list
    skip_activity: set[int] = field(default_factory=set)  # writer forgets prefix-changed
    app_version: str = "3.5.1"
    prefix_tokens: int = 90
    cards: bool = False


def directive(k: int) -> str:
    return f"Turn {k}: list the files in folder {k}"


def answer(k: int) -> str:
    return f"Folder {k} holds a.txt and b.txt."


RESULT = "a.txt\nb.txt"
BASH_INPUT = {"command": "ls"}


def full_record_chars(k: int) -> int:
    """Chars of turn k's Full record (§6.3): directive, tool_use, digested result, answer."""
    digest = f"{RESULT}\n[evidence:c{k} — {len(RESULT)} chars; call recall to expand]"
    return (
        nbytes(directive(k))
        + nbytes(json.dumps(BASH_INPUT, separators=(",", ":")))
        + nbytes(digest)
        + nbytes(answer(k))
    )


def intent_note(k: int) -> str:
    return f"Note {k}: check before acting."


def tail_of(k: int) -> str:
    return f"<intent>\n{intent_note(k)}\n</intent>"


def write_ledger(path: Path, plan: Plan) -> dict:
    """Write the session; returns facts the tests assert against (receipt ids per turn/step)."""
    clock = iter(range(1_700_000_000_000_000_000, 1_800_000_000_000_000_000, 1_000_000))
    ids = iter(f"0190{n:04x}-0000-7000-8000-{n:012x}" for n in range(1, 100_000))
    log = SessionLog.create(
        path,
        {
            "session_id": path.stem,
            "created_at": "2026-01-01T00:00:00Z",
            "cwd": "/tmp/proj",
            "contract": {
                "app_version": plan.app_version,
                "provider": "anthropic",
                "model": "claude-x",
                "route_ladder": [],
                "route_objective": "",
                "route_annotations": [],
                "system_prompt": SYSTEM,
                "permission_mode": "workspace-write",
                "capabilities": [],
                "prompt_layers": [],
            },
        },
        clock=lambda: next(clock),
        new_id=lambda: next(ids),
        fsync=False,
    )
    facts: dict = {"receipts": {}, "result_entries": {}, "directives": {}}
    last_digest = ""
    seen: set[str] = set()
    for k in range(1, plan.turns + 1):
        tools = plan.tools_by_turn.get(k, [FIND_TOOLS, READ, BASH])
        logged_tools = plan.logged_tools.get(k, tools)
        system = SYSTEM
        log.append(
            "turn_capabilities_bound",
            {
                "epoch": k,
                "capability_ids": sorted(
                    f"Tool:{t['name']}" for t in logged_tools if t["name"] != "find_tools"
                ),
                "excluded_ids": [],
                "system_prompt": plan.logged_system.get(k, system),
                "tool_schemas": logged_tools,
                "core_tool_names": [t["name"] for t in tools if t["name"] != "find_tools"],
                "deferred_tool_names": [],
                "tool_index": "",
                "tool_domains": {},
            },
        )
        log.append(
            "intent",
            {
                "reading": {"act": "answer", "domains": ["files"]},
                "engagement": {"posture": "operational"},
                "provenance": {"tier": "signals", "resolver_version": 1, "signals": [], "reproducible": True},
                "model_visible": intent_note(k),
            },
        )
        d = log.append_message({"role": "user", "content": [{"type": "text", "text": directive(k)}]})
        facts["directives"][k] = d.id
        digest = digest_of(system, tools)
        earlier_full = sum(full_record_chars(j) for j in range(1, k))
        for step in (1, 2):
            usage_in = 1000 * k + step
            receipt = {
                "purpose": "execute",
                "provider": "anthropic",
                "model": "claude-x",
                "winning_attempt": 0,
                "attempts": [],
                "prefix_digest": digest,
            }
            if digest not in seen:
                # step 1 of a turn: messages = earlier Full records + [tail, directive]
                chars = earlier_full + nbytes(tail_of(k)) + nbytes(directive(k))
                usage_in = plan.prefix_tokens + est(chars)
                receipt["prefix_tokens"] = plan.prefix_tokens
            usage = {"input_tokens": usage_in, "output_tokens": 7}
            receipt["attempts"] = [
                {
                    "ordinal": 0,
                    "reason": "initial",
                    "domain": "unknown",
                    "settlement": "ok",
                    "latency_ms": 10,
                    "usage": usage,
                }
            ]
            if last_digest and digest != last_digest and k not in plan.skip_activity:
                log.append(
                    "activity",
                    {
                        "activity_id": f"activity-{k}",
                        "activity_kind": "diagnostic",
                        "status": "succeeded",
                        "label": "prefix-changed",
                        "data": {"current": digest, "previous": last_digest},
                    },
                )
            r = log.append("receipt", receipt)
            facts["receipts"][(k, step)] = r.id
            seen.add(digest)
            last_digest = digest
            if step == 1:
                log.append_message(
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": f"c{k}", "name": "bash", "input": BASH_INPUT}],
                    },
                    {"model": "claude-x", "stop_reason": "tool_use", "usage": usage},
                )
                res = log.append_message(
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": f"c{k}",
                                "content": RESULT,
                                "is_error": False,
                            }
                        ],
                    }
                )
                facts["result_entries"][k] = res.id
            else:
                log.append_message(
                    {"role": "assistant", "content": [{"type": "text", "text": answer(k)}]},
                    {"model": "claude-x", "stop_reason": "end_turn", "usage": usage},
                )
    log.close()
    return facts
