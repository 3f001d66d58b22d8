"""What the model sees: the active chain projected into neutral messages (spec ledger.md §7).

``derive_messages`` is the projection without a plan; ``derive_with_plan`` the one under a
working-set plan (G2+); ``tail_sections`` the session part of the request tail (G1' onward). Every
function takes either the active chain (a sequence of entries, root first) or a :class:`TurnIndex`
already built for it — a replay that projects after each step should keep one
:class:`~vakaudit.ledger.turns.TurnIndexBuilder` and pass ``builder.index``, which costs no re-walk.

Messages come out in vak's serde form (``{"role": …, "content": [blocks]}``, block keys in struct
order). Returned messages and blocks are shared with the entries they come from and with the
renderings cached on each turn: treat them as read-only and copy a message before changing it (the
returned list itself is fresh). Pure computation; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from vakaudit.ledger.digest import (
    card_line,
    rust_trim,
    text_content,
    truncate_utf8,
)
from vakaudit.ledger.lookups import (
    capacity_profile,
    evidence,
    has_presentation,
    latest_directive_entry_id,
    non_card_evidence_since,
)
from vakaudit.ledger.turns import (
    MESSAGE_LEVEL,
    Generation,
    Packet,
    Turn,
    TurnIndex,
    TurnIndexBuilder,
    coerce_generation,
    generation_for,
    is_control_entry,
)

__all__ = [
    "Fidelity",
    "Generation",
    "ProjectedMessage",
    "TailSections",
    "TurnIndex",
    "TurnIndexBuilder",
    "WORK_CONTRACT_RULE",
    "THREAD_RULES",
    "WorkingSetPlan",
    "capacity_profile",
    "derive_messages",
    "derive_tagged",
    "derive_with_plan",
    "CompactionPlan",
    "evidence",
    "generation_for",
    "has_presentation",
    "plan_compaction",
    "latest_directive_entry_id",
    "non_card_evidence_since",
    "packet_needs_compaction",
    "packet_transcript",
    "tail_sections",
]

# The fixed rule lines of the work-contract and conversation-thread blocks. The spec does not
# reproduce their wording (ledger.md §7.1, §7.7, §9); these are the strings of vak-session's log.rs at
# revision cef16ee7 (G3) and in the G1' snapshot. Whether earlier builds (G1, released 3.5.0) used the
# same words is unconfirmed; tests do not pin this wording.
WORK_CONTRACT_RULE = "Rules: use this state for progress; do not claim completion before verification."
THREAD_RULES = (
    "Rules for multi-turn execution:\n"
    "- Follow the user's intent across conversational drifts without complaint or friction.\n"
    "- Conversational drift across turns is expected: follow along smoothly and adapt immediately.\n"
    '- Resolve references ("the data", "do that", "it", "something") against the request timeline above.\n'
    "- If genuinely confused, ask a brief clarification, but NEVER use asking clarification as an "
    "exception-handling escape hatch to avoid taking action or using available tools."
)

TAIL_LIMIT_BYTES = 4_000
HISTORICAL_RESULT_LIMIT_BYTES = 600
HISTORICAL_RESULT_KEEP_CHARS = 300
THREAD_DIRECTIVE_LIMIT_BYTES = 200
PAUSED_SUFFIX = " (earlier, now paused)"


class Fidelity(StrEnum):
    """How a closed turn is rendered under a working-set plan (§7.5)."""

    FULL = "Full"
    CARD = "Card"
    PACKET = "Packet"


@dataclass(frozen=True, slots=True)
class WorkingSetPlan:
    """In-memory working-set plan (§7.5): per-turn fidelity, packet range, retrieved turns, budget.

    ``per_turn`` lists closed turns at Full or Card, oldest first; a turn is Packet by falling inside
    ``packet_range`` (first_turn_id, last_turn_id), inclusive.
    """

    per_turn: tuple[tuple[str, Fidelity], ...] = ()
    packet_range: tuple[str, str] | None = None
    retrieved: tuple[str, ...] = ()
    budget: int = 0
    spent: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "per_turn", tuple((str(t), Fidelity(f)) for t, f in self.per_turn))
        if self.packet_range is not None:
            first, last = self.packet_range
            object.__setattr__(self, "packet_range", (str(first), str(last)))
        object.__setattr__(self, "retrieved", tuple(self.retrieved))

    def fidelity_map(self) -> dict[str, Fidelity]:
        return dict(self.per_turn)


@dataclass(frozen=True, slots=True)
class ProjectedMessage:
    """One projected message with its ledger identity (empty for synthesized summaries and blocks)."""

    entry_id: str
    message: dict
    is_summary: bool = False
    is_control: bool = False
    is_intent: bool = False


@dataclass(frozen=True, slots=True)
class TailSections:
    """Session part of the request tail (§7.7); an absent section is None and renders nothing."""

    intent: str | None = None
    work_contract: str | None = None
    thread: str | None = None
    workspace: str | None = None

    def render(self, *, turn_context: str | None = None, stance: str | None = None) -> str:
        """The tail block in vak's order (replay.md §7.2), optionally with the host parts.

        Order: turn_context, intent, stance, work_contract, workspace_delta, conversation_thread,
        joined by one LF, no trailing newline.
        """
        blocks: list[str] = []
        if turn_context and rust_trim(turn_context):
            blocks.append(f"<turn_context>\n{rust_trim(turn_context)}\n</turn_context>")
        if self.intent:
            blocks.append(self.intent)
        if stance and rust_trim(stance):
            blocks.append(f"<stance>\n{rust_trim(stance)}\n</stance>")
        for block in (self.work_contract, self.workspace, self.thread):
            if block:
                blocks.append(block)
        return "\n".join(blocks)


# -- helpers ---------------------------------------------------------------------------------------


def _index_for(chain: Sequence[Any] | TurnIndex, generation: str) -> TurnIndex:
    gen = coerce_generation(generation)
    if isinstance(chain, TurnIndex):
        if chain.generation != gen:
            raise ValueError(f"turn index was built for {chain.generation}, not {gen}")
        return chain
    return TurnIndex.from_chain(chain, generation=gen)


_BLOCK_KEYS = {
    "text": ("type", "text"),
    "tool_use": ("type", "id", "name", "input"),
    "tool_result": ("type", "tool_use_id", "content", "is_error"),
    "image": ("type", "source"),
    "provider": ("type", "kind", "raw"),
}


def _serde_block(block: Any) -> Any:
    """A content block in vak-llm's serialization order (unknown keys dropped, defaults written)."""
    if not isinstance(block, dict):
        return block
    btype = block.get("type")
    if btype == "thinking":
        keys: tuple[str, ...] = (
            ("type", "text", "signature") if block.get("signature") is not None else ("type", "text")
        )
    else:
        keys = _BLOCK_KEYS.get(btype, ())
        if not keys:
            return block
    if tuple(block) == keys:
        return block
    out = {k: block[k] for k in keys if k in block}
    if btype == "tool_result" and "is_error" not in out:
        out["is_error"] = False
    return out


