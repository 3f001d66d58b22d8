"""Capacity profile state and the Regime A working-set planner (replay spec §10.3–§10.4).

The planner decides, per step, which closed turns the request carries in full, as a card line, or
inside a packet; the projection itself is the ledger's. Pure computation; no I/O here.

Unconfirmed points (accepted as documented defaults): the capacity profile's JSON field names
(several spellings are read), the BM25 tokenizer and entity bonus of vak's `search.rs` (a plain
lowercase alphanumeric tokenizer with k1 = 1.2, b = 0.75 is used), and whether Regime A fed the
tokens-per-char EWMA with `input_tokens` or `prompt_tokens()` (`prompt_tokens()` is used, §10.3).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from vakaudit.ledger.projection import Fidelity, WorkingSetPlan
from vakaudit.replay.prefix import DEFAULT_TOKENS_PER_CHAR

__all__ = ["CapacityProfile", "PlanCandidate", "plan_working_set", "profile_from_activity", "update_profile"]

EWMA_ALPHA = 0.3
_ANAPHORA_WORDS = frozenset({"that", "it", "again", "previous", "above"})
_ANAPHORA_PHRASES = ("the same", "this one")
_TOKEN_RE = re.compile(r"[0-9a-z]+")


@dataclass(frozen=True, slots=True)
class CapacityProfile:
    """The parts of a vak `CapacityProfile` the request builder uses."""

    horizon_tokens: int
    output_reserve: int
    tokens_per_char: float = DEFAULT_TOKENS_PER_CHAR
    tpc_samples: int = 0
    turn_reserve: float = 0.0
    turn_reserve_samples: int = 0
    recorded: bool = False  # taken from a capacity activity (else host defaults)

    @property
    def tpc(self) -> float:
        """Tokens per char in use: the measured value once sampled, else 0.25 (§10.2)."""
        return self.tokens_per_char if self.tpc_samples > 0 else DEFAULT_TOKENS_PER_CHAR


def _ewma_field(value: Any) -> tuple[float | None, int]:
    if isinstance(value, Mapping):
        v = value.get("value", value.get("mean"))
        n = value.get("samples", value.get("count", 1 if v is not None else 0))
        try:
            return (float(v) if v is not None else None), int(n or 0)
        except (TypeError, ValueError):
            return None, 0
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value), 1
    return None, 0


def _first(mapping: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in mapping:
            return mapping[key]
    return None


def profile_from_activity(data: Mapping[str, Any], fallback: CapacityProfile) -> CapacityProfile | None:
    """Profile snapshot of a `capacity_probe` / `capacity_feedback` activity's `data.profile`."""
    raw = data.get("profile")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return None
    if not isinstance(raw, Mapping):
        return None
    horizon = _first(raw, "instruction_horizon_tokens", "horizon_tokens", "horizon")
    horizon_v, _ = _ewma_field(horizon)
    reserve = _first(raw, "output_reserve", "output_reserve_tokens")
    reserve_v, _ = _ewma_field(reserve)
    tpc_v, tpc_n = _ewma_field(_first(raw, "tokens_per_char", "tpc"))
    turn_v, turn_n = _ewma_field(_first(raw, "current_turn_reserve", "turn_reserve"))
    return CapacityProfile(
        horizon_tokens=int(horizon_v) if horizon_v is not None else fallback.horizon_tokens,
        output_reserve=int(reserve_v) if reserve_v is not None else fallback.output_reserve,
        tokens_per_char=tpc_v if tpc_v is not None else DEFAULT_TOKENS_PER_CHAR,
        tpc_samples=tpc_n if tpc_v is not None else 0,
        turn_reserve=turn_v or 0.0,
        turn_reserve_samples=turn_n if turn_v is not None else 0,
        recorded=True,
    )


def update_profile(profile: CapacityProfile, prompt_tokens: int, request_chars: int) -> CapacityProfile:
    """Apply one step's usage to tokens-per-char (EWMA α 0.3; first sample replaces the seed)."""
    if prompt_tokens <= 0 or request_chars <= 0:
        return profile
    sample = prompt_tokens / request_chars
    if profile.tpc_samples == 0:
        value = sample
    else:
        value = EWMA_ALPHA * sample + (1 - EWMA_ALPHA) * profile.tokens_per_char
    return replace(profile, tokens_per_char=value, tpc_samples=profile.tpc_samples + 1)


@dataclass(frozen=True, slots=True)
class PlanCandidate:
    """A closed turn with a card, not behind a reset, oldest first."""

    turn_id: str
    tokens_full: int
    tokens_card: int
    index_text: str


def _tokens(text: str) -> list[str]:
    return _TOKEN_RE.findall(text.lower())


def _bm25(
    query: Sequence[str], docs: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75
) -> list[float]:
    n = len(docs)
    if n == 0 or not query:
        return [0.0] * n
    avg = sum(len(d) for d in docs) / n or 1.0
    df: dict[str, int] = {}
    for d in docs:
        for t in set(d):
            df[t] = df.get(t, 0) + 1
    scores = []
    qset = set(query)
    for d in docs:
        tf: dict[str, int] = {}
        for t in d:
            if t in qset:
                tf[t] = tf.get(t, 0) + 1
        s = 0.0
        for t, f in tf.items():
            idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(d) / avg))
        scores.append(s)
    return scores


def has_anaphora(directive: str) -> bool:
    """Directive refers back to the newest closed turn (§10.4 step 4)."""
    lower = directive.lower()
    if any(w in _ANAPHORA_WORDS for w in _tokens(lower)):
        return True
    return any(p in lower for p in _ANAPHORA_PHRASES)


def plan_working_set(
    candidates: Sequence[PlanCandidate],
    *,
    budget: int,
    query: str,
    directive: str,
) -> WorkingSetPlan:
    """Regime A planner steps 4–6 (§10.4) over `candidates` (oldest first)."""
    if not candidates:
        return WorkingSetPlan(budget=budget)
    n = len(candidates)
    scores = _bm25(_tokens(query), [_tokens(c.index_text) for c in candidates])
    best = max(scores) if scores else 0.0
    anaphora = has_anaphora(directive)
    values = []
    for i in range(n):
        age = n - 1 - i
        recency = 1.0 / (1 + age)
        relevance = scores[i] / best if best > 0 else 0.0
        ana = 1.0 if anaphora and age == 0 else 0.0
        values.append((max(recency, relevance, ana), i))
    values.sort(key=lambda vi: (-vi[0], -vi[1]))
    spent = 0
    fidelity: dict[int, Fidelity] = {}
    for _, i in values:
        cost = candidates[i].tokens_full
        if spent + cost <= budget:
            fidelity[i] = Fidelity.FULL
            spent += cost
    packet_lo: int | None = None
    packet_hi: int | None = None
    for i in range(n - 1, -1, -1):
        if i in fidelity:
            continue
        if packet_hi is None and spent + candidates[i].tokens_card <= budget:
            fidelity[i] = Fidelity.CARD
            spent += candidates[i].tokens_card
            continue
        if packet_hi is None:
            packet_hi = i
        packet_lo = i
    per_turn = tuple((candidates[i].turn_id, f) for i, f in sorted(fidelity.items()))
    packet = None
    if packet_hi is not None and packet_lo is not None:
        packet = (candidates[packet_lo].turn_id, candidates[packet_hi].turn_id)
    return WorkingSetPlan(per_turn=per_turn, packet_range=packet, budget=budget, spent=spent)
