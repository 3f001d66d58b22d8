"""Structured difference between two consecutive reconstructed requests. Pure; no I/O here."""

from __future__ import annotations

from typing import Any

from vakaudit.replay.request import NeutralRequest

__all__ = ["request_diff"]


def _brief(message: dict, limit: int = 80) -> str:
    parts = []
    for b in message.get("content") or ():
        t = b.get("type")
        if t == "text":
            parts.append("text(" + repr(b.get("text", "")[:limit]) + ")")
        elif t == "tool_use":
            parts.append(f"tool_use({b.get('id')}, {b.get('name')})")
        elif t == "tool_result":
            parts.append(f"tool_result({b.get('tool_use_id')})")
        else:
            parts.append(str(t))
    return f"{message.get('role')}: " + ", ".join(parts)


def request_diff(prev: NeutralRequest, cur: NeutralRequest) -> dict[str, Any]:
    """What changed from `prev` to `cur`: system, model, tools, and messages (common prefix, edits)."""
    common = 0
    for a, b in zip(prev.messages, cur.messages, strict=False):
        if a != b:
            break
        common += 1
    prev_names = [t["name"] for t in prev.tools]
    cur_names = [t["name"] for t in cur.tools]
    return {
        "system_changed": prev.system != cur.system,
        "model": None if prev.model == cur.model else {"previous": prev.model, "current": cur.model},
        "tools_added": [n for n in cur_names if n not in prev_names],
        "tools_removed": [n for n in prev_names if n not in cur_names],
        "tools_reordered": [n for n in prev_names if n in cur_names]
        != [n for n in cur_names if n in prev_names],
        "tools_changed": [
            t["name"] for t in cur.tools for u in prev.tools if t["name"] == u["name"] and t != u
        ],
        "common_prefix_messages": common,
        "removed_messages": [_brief(m) for m in prev.messages[common:]],
        "added_messages": [_brief(m) for m in cur.messages[common:]],
        "breakpoints": {"previous": prev.breakpoints, "current": cur.breakpoints},
    }
