"""The neutral provider request vak assembles for one step, and its replay-specific parts.

Tail composition (§7.2), tail placement (§7.5), cache breakpoints (§13),
neutral tool definitions (§2, §5) and per-leg tool filtering. Pure functions over plain dicts; no
I/O here. The projection of closed turns is the ledger's (`vakaudit.ledger.projection`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from vakaudit.ledger.vocab import is_directive_message
from vakaudit.replay.prefix import tool_parts

__all__ = [
    "HostParams",
    "NeutralRequest",
    "Regime",
    "cache_breakpoints",
    "compose_tail",
    "neutral_tools",
    "place_tail",
    "regime_for",
    "tools_for_leg",
]

DEFAULT_MAX_TOKENS = 8192
"""Output cap used when no capacity profile gives an `output_reserve` (§2: not in the ledger)."""


class Regime(StrEnum):
    """Request-assembly regime (§0): A = 3.5.x reference snapshot, B = later line."""

    A = "A"
    B = "B"


def _version_tuple(app_version: str) -> tuple[int, ...] | None:
    head = app_version.strip().lstrip("vV").split("-", 1)[0].split("+", 1)[0]
    try:
        nums = tuple(int(p) for p in head.split("."))
    except ValueError:
        return None
    return (nums + (0, 0, 0))[:3]


def regime_for(app_version: str | None) -> Regime:
    """Regime from `header.contract.app_version`: ≤ 4.0.0 (or unparseable) → A, later → B.

    The cutover release is unconfirmed (§20.1); A is the spec's safe default.
    """
    nums = _version_tuple(app_version or "")
    if nums is None or nums <= (4, 0, 0):
        return Regime.A
    return Regime.B


@dataclass(frozen=True, slots=True)
class HostParams:
    """Host parts of a request that a 3.x ledger never recorded (§7.6, §2).

    Defaults: no `<turn_context>` block (`temporal=""`), no `<stance>` block (`stance=""`),
    `max_tokens` from the bound profile's `output_reserve` or `DEFAULT_MAX_TOKENS`, regime from the
    header's app_version, uncalibrated tokens-per-char 0.25 unless capacity activities say
    otherwise, and a horizon of `horizon_tokens` when no capacity profile records one (the declared
    context window is not in the ledger). Every check states which of these it depends on.
    """

    temporal: str = ""
    stance: str = ""
    max_tokens: int | None = None
    regime: Regime | None = None
    horizon_tokens: int = 200_000
    output_reserve: int = DEFAULT_MAX_TOKENS


@dataclass(slots=True)
class NeutralRequest:
    """`vak_llm::ChatRequest` as the agent loop filled it for one main-turn step (§2)."""

    model: str
    provider: str
    system: str
    messages: list[dict]
    tools: list[dict]
    max_tokens: int
    session_key: str
    breakpoints: list[int | None] = field(default_factory=list)
    tail: str = ""
    tail_index: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "model": self.model,
            "system": self.system,
            "messages": self.messages,
            "tools": self.tools,
            "max_tokens": self.max_tokens,
        }
        if self.session_key:
            out["cache"] = {
                "session_key": self.session_key,
                "breakpoints": [{"after_message": b} for b in self.breakpoints],
            }
        return out


def compose_tail(
    *,
    temporal: str = "",
    intent: str | None = None,
    stance: str = "",
    work_contract: str | None = None,
    workspace: str | None = None,
    thread: str | None = None,
) -> str:
    """`compose_tail` (§7.2): blocks in code order, each only when non-empty, joined with `\\n`.

    `intent`, `work_contract`, `workspace` and `thread` are already tagged blocks.
    """
    blocks: list[str] = []
    if temporal.strip():
        blocks.append(f"<turn_context>\n{temporal.strip()}\n</turn_context>")
    if intent:
        blocks.append(intent)
    if stance.strip():
        blocks.append(f"<stance>\n{stance.strip()}\n</stance>")
    if work_contract:
        blocks.append(work_contract)
    if workspace:
        blocks.append(workspace)
    if thread:
        blocks.append(thread)
    return "\n".join(blocks)


def place_tail(messages: list[dict], tail: str, index: int | None) -> int | None:
    """Insert `tail` as a text block into `messages[index]` (in place) per §7.5.

    The block goes at the position of the message's first `text` block, or at the end when it has
    none. Nothing happens (None returned) when the tail is empty, the index is out of range or the
    message is not user-role. Only that one message is copied before being changed.
    """
    if not tail or index is None or not (0 <= index < len(messages)):
        return None
    message = messages[index]
    if message.get("role") != "user":
        return None
    content = list(message.get("content") or [])
    pos = next((i for i, b in enumerate(content) if isinstance(b, Mapping) and b.get("type") == "text"), None)
    block = {"type": "text", "text": tail}
    content.insert(len(content) if pos is None else pos, block)
    new = dict(message)
    new["content"] = content
    messages[index] = new
    return index


def cache_boundary(messages: Sequence[Mapping[str, Any]]) -> int:
    """Boundary b of §13: index of the last directive-shaped user message (0 when none)."""
    for i in range(len(messages) - 1, -1, -1):
        if is_directive_message(messages[i]):
            return i
    return 0


def cache_breakpoints(messages: Sequence[Mapping[str, Any]]) -> list[int | None]:
    """Cache breakpoints (§13): `null`, then b−1 when b > 0, then len−1; consecutive dups removed."""
    b = cache_boundary(messages)
    points: list[int | None] = [None]
    if b > 0:
        points.append(b - 1)
    if messages:
        points.append(len(messages) - 1)
    out: list[int | None] = []
    for p in points:
        if not out or out[-1] != p:
            out.append(p)
    return out


def neutral_tools(tool_schemas: Sequence[Mapping[str, Any]], deferred: Sequence[str] = ()) -> list[dict]:
    """Neutral `ToolDefinition`s {name, description, input_schema, defer?} from a binding's list.

    `defer: true` is kept when the stored entry carries it, or set when the name is one of the
    binding's `deferred_tool_names` (key omitted when false, §2). Schemas are shared with the
    binding entry, not copied: treat them as read-only.
    """
    deferred_set = set(deferred)
    out = []
    for tool in tool_schemas:
        name, description, schema = tool_parts(tool)
        item: dict[str, Any] = {
            "name": name,
            "description": description,
            "input_schema": schema,
        }
        if tool.get("defer") is True or name in deferred_set:
            item["defer"] = True
        out.append(item)
    return out


def tools_for_leg(tools: Sequence[Mapping[str, Any]], provider: str) -> list[dict]:
    """Per-leg filter (§5, Regime A): anthropic legs get every tool, others lose deferred ones."""
    if provider == "anthropic":
        return [dict(t) for t in tools]
    return [dict(t) for t in tools if not t.get("defer")]
