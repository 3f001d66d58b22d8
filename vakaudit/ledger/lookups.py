"""Facts read straight off a ledger's chain (replay.md §4.7, §4.12, §6.8): the newest capacity
profile of a key, one call's evidence, the newest directive, the results since a turn, whether a
presentation already exists. None of them projects anything; :mod:`vakaudit.ledger.projection`
hands them on with the projection.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vakaudit.ledger.digest import parse_json_value
from vakaudit.ledger.turns import is_control_entry, message_of
from vakaudit.ledger.vocab import is_directive_message

__all__ = ["capacity_profile", "evidence", "has_presentation", "latest_directive_entry_id", "non_card_evidence_since"]


def _json_equal(a: Any, b: Any) -> bool:
    """serde_json ``Value`` equality: no bool/int or int/float coercion."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def capacity_profile(chain: Sequence[Any], key: Any) -> Any | None:
    """The newest capacity profile recorded for ``key`` on the chain (§4.7), parsed, or None.

    Looks at ``capacity_probe`` / ``capacity_feedback`` activities newest first; ``data.key`` is
    compared with ``key`` as parsed JSON (``key`` may be a value or its JSON text). An entry whose
    key or profile does not parse is passed over. Capacity activities never affect projection.
    """
    if isinstance(key, str | bytes):
        ok, parsed = parse_json_value(key.decode("utf-8") if isinstance(key, bytes) else key)
        if ok:
            key = parsed
    for entry in reversed(chain):
        if entry.kind != "activity":
            continue
        p = entry.payload
        if p.get("activity_kind") not in ("capacity_probe", "capacity_feedback"):
            continue
        data = p.get("data")
        if not isinstance(data, dict) or not isinstance(data.get("key"), str):
            continue
        ok, stored = parse_json_value(data["key"])
        if not ok or not _json_equal(stored, key):
            continue
        profile = data.get("profile")
        if not isinstance(profile, str):
            continue
        ok, value = parse_json_value(profile)
        if ok:
            return value
    return None


def _blocks(message: Mapping[str, Any]) -> list[dict]:
    return [b for b in message.get("content") or () if isinstance(b, dict)]


def evidence(chain: Sequence[Any], tool_use_id: str) -> dict | None:
    """{tool, input, content, is_error} for a call on the chain (§6.8): the last matching tool_use,
    then the first tool_result for that id; None when either is missing."""
    tool: tuple[str, Any] | None = None
    messages = [m for m in (message_of(e) for e in chain) if m is not None]
    for msg in messages:
        for block in _blocks(msg):
            if block.get("type") == "tool_use" and block.get("id") == tool_use_id:
                tool = (str(block.get("name", "")), block.get("input"))
    if tool is None:
        return None
    for msg in messages:
        for block in _blocks(msg):
            if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_use_id:
                return {
                    "tool": tool[0],
                    "input": tool[1],
                    "content": block.get("content"),
                    "is_error": bool(block.get("is_error", False)),
                }
    return None


def latest_directive_entry_id(chain: Sequence[Any]) -> str | None:
    """The newest non-control user message with a text block and no tool_result block (§6.8)."""
    for entry in reversed(chain):
        msg = message_of(entry)
        if msg is not None and is_directive_message(msg, is_control_entry(entry)):
            return entry.id
    return None


def non_card_evidence_since(
    chain: Sequence[Any], turn_id: str, is_card_tool: Callable[[str], bool]
) -> list[str]:
    """tool_use_ids of results after ``turn_id``'s entry whose tool is not a card tool, first-seen order."""
    start = next((i + 1 for i, e in enumerate(chain) if e.id == turn_id), 0)
    names: dict[str, str] = {}
    out: list[str] = []
    for entry in chain[start:]:
        msg = message_of(entry)
        if msg is None:
            continue
        for block in _blocks(msg):
            if block.get("type") == "tool_use":
                names[str(block.get("id"))] = str(block.get("name", ""))
            elif block.get("type") == "tool_result":
                rid = str(block.get("tool_use_id"))
                name = names.get(rid)
                if not (name is not None and is_card_tool(name)) and rid not in out:
                    out.append(rid)
    return out


def has_presentation(chain: Sequence[Any], turn_id: str, payload_digest: str) -> bool:
    """Whether a presentation with this payload digest already exists for this turn (the duplicate
    rule is per (turn_id, payload_digest), §4.12)."""
    return any(
        e.kind == "presentation"
        and e.payload.get("turn_id") == turn_id
        and e.payload.get("payload_digest") == payload_digest
        for e in chain
    )
