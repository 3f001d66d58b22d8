"""Stable-prefix digest, token estimates and character accounting of a provider request.

Restates vak's `assemble::prefix_digest` (replay spec §11), `estimate_tokens` (§10.2) and the
character accounting of §10.1, and classifies what changed between two stable prefixes
(:func:`prefix_break`). Pure functions, no I/O here.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vakaudit.ledger.jsonenc import dumps

__all__ = [
    "DEFAULT_TOKENS_PER_CHAR",
    "PrefixBreak",
    "prefix_break",
    "block_chars",
    "compact_json",
    "estimate_tokens",
    "prefix_chars",
    "prefix_digest",
    "prefix_tokens_estimate",
    "request_message_chars",
    "tool_parts",
]

DEFAULT_TOKENS_PER_CHAR = 0.25
"""Uncalibrated tokens-per-char of a capacity profile with no samples (§10.2)."""


def compact_json(value: Any) -> bytes:
    """serde_json-compatible compact encoding (number lexemes as serde_json writes them)."""
    return dumps(value)


def tool_parts(tool: Mapping[str, Any]) -> tuple[str, str, Any]:
    """(name, description, schema) of one tool as stored in a binding's `tool_schemas`.

    vak stores `ToolDefinition` serialized: {`name`, `description`, `input_schema`, `defer`?}
    (spec §2; the neutral type calls the schema `parameters` internally). Variants accepted on
    read (unconfirmed which builds wrote them): `parameters` or `inputSchema` instead of
    `input_schema`, and the OpenAI function wrapper {"type":"function","function":{...}}. A
    missing description is the empty string; a missing schema is JSON null (serde_json's
    `Value::default()`).
    """
    inner = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
    name = inner.get("name")
    description = inner.get("description")
    schema = None
    for key in ("input_schema", "parameters", "inputSchema"):
        if key in inner:
            schema = inner[key]
            break
    return (
        name if isinstance(name, str) else "",
        description if isinstance(description, str) else "",
        schema,
    )


def prefix_digest(system: str, tools: Sequence[Mapping[str, Any]]) -> str:
    """SHA-256 over system bytes, then per tool: name, description, compact schema (§11).

    No separators; the `defer` flag is not hashed; tools in request order, unfiltered.
    """
    h = hashlib.sha256(system.encode("utf-8"))
    for tool in tools:
        name, description, schema = tool_parts(tool)
        h.update(name.encode("utf-8"))
        h.update(description.encode("utf-8"))
        h.update(compact_json(schema))
    return h.hexdigest()


def prefix_chars(system: str, tools: Sequence[Mapping[str, Any]]) -> int:
    """Prefix size in UTF-8 bytes: system + per tool (name + description + compact schema)."""
    total = len(system.encode("utf-8"))
    for tool in tools:
        name, description, schema = tool_parts(tool)
        total += len(name.encode("utf-8")) + len(description.encode("utf-8")) + len(compact_json(schema))
    return total


def estimate_tokens(chars: int, tokens_per_char: float = DEFAULT_TOKENS_PER_CHAR) -> int:
    """round(chars × tpc) with Rust's half-away-from-zero rounding (§10.2), saturating at 0."""
    x = chars * tokens_per_char
    if not x > 0:  # also NaN
        return 0
    whole = math.floor(x)
    return int(whole) + (1 if x - whole >= 0.5 else 0)


def prefix_tokens_estimate(
    system: str, tools: Sequence[Mapping[str, Any]], tokens_per_char: float = DEFAULT_TOKENS_PER_CHAR
) -> int:
    """Planner's prefix tokens: estimate of `prefix_chars` (§10.4)."""
    return estimate_tokens(prefix_chars(system, tools), tokens_per_char)


def block_chars(block: Mapping[str, Any]) -> int:
    """Characters (UTF-8 bytes) one content block contributes to a request (§10.1)."""
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return len(text.encode("utf-8")) if isinstance(text, str) else 0
    if kind == "tool_use":
        return len(compact_json(block.get("input")))
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, str):
            return len(content.encode("utf-8"))
        # vak writes a string; a structured content (not seen in vak ledgers) counts as JSON.
        return len(compact_json(content)) if content is not None else 0
    if kind == "provider":
        return len(compact_json(block.get("raw")))
    return 0  # thinking, image, unknown


def request_message_chars(messages: Iterable[Mapping[str, Any]]) -> int:
    """Message chars of a neutral request's messages (tail included when it is in them)."""
    total = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, Mapping):
                    total += block_chars(block)
    return total


@dataclass(frozen=True, slots=True)
class PrefixBreak:
    """What changed in the stable prefix between the previous step and this one."""

    previous_digest: str
    current_digest: str
    system_prompt: bool = False
    tools_added: tuple[str, ...] = ()
    tools_removed: tuple[str, ...] = ()
    tools_changed: tuple[str, ...] = ()
    tool_order: bool = False

    @property
    def parts(self) -> list[str]:
        out = []
        if self.system_prompt:
            out.append("system prompt")
        out += [f"tool added: {n}" for n in self.tools_added]
        out += [f"tool removed: {n}" for n in self.tools_removed]
        out += [f"tool changed: {n}" for n in self.tools_changed]
        if self.tool_order:
            out.append("tool order")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "previous_digest": self.previous_digest,
            "current_digest": self.current_digest,
            "system_prompt": self.system_prompt,
            "tools_added": list(self.tools_added),
            "tools_removed": list(self.tools_removed),
            "tools_changed": list(self.tools_changed),
            "tool_order": self.tool_order,
            "parts": self.parts,
        }


def _tool_map(tools: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, Any]]:
    out = {}
    for t in tools:
        name, desc, schema = tool_parts(t)
        out.setdefault(name, (desc, schema))
    return out


def prefix_break(
    prev_system: str,
    prev_tools: Sequence[Mapping],
    system: str,
    tools: Sequence[Mapping],
    prev_d: str,
    cur_d: str,
) -> PrefixBreak:
    """Classify what changed between two stable prefixes."""
    a, b = _tool_map(prev_tools), _tool_map(tools)
    a_names = [tool_parts(t)[0] for t in prev_tools]
    b_names = [tool_parts(t)[0] for t in tools]
    added = tuple(n for n in b_names if n not in a)
    removed = tuple(n for n in a_names if n not in b)
    changed = tuple(n for n in b_names if n in a and a[n] != b[n])
    common_a = [n for n in a_names if n in b]
    common_b = [n for n in b_names if n in a]
    return PrefixBreak(
        previous_digest=prev_d,
        current_digest=cur_d,
        system_prompt=prev_system != system,
        tools_added=added,
        tools_removed=removed,
        tools_changed=changed,
        tool_order=common_a != common_b,
    )
