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

__all__ = [
    "CapacityProfile",
    "PlanCandidate",
    "RelevanceIndex",
    "greedy_admission",
    "plan_from_admission",
    "plan_working_set",
    "profile_from_activity",
    "rank_candidates",
    "tokenize",
    "update_profile",
]

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


def tokenize(text: str) -> list[str]:
    """Lowercase alphanumeric terms (vak's exact tokenizer is unconfirmed)."""
    return _TOKEN_RE.findall(text.lower())


class RelevanceIndex:
    """Incremental BM25 (k1 1.2, b 0.75) over card index texts; docs are added, never changed."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.lengths: list[int] = []
        self.postings: dict[str, list[tuple[int, int]]] = {}
        self.total = 0

    def add(self, text: str) -> int:
        terms = tokenize(text)
        doc = len(self.lengths)
        tf: dict[str, int] = {}
        for t in terms:
            tf[t] = tf.get(t, 0) + 1
        for t, f in tf.items():
            self.postings.setdefault(t, []).append((doc, f))
        self.lengths.append(len(terms))
        self.total += len(terms)
        return doc

    def scores(self, query: str, n_docs: int | None = None) -> list[float]:
        """BM25 score of each of the first `n_docs` docs (all by default) against `query`."""
        n = len(self.lengths) if n_docs is None else n_docs
        out = [0.0] * n
        if n == 0:
            return out
        lengths = self.lengths
        avg = (sum(lengths[:n]) / n) if n != len(lengths) else (self.total / n)
        avg = avg or 1.0
        k1, b = self.k1, self.b
        for t in set(tokenize(query)):
            post = self.postings.get(t, ())
            if n != len(lengths):
                post = [(d, f) for d, f in post if d < n]
            if not post:
                continue
            df = len(post)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for d, f in post:
                out[d] += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * lengths[d] / avg))
        return out


def has_anaphora(directive: str) -> bool:
    """Directive refers back to the newest closed turn (§10.4 step 4)."""
    lower = directive.lower()
    if any(w in _ANAPHORA_WORDS for w in tokenize(lower)):
        return True
    return any(p in lower for p in _ANAPHORA_PHRASES)


def rank_candidates(
    candidates: Sequence[PlanCandidate], relevance: Sequence[float], directive: str
) -> list[int]:
    """Candidate positions by value desc, ties newer first (§10.4 steps 4–5)."""
    n = len(candidates)
    best = max(relevance) if relevance else 0.0
    anaphora = has_anaphora(directive)
    values = []
    for i in range(n):
        age = n - 1 - i
        value = 1.0 / (1 + age)
        if best > 0:
            value = max(value, relevance[i] / best)
        if anaphora and age == 0:
            value = 1.0
        values.append((value, i))
    values.sort(key=lambda vi: (-vi[0], -vi[1]))
    return [i for _, i in values]


Admission = tuple[tuple[tuple[int, Fidelity], ...], tuple[int, int] | None]
"""A plan's shape over a candidate list: sorted (candidate position, fidelity), packet positions."""


def greedy_admission(
    candidates: Sequence[PlanCandidate], order: Sequence[int], budget: int
) -> tuple[Admission, int]:
    """§10.4 steps 5–6 over a precomputed ranking: (admission, tokens spent)."""
    n = len(candidates)
    spent = 0
    fidelity: dict[int, Fidelity] = {}
    for i in order:
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
    packet = (packet_lo, packet_hi) if packet_hi is not None and packet_lo is not None else None
    return (tuple(sorted(fidelity.items())), packet), spent


def plan_from_admission(
    candidates: Sequence[PlanCandidate], admission: Admission, budget: int, spent: int
) -> WorkingSetPlan:
    """The `WorkingSetPlan` (turn ids) of an admission."""
    fidelity, packet_idx = admission
    per_turn = tuple((candidates[i].turn_id, f) for i, f in fidelity)
    packet = None
    if packet_idx is not None:
        packet = (candidates[packet_idx[0]].turn_id, candidates[packet_idx[1]].turn_id)
    return WorkingSetPlan(per_turn=per_turn, packet_range=packet, budget=budget, spent=spent)


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
    index = RelevanceIndex()
    for c in candidates:
        index.add(c.index_text)
    order = rank_candidates(candidates, index.scores(query), directive)
    admission, spent = greedy_admission(candidates, order, budget)
    return plan_from_admission(candidates, admission, budget, spent)
