"""The ledger projection at a step's cut, with the entries each request message derives from.

Thin layer over `vakaudit.ledger.projection` (which owns the rendering): it asks the live turn
index for the tagged projection and tail sections, counts message chars with a per-turn cache,
and maps messages back to ledger entry ids for the "model-visible means logged" check. Planner
inputs (candidates, relevance query) come from the same index. Pure computation; no I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vakaudit.ledger.digest import card_index_text, first_sentence_by_words, text_content
from vakaudit.ledger.projection import (
    Fidelity,
    ProjectedMessage,
    TailSections,
    WorkingSetPlan,
    derive_tagged,
    tail_sections,
)
from vakaudit.ledger.turns import Generation, Turn, TurnIndex

try:  # the serde normal form of a logged message (block keys in vak-llm order)
    from vakaudit.ledger.projection import serde_message as _serde_message  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - older name
    from vakaudit.ledger.projection import _serde_message
from vakaudit.replay.planner import PlanCandidate
from vakaudit.replay.prefix import estimate_tokens, request_message_chars

__all__ = [
    "Projection",
    "TailPart",
    "open_turn_tagged",
    "plan_candidates",
    "plan_query",
    "project",
    "tail_part",
]


@dataclass(slots=True)
class Projection:
    """Projected messages (before the tail), their chars, and what they derive from."""

    messages: list[dict]
    tagged: list[ProjectedMessage]
    chars: int
    unmatched: int = 0
    plan: WorkingSetPlan | None = None

    def sources(self, index: TurnIndex, card_entries: Mapping[str, str], chain: Sequence[Any]) -> list[str]:
        """Ledger entry ids the messages derive from (computed on demand: it walks every turn)."""
        out: list[str] = []
        seen_turns: set[str] = set()
        for p in self.tagged:
            if not p.entry_id:
                continue
            turn = index.by_turn_id.get(p.entry_id)
            if turn is None:
                out.append(p.entry_id)
            elif p.entry_id not in seen_turns:
                seen_turns.add(p.entry_id)
                out += _turn_sources(turn) if turn.closed else [turn.directive.id]
        if any(p.is_summary for p in self.tagged) and index.generation not in (Generation.G1, Generation.G1P):
            plan = self.plan
            if index.reset_position is not None:
                out.append(chain[index.reset_position].id)
            if plan is not None and plan.packet_range is not None:
                packet = index.packet_for(*plan.packet_range)
                if packet is not None:
                    out.append(packet.entry_id)
            if plan is not None:
                fid = plan.fidelity_map()
                for turn in index.turns:
                    if turn.closed and fid.get(turn.turn_id) is Fidelity.CARD:
                        written = card_entries.get(turn.turn_id)
                        out += [written] if written else _turn_sources(turn)
        return [s for s in out if s]


@dataclass(slots=True)
class TailPart:
    """Session sections of the tail and the entries they come from."""

    sections: TailSections
    sources: list[str] = field(default_factory=list)


def _turn_sources(turn: Turn) -> list[str]:
    ids = [turn.directive.id]
    ids += [e.id for e in turn.raw_tail]
    ids += [p.id for p in turn.presentations]
    return ids


def _full_size(turn: Turn, tagged: list[ProjectedMessage], start: int) -> tuple[int, int]:
    """(message count, chars) of a closed turn's Full record starting at `tagged[start]`, cached."""
    cached = turn._cache.get("replay_full_size")
    if cached is not None and cached[0] == turn.version:
        return cached[1]
    j, n = start, len(tagged)
    while j < n and tagged[j].entry_id == turn.turn_id:
        j += 1
    size = (j - start, request_message_chars(p.message for p in tagged[start:j]))
    turn._cache["replay_full_size"] = (turn.version, size)
    return size


_SYNTHESIZED = ("<work_contract", "<conversation_thread", "<context_summary", "<turns>", "<intent>")


