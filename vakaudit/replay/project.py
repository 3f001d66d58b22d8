"""The ledger projection at a step's cut, with the entries each request message derives from.

Thin layer over `vakaudit.ledger.projection` (which owns the rendering): it asks the live turn
index for the tagged projection and tail sections, and maps every message back to ledger entry
ids for the "model-visible means logged" check. Planner inputs (candidates, relevance query) come
from the same index. Pure computation; no I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vakaudit.ledger.digest import card_index_text
from vakaudit.ledger.projection import Fidelity, TailSections, WorkingSetPlan, derive_tagged, tail_sections
from vakaudit.ledger.turns import Generation, Turn, TurnIndex

__all__ = ["Projection", "TailPart", "plan_candidates", "plan_query", "project", "tail_part"]


@dataclass(slots=True)
class Projection:
    """Projected messages (before the tail) and the ledger entries they derive from."""

    messages: list[dict]
    sources: list[str] = field(default_factory=list)
    unmatched: int = 0


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


def project(
    index: TurnIndex,
    plan: WorkingSetPlan | None,
    generation: str,
    card_entries: Mapping[str, str],
    chain: Sequence[Any],
) -> Projection:
    """The projection of the live index under `plan`, with source entry ids."""
    tagged = derive_tagged(index, generation=generation, plan=plan)
    messages = [p.message for p in tagged]
    sources: list[str] = []
    unmatched = 0
    turn_ids = set()
    for p in tagged:
        if p.entry_id:
            turn = index.by_turn_id.get(p.entry_id)
            if turn is not None:
                if p.entry_id not in turn_ids:
                    turn_ids.add(p.entry_id)
                    sources += _turn_sources(turn) if turn.closed else [turn.directive.id]
            else:
                sources.append(p.entry_id)
        elif not p.is_summary:
            unmatched += 1
    gen = index.generation
    if any(p.is_summary for p in tagged) and gen not in (Generation.G1, Generation.G1P):
        fid = plan.fidelity_map() if plan is not None else {}
        if index.reset_position is not None:
            sources.append(chain[index.reset_position].id)
        if plan is not None and plan.packet_range is not None:
            packet = index.packet_for(*plan.packet_range)
            if packet is not None:
                sources.append(packet.entry_id)
        if plan is not None:
            for turn in index.turns:
                if turn.closed and fid.get(turn.turn_id) is Fidelity.CARD:
                    written = card_entries.get(turn.turn_id)
                    sources += [written] if written else _turn_sources(turn)
    return Projection(messages=messages, sources=[s for s in sources if s], unmatched=unmatched)


def tail_part(index: TurnIndex, generation: str, plan: WorkingSetPlan | None) -> TailPart:
    """Tail sections of the live index under `plan`, with the intent entry as source."""
    sections = tail_sections(index, generation=generation, plan=plan)
    sources = []
    if sections.intent and index.latest_intent is not None:
        sources.append(index.latest_intent.id)
    return TailPart(sections=sections, sources=sources)


def plan_candidates(index: TurnIndex) -> list[tuple[str, int, int, str]]:
    """Closed turns with a card, not behind a reset, oldest first: (id, tokens_full, tokens_card, text)."""
    out = []
    for turn in index.turns:
        if not turn.closed or turn.behind_reset:
            continue
        cached = turn._cache.get("replay_candidate")
        if cached is not None and cached[0] == turn.version:
            out.append(cached[1])
            continue
        card = turn.effective_card()
        if card is None:
            continue
        full, small = card.get("tokens_full", 0), card.get("tokens_card", 0)
        cand = (
            turn.turn_id,
            full if isinstance(full, int) else 0,
            small if isinstance(small, int) else 0,
            card_index_text(card),
        )
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