def _serde_message(message: Mapping[str, Any]) -> dict:
    return {"role": message.get("role"), "content": [_serde_block(b) for b in message.get("content") or ()]}


def _user_text(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _summary_message(summary: str) -> dict:
    return _user_text(f"<context_summary>\n{summary}\n</context_summary>")


def _has_text(message: Mapping[str, Any]) -> bool:
    return any(isinstance(b, dict) and b.get("type") == "text" for b in message.get("content") or ())


def _position(index: TurnIndex, entry_id: str) -> int | None:
    return index.positions.get(entry_id)


# -- G1 / G1' (§7.1) -------------------------------------------------------------------------------


def _trim_historical_results(out: list[ProjectedMessage]) -> list[ProjectedMessage]:
    pivot = None
    for i in range(len(out) - 1, -1, -1):
        item = out[i]
        if not item.is_control and item.message.get("role") == "user" and _has_text(item.message):
            pivot = i
            break
    if pivot is None:
        return out
    for i in range(pivot):
        item = out[i]
        if item.is_control or item.message.get("role") != "user":
            continue
        changed = False
        blocks = []
        for block in item.message["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                if isinstance(content, str):
                    size = len(content.encode("utf-8"))
                    if size > HISTORICAL_RESULT_LIMIT_BYTES:
                        if len(content) > HISTORICAL_RESULT_KEEP_CHARS:
                            head = content[:HISTORICAL_RESULT_KEEP_CHARS]
                        else:  # fewer than 301 characters: vak cuts at byte 300
                            head = truncate_utf8(content, HISTORICAL_RESULT_KEEP_CHARS)
                        block = dict(block)
                        block["content"] = (
                            f"{head}\n... [historical tool output trimmed; total was {size} chars]"
                        )
                        changed = True
            blocks.append(block)
        if changed:
            out[i] = ProjectedMessage(
                item.entry_id, {"role": "user", "content": blocks}, item.is_summary, False, item.is_intent
            )
    return out


def _derive_message_level(index: TurnIndex) -> list[ProjectedMessage]:
    gen = index.generation
    out: list[ProjectedMessage] = []
    for item in index.g1_items:
        if item.is_intent:
            if gen != Generation.G1 or item.entry_id != index.latest_visible_intent_id:
                continue
            text = truncate_utf8(item.message["content"][0]["text"], TAIL_LIMIT_BYTES)
            out.append(ProjectedMessage(item.entry_id, _user_text(text), is_intent=True))
            continue
        out.append(
            ProjectedMessage(item.entry_id, _serde_message(item.message), item.is_summary, item.is_control)
        )
    if gen == Generation.G1:
        contract = _work_contract_block(index)
        if contract is not None:
            out.insert(0, ProjectedMessage("", _user_text(contract)))
        thread = _thread_block(index, covered=None, drift=False)
        if thread is not None:
            pivot = None
            for i in range(len(out) - 1, -1, -1):
                m = out[i]
                if not m.is_control and m.message.get("role") == "user" and _has_text(m.message):
                    pivot = i
                    break
            out.insert(pivot if pivot is not None else len(out), ProjectedMessage("", _user_text(thread)))
    return _trim_historical_results(out)


# -- G2 / G3 / G4 (§7.5) ---------------------------------------------------------------------------


def _packet_message(index: TurnIndex, packet: Packet) -> dict:
    if index.generation == Generation.G4:
        # G4 prefix (spec §7.5); the separator between prefix and summary and the literal "N" are
        # unconfirmed.
        first = index.turn_by_id(packet.first_turn_id)
        last = index.turn_by_id(packet.last_turn_id)
        a = first.number if first else "?"
        b = last.number if last else "?"
        body = f"Summary of turns {a}-{b}; recall({{ turn: N }}) reopens one.\n{packet.summary}"
        return _summary_message(body)
    return _summary_message(packet.summary)


def _derive_turn_based(index: TurnIndex, plan: WorkingSetPlan | None) -> list[ProjectedMessage]:
    gen = index.generation
    out: list[ProjectedMessage] = []
    if gen == Generation.G2:
        boundary = index.boundary_position
        lead = index.boundary_summary
    else:
        boundary = index.reset_position if index.reset_position is not None else 0
        lead = index.reset_summary
    if lead is not None:
        out.append(ProjectedMessage("", _summary_message(lead), is_summary=True))

    fidelity = plan.fidelity_map() if plan is not None else {}
    packet_span: tuple[int, int] | None = None
    packet: Packet | None = None
    if plan is not None and plan.packet_range is not None:
        first, last = plan.packet_range
        lo, hi = _position(index, first), _position(index, last)
        if lo is not None and hi is not None:
            packet_span = (min(lo, hi), max(lo, hi))
        if gen != Generation.G2:
            packet = index.packet_for(first, last)
            if packet is not None:
                out.append(ProjectedMessage("", _packet_message(index, packet), is_summary=True))
    leading = len(out)

    card_lines: list[str] = []
    open_at: int | None = None
    for turn in index.turns:
        if gen == Generation.G4:
            if turn.behind_reset:
                continue
        elif turn.position < boundary:
            continue
        if not turn.closed:
            open_at = len(out)
            out.extend(_open_turn(index, turn))
            continue
        selected = _select(turn, plan, fidelity, packet_span, packet, gen)
        if selected == Fidelity.FULL:
            out.extend(_full_tagged(turn, gen))
        elif selected == Fidelity.CARD:
            text = turn.card_line(provisional=gen != Generation.G2)
            if text is not None:
                card_lines.append(text)
    if card_lines:
        block = ProjectedMessage(
            "", _user_text("<turns>\n" + "\n".join(card_lines) + "\n</turns>"), is_summary=True
        )
        if gen == Generation.G4:
            out.insert(open_at if open_at is not None else len(out), block)
        else:
            out.insert(leading, block)
    return out


def _full_tagged(turn: Turn, gen: Generation) -> list[ProjectedMessage]:
    key = (str(gen), turn.version)
    cached = turn._cache.get("full_tagged")
    if cached is None or cached[0] != key:
        cached = (key, [ProjectedMessage(turn.turn_id, _serde_message(m)) for m in turn.full_record(gen)])
        turn._cache["full_tagged"] = cached
    return cached[1]


def _select(
    turn: Turn,
    plan: WorkingSetPlan | None,
    fidelity: dict[str, Fidelity],
    packet_span: tuple[int, int] | None,
    packet: Packet | None,
    gen: Generation,
) -> Fidelity:
    if plan is None:
        return Fidelity.FULL
    chosen = fidelity.get(turn.turn_id)
    if chosen is not None:
        return chosen
    inside = packet_span is not None and packet_span[0] <= turn.position <= packet_span[1]
    if gen == Generation.G2:
        if inside:
            return Fidelity.PACKET
        return Fidelity.CARD if turn.card is not None else Fidelity.FULL
    if inside:
        return Fidelity.PACKET if packet is not None else Fidelity.CARD
    return Fidelity.CARD


def _open_turn(index: TurnIndex, turn: Turn) -> list[ProjectedMessage]:
    tail = turn.raw_tail
    if index.generation == Generation.G4 and turn.behind_reset is False and index.reset_position is not None:
        if turn.position < index.reset_position:
            # a reset that keeps the open turn keeps its directive and the steps after the reset
            tail = [e for e in tail if index.positions.get(e.id, 0) > index.reset_position]
    out = [ProjectedMessage(turn.turn_id, _serde_message(turn.directive_message))]
    for entry in tail:
        out.append(
            ProjectedMessage(
                entry.id, _serde_message(entry.payload["message"]), is_control=is_control_entry(entry)
            )
        )
    return out


# -- public projections ----------------------------------------------------------------------------


def derive_tagged(
    chain: Sequence[Any] | TurnIndex, *, generation: str, plan: WorkingSetPlan | None = None
) -> list[ProjectedMessage]:
    """The projection with each message's ledger identity and class."""
    index = _index_for(chain, generation)
    if index.generation in MESSAGE_LEVEL:
        return _derive_message_level(index)
    return _derive_turn_based(index, plan)


def derive_messages(chain: Sequence[Any] | TurnIndex, *, generation: str) -> list[dict]:
    """The projection without a plan (every closed turn at Full in G2+)."""
    return [p.message for p in derive_tagged(chain, generation=generation)]


def derive_with_plan(
    chain: Sequence[Any] | TurnIndex, plan: WorkingSetPlan | None, *, generation: str
) -> list[dict]:
    """The projection under a working-set plan (§7.5). G1/G1' have no plans: the plan is ignored."""
    return [p.message for p in derive_tagged(chain, generation=generation, plan=plan)]


# -- tail sections (§7.7) --------------------------------------------------------------------------

_DEBUG_OWNER = {"parent_agent": "ParentAgent", "worker": "Worker", "subagent": "Worker", "human": "Human"}


def _debug_variant(value: Any) -> str:
    """Rust ``{:?}`` of a unit variant serialized in snake_case (``ready_for_verification`` -> ``ReadyForVerification``)."""
    return "".join(part[:1].upper() + part[1:] for part in str(value).split("_"))


def _debug_str(value: Any) -> str:
    out = ['"']
    for ch in str(value):
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\0":
            out.append("\\0")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{{{ord(ch):x}}}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _debug_owner(owner: Any) -> str:
    if isinstance(owner, str):
        return _DEBUG_OWNER.get(owner, _debug_variant(owner))
    if isinstance(owner, dict) and len(owner) == 1:
        ((variant, body),) = owner.items()
        if isinstance(body, dict):
            fields = ", ".join(f"{k}: {_debug_str(v)}" for k, v in body.items())
            return f"{_debug_variant(variant)} {{ {fields} }}"
    return str(owner)


def _work_contract_block(index: TurnIndex) -> str | None:
    work = index.work
    if work is None or work.settled:
        return None
    c = work.contract
    lines = [
        f'<work_contract id="{c.get("contract_id", "")}" revision="{c.get("revision", 0)}">',
        f"Objective: {c.get('objective', '')}",
        f"Status: {_debug_variant(work.status)}",
        "Items:",
    ]
    for item in c.get("items") or ():
        if not isinstance(item, dict):
            continue
        item_id = str(item.get("item_id", ""))
        if item_id in work.items:
            lines.append(
                f"- {item_id}: {_debug_variant(work.items[item_id])} (owner: {_debug_owner(item.get('owner'))})"
            )
    lines.append(WORK_CONTRACT_RULE)
    lines.append("</work_contract>")
    return truncate_utf8("\n".join(lines), TAIL_LIMIT_BYTES)


def _covered_directives(index: TurnIndex, plan: WorkingSetPlan | None) -> set[str]:
    """G3: directive texts the projection under ``plan`` already carries."""
    fidelity = plan.fidelity_map() if plan is not None else {}
    covered = set()
    for turn in index.turns:
        if turn.behind_reset:
            continue
        if not turn.closed or plan is None or fidelity.get(turn.turn_id) in (Fidelity.FULL, Fidelity.CARD):
            covered.add(turn.directive_key)
    return covered


def _thread_block(index: TurnIndex, *, covered: set[str] | None, drift: bool) -> str | None:
    goal = index.goal
    if goal is None:
        return None
    if not (goal.revision > 1 or goal.additions) or goal.control != "active" or not rust_trim(goal.objective):
        return None
    if index.work is not None:
        return None
    if index.directive_count <= 1:
        return None
    listed = [(n, text) for n, text in index.recent_directives if covered is None or text not in covered]
    if not listed:
        return None
    current = None
    if drift:
        reading = index.latest_reading()
        current = reading["domains"] if reading is not None else None
    lines = [
        f'<conversation_thread revision="{goal.revision}">',
        f"Primary objective: {rust_trim(goal.objective)}",
        "User request timeline across turns:",
    ]
    for number, text in listed:
        if len(text.encode("utf-8")) > THREAD_DIRECTIVE_LIMIT_BYTES:
            if len(text) > THREAD_DIRECTIVE_LIMIT_BYTES:
                text = text[:THREAD_DIRECTIVE_LIMIT_BYTES] + "..."
            else:
                text = truncate_utf8(text, THREAD_DIRECTIVE_LIMIT_BYTES) + "..."
        suffix = ""
        if current:
            turn = index.turn_by_number(number)
            card = turn.card if turn is not None else None
            if card is not None:
                domains = (card.get("reading") or {}).get("domains") or []
                if domains and all(d not in current for d in domains):
                    suffix = PAUSED_SUFFIX
        lines.append(f"- Turn {number}: {text}{suffix}")
    lines.append(THREAD_RULES)
    lines.append("</conversation_thread>")
    return "\n".join(lines)


def _intent_block(index: TurnIndex) -> str | None:
    if index.latest_intent is None:
        return None
    note = index.latest_intent.payload.get("model_visible")
    if not isinstance(note, str):
        return None
    return truncate_utf8(f"<intent>\n{note}\n</intent>", TAIL_LIMIT_BYTES)


def _workspace_block(index: TurnIndex) -> str | None:
    # G4 only; the activity shape (detail carrying the delta text) is unconfirmed (spec §7.7).
    entry = index.latest_workspace
    if entry is None:
        return None
    detail = entry.payload.get("detail")
    if not isinstance(detail, str) or not rust_trim(detail):
        return None
    return f"<workspace_delta>\n{rust_trim(detail)}\n</workspace_delta>"


def tail_sections(
    chain: Sequence[Any] | TurnIndex, *, generation: str, plan: WorkingSetPlan | None = None
) -> TailSections:
    """The session-derived tail sections for one request (G1' onward; G1 splices them instead)."""
    index = _index_for(chain, generation)
    gen = index.generation
    if gen == Generation.G1:
        return TailSections()
    if gen == Generation.G1P:
        covered = {rust_trim(text_content(p.message)) for p in _derive_message_level(index)}
        thread = _thread_block(index, covered=covered, drift=False)
    elif gen == Generation.G2:
        # "equal to some projected message's trimmed text" (spec §7.7); projecting under the same plan
        # and marking drift in G2 are unconfirmed.
        covered = {rust_trim(text_content(p.message)) for p in _derive_turn_based(index, plan)}
        thread = _thread_block(index, covered=covered, drift=True)
    else:
        thread = _thread_block(index, covered=_covered_directives(index, plan), drift=True)
    return TailSections(
        intent=_intent_block(index),
        work_contract=_work_contract_block(index),
        thread=thread,
        workspace=_workspace_block(index) if gen == Generation.G4 else None,
    )


# -- G3 packet helpers (§7.5) ----------------------------------------------------------------------


def packet_needs_compaction(chain: Sequence[Any] | TurnIndex, first_turn_id: str, last_turn_id: str) -> bool:
    """True when no stored packet covers exactly (first, last) (G3)."""
    return _index_for_packets(chain).packet_for(first_turn_id, last_turn_id) is None


def _index_for_packets(chain: Sequence[Any] | TurnIndex) -> TurnIndex:
    if isinstance(chain, TurnIndex):
        return chain
    return TurnIndex.from_chain(chain, generation=Generation.G3)


def packet_transcript(
    chain: Sequence[Any] | TurnIndex, first_turn_id: str, last_turn_id: str
) -> tuple[str, int]:
    """The G3 summariser input for a packet over (first, last) and its length in code points.

    Seeded with the longest stored packet that starts at ``first`` and ends at or before ``last``
    (its summary and a blank line), then one card line per remaining turn up to ``last`` (the text
    of its full record when the turn has no written card).
    """
    index = _index_for_packets(chain)
    first_pos, last_pos = _position(index, first_turn_id), _position(index, last_turn_id)
    if first_pos is None or last_pos is None:
        return "", 0
    seed: tuple[int, Packet] | None = None
    for packet in index.packets:
        if packet.first_turn_id != first_turn_id:
            continue
        end = _position(index, packet.last_turn_id)
        if end is not None and end <= last_pos and (seed is None or end >= seed[0]):
            seed = (end, packet)
    parts: list[str] = []
    from_pos = first_pos
    if seed is not None:
        parts.append(seed[1].summary + "\n\n")
        from_pos = seed[0] + 1
    for turn in index.turns:
        if turn.position < from_pos or turn.position > last_pos:
            continue
        if turn.card is not None:
            parts.append(card_line(turn.card, turn.number) + "\n")
        else:
            parts.extend(text_content(m) + "\n" for m in turn.full_record(index.generation))
    text = "".join(parts)
    return text, len(text)


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """A G1/G1' message-level compaction plan (§7.1): what to summarise and where the kept part starts."""

    older: tuple[dict, ...]
    first_kept_entry_id: str
    selected_entry_ids: tuple[str, ...]
    dropped_entry_ids: tuple[str, ...]

    def partition(self) -> dict[str, list[str]]:
        """The ``partition`` object of the compaction entry."""
        return {
            "selected_entry_ids": list(self.selected_entry_ids),
            "dropped_entry_ids": list(self.dropped_entry_ids),
        }


def plan_compaction(
    chain: Sequence[Any] | TurnIndex, keep_recent: int, *, generation: str
) -> CompactionPlan | None:
    """``plan_compaction(keep_recent)`` of G1/G1' (§7.1), or None when there is nothing to summarise.

    The summarised part is every projected message before the last ``keep_recent``, the boundary moved
    forward past messages holding tool results; control messages (and, G1, the intent note) are left
    out of the summariser input; the partition lists non-summary, non-control message ids. G2 counts
    whole turns instead and is not implemented here.
    """
    index = _index_for(chain, generation)
    if index.generation not in MESSAGE_LEVEL:
        raise ValueError(f"plan_compaction is message-level (G1/G1'); {index.generation} plans by turns")
    tagged = _derive_message_level(index)
    if len(tagged) <= keep_recent:
        return None
    boundary = len(tagged) - keep_recent
    while boundary < len(tagged) and any(
        isinstance(b, dict) and b.get("type") == "tool_result"
        for b in tagged[boundary].message.get("content") or ()
    ):
        boundary += 1
    if boundary == 0 or boundary >= len(tagged):
        return None
    selected = []
    dropped = []
    for i, item in enumerate(tagged):
        if item.is_summary or item.is_control or not item.entry_id:
            continue
        (dropped if i < boundary else selected).append(item.entry_id)
    return CompactionPlan(
        older=tuple(p.message for p in tagged[:boundary] if not p.is_control and not p.is_intent),
        first_kept_entry_id=tagged[boundary].entry_id,
        selected_entry_ids=tuple(selected),
        dropped_entry_ids=tuple(dropped),
    )