def _synthesized(message: Mapping[str, Any]) -> bool:
    """A block the projection builds from non-message entries (work, goal updates, compactions)."""
    content = message.get("content") or ()
    first = content[0] if content and isinstance(content[0], Mapping) else {}
    text = first.get("text") if first.get("type") == "text" else None
    return isinstance(text, str) and text.startswith(_SYNTHESIZED)


def project(index: TurnIndex, plan: WorkingSetPlan | None, generation: str) -> Projection:
    """The projection of the live index under `plan`, with message chars (§10.1)."""
    tagged = derive_tagged(index, generation=generation, plan=plan)
    messages = [p.message for p in tagged]
    chars = 0
    unmatched = 0
    i, n = 0, len(tagged)
    by_turn = index.by_turn_id
    while i < n:
        p = tagged[i]
        turn = by_turn.get(p.entry_id) if p.entry_id else None
        if turn is not None and turn.closed:
            count, c = _full_size(turn, tagged, i)
            chars += c
            i += count
            continue
        if not p.entry_id and not p.is_summary and not _synthesized(p.message):
            unmatched += 1
        chars += request_message_chars((p.message,))
        i += 1
    return Projection(messages=messages, tagged=tagged, chars=chars, unmatched=unmatched, plan=plan)


def open_turn_tagged(turn: Turn) -> list[ProjectedMessage]:
    """The open turn's verbatim block as the projection renders it (G2/G3): directive, then the tail."""
    out = [ProjectedMessage(turn.turn_id, _serde_message(turn.directive_message))]
    for entry in turn.raw_tail:
        meta = entry.payload.get("meta")
        control = isinstance(meta, dict) and meta.get("control") is not None
        out.append(ProjectedMessage(entry.id, _serde_message(entry.payload["message"]), is_control=control))
    return out


def tail_part(index: TurnIndex, generation: str, plan: WorkingSetPlan | None) -> TailPart:
    """Tail sections of the live index under `plan`, with the intent entry as source."""
    sections = tail_sections(index, generation=generation, plan=plan)
    sources = []
    if sections.intent and index.latest_intent is not None:
        sources.append(index.latest_intent.id)
    return TailPart(sections=sections, sources=sources)


def _code_point_estimate(text: str) -> int:
    # provisional-card estimates count code points (§10.1) at the uncalibrated rate
    return estimate_tokens(len(text))


def _candidate_card(turn: Turn) -> dict | None:
    if turn.card is not None:
        return turn.card
    if not turn.closed:
        return None
    narration = ""
    if turn.final_answer is not None:
        narration = first_sentence_by_words(text_content(turn.final_answer.payload["message"]), 60)
    return turn.build_card("unrecorded", narration, _code_point_estimate)


def plan_candidates(index: TurnIndex) -> list[tuple[str, int, int, str, int]]:
    """Closed turns with a card, not behind a reset, oldest first.

    Each is (turn id, tokens_full, tokens_card, card index text, turn version, PlanCandidate). A closed turn
    without a written card gets vak's provisional card with code-point token estimates.
    """
    out = []
    for turn in index.turns:
        if not turn.closed or turn.behind_reset:
            continue
        cached = turn._cache.get("replay_candidate")
        if cached is not None and cached[0] == turn.version:
            out.append(cached[1])
            continue
        card = _candidate_card(turn)
        if card is None:
            continue
        full, small = card.get("tokens_full", 0), card.get("tokens_card", 0)
        full = full if isinstance(full, int) else 0
        small = small if isinstance(small, int) else 0
        text = card_index_text(card)
        cand = (turn.turn_id, full, small, text, turn.version, PlanCandidate(turn.turn_id, full, small, text))
        turn._cache["replay_candidate"] = (turn.version, cand)
        out.append(cand)
    return out


def plan_query(index: TurnIndex, directive: str) -> str:
    """Relevance query (§10.4): directive + the current reading's act and domains."""
    reading: Any = index.latest_reading()
    parts = [directive]
    if isinstance(reading, Mapping):
        act = reading.get("act")
        if isinstance(act, str):
            parts.append(act)
        parts += [d for d in reading.get("domains") or () if isinstance(d, str)]
    return " ".join(parts)
