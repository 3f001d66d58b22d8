"""Proactive retrieval (vak-session ``SessionLog::retrieve_relevant_entries``): the projected messages
of a ledger most relevant to a query, best first.

Restated from vak-session's log.rs and search.rs (the BM25 revision of cross-session recall):

- candidates: the current projection (plan-free), minus its last ``exclude_tail`` messages, minus
  compaction summaries and card blocks and runtime context (G1 intent note, work contract and
  conversation-thread blocks, control nudges: vak tags them control). In the turn-based generations
  vak keys every message of a turn by the turn id and tags no message control; so does this port.
- query: ``terms`` = lowercase alphanumeric runs of at least 2 characters, first occurrence order,
  no duplicates; ``phrase`` = the whole query lowercased (not trimmed). An empty (after trimming)
  query or ``cap`` 0 gives nothing.
- score of a message (its text blocks joined by LF, lowercased = ``hay``): for each term occurring in
  ``hay`` (non-overlapping count ``tf``, capped at 16), ``ln 2 * tf * (k1 + 1) / (tf + k1 * (1 - b +
  b * len(hay) / 100))`` with k1 = 1.2, b = 0.75, multiplied by 4 when the term is a named entity of
  the message; plus 3 when ``hay`` contains ``phrase``; 0 when no term occurs. Only positive scores
  are kept; stable sort by score, descending; the first ``cap``.
- named entities of the original text: whitespace-split words with trailing non-alphanumerics
  trimmed; a run of up to 4 words each starting with an uppercase letter followed by three lowercase
  ones (joined by ``_``, lowercased), or an all-uppercase word of 2-6 letters; a fixed list of noise
  words is dropped.

Differences from vak, both only at the edges: scores are computed in binary64 (vak: f32), so two
nearly equal scores may order differently; Rust's Unicode ``Alphabetic`` property is approximated by
``str.isalnum`` plus combining marks of scripts from U+0900 up (Indic vowel signs and the like).

Pure computation; no I/O.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from typing import Any

from vakaudit.ledger.digest import text_content
from vakaudit.ledger.turns import MESSAGE_LEVEL, TurnIndex, coerce_generation

__all__ = [
    "tokenize",
    "extract_entities",
    "score_text",
    "retrieve_relevant_entries",
    "BM25_K1",
    "BM25_B",
    "PHRASE_BONUS",
    "ENTITY_TOKEN_BONUS",
]

BM25_K1 = 1.2
BM25_B = 0.75
BM25_AVGDL_APPROX = 100.0
PHRASE_BONUS = 3.0
ENTITY_TOKEN_BONUS = 4.0
TERM_COUNT_CAP = 16
_IDF = math.log1p(1.0)  # vak's constant idf: ln(1 + 1)

_NOISY_ENTITIES = frozenset(
    {
        "the", "this", "that", "these", "those", "current", "latest", "previous", "next", "key",
        "summary", "based", "choice", "recommended", "actions", "analysis", "sources", "related",
        "source", "tools", "recovered", "please", "story", "continues", "copyright", "article", "body",
    }
)  # fmt: skip


def _is_alnum(ch: str) -> bool:
    if ch.isalnum():
        return True
    return ord(ch) >= 0x0900 and unicodedata.category(ch) in ("Mn", "Mc")


def tokenize(text: str) -> list[str]:
    """Lowercase alphanumeric runs of at least 2 characters, deduplicated, first-seen order."""
    out: list[str] = []
    seen: set[str] = set()
    current: list[str] = []
    for ch in text.lower() + " ":
        if _is_alnum(ch):
            current.append(ch)
        elif current:
            token = "".join(current)
            current.clear()
            if len(token) >= 2 and token not in seen:
                seen.add(token)
                out.append(token)
    return out


def _trim_end(word: str) -> str:
    end = len(word)
    while end and not _is_alnum(word[end - 1]):
        end -= 1
    return word[:end]


def _is_proper_noun_word(word: str) -> bool:
    return (
        len(word) >= 4 and word[0].isupper() and word[1].islower() and word[2].islower() and word[3].islower()
    )


def _is_acronym(word: str) -> bool:
    alpha = "".join(c for c in word if c.isalpha())
    return 2 <= len(alpha.encode("utf-8")) <= 6 and all(c.isupper() for c in alpha)


def extract_entities(text: str) -> list[str]:
    """Named entities of ``text`` (proper-noun runs joined by ``_``, acronyms), lowercased."""
    words = text.split()
    entities: list[str] = []
    seen: set[str] = set()
    i = 0
    while i < len(words):
        word = _trim_end(words[i])
        if _is_proper_noun_word(word):
            parts = [word.lower()]
            j = i + 1
            while j < len(words) and j < i + 4:
                nxt = _trim_end(words[j])
                if not _is_proper_noun_word(nxt):
                    break
                parts.append(nxt.lower())
                j += 1
            term = "_".join(parts)
            i = j
        elif _is_acronym(word):
            term = word.lower()
            i += 1
        else:
            i += 1
            continue
        if term not in _NOISY_ENTITIES and term not in seen:
            seen.add(term)
            entities.append(term)
    return entities


def score_text(text: str, terms: Sequence[str], phrase: str, entities: Sequence[str] = ()) -> float:
    """vak's ``score_normalized`` over ``text`` lowercased (see the module docstring)."""
    hay = text.lower()
    doc_len = max(len(hay), 1)
    length_penalty = 1.0 - BM25_B + BM25_B * doc_len / BM25_AVGDL_APPROX
    entity_set = set(entities)
    score = 0.0
    matched = False
    for term in terms:
        tf = min(hay.count(term), TERM_COUNT_CAP) if term else 0
        if tf == 0:
            continue
        matched = True
        denom = tf + BM25_K1 * length_penalty
        term_score = _IDF * tf * (BM25_K1 + 1.0) / denom if denom > 0 else _IDF * tf
        if term in entity_set:
            term_score *= ENTITY_TOKEN_BONUS
        score += term_score
    if not matched:
        return 0.0
    if phrase in hay:
        score += PHRASE_BONUS
    return score


def _candidates(chain: Sequence[Any] | TurnIndex, generation: str) -> list[tuple[str, dict]]:
    from vakaudit.ledger.projection import derive_tagged

    gen = coerce_generation(generation)
    index = chain if isinstance(chain, TurnIndex) else TurnIndex.from_chain(chain, generation=gen)
    tagged = derive_tagged(index, generation=gen)
    out: list[tuple[str, dict]] = []
    if gen in MESSAGE_LEVEL:
        for p in tagged:
            # synthesized blocks (work contract, thread) carry no entry id here; vak tags them control
            keep = not (p.is_summary or p.is_control or p.is_intent or not p.entry_id)
            out.append((p.entry_id, p.message) if keep else ("", {}))
        return out
    owner = {e.id: t.turn_id for t in index.turns if not t.closed for e in t.raw_tail}
    for p in tagged:
        out.append(("", {}) if p.is_summary else (owner.get(p.entry_id, p.entry_id), p.message))
    return out


def retrieve_relevant_entries(
    chain: Sequence[Any] | TurnIndex, query: str, cap: int, exclude_tail: int = 0, *, generation: str
) -> list[tuple[str, dict]]:
    """``(entry id, message)`` of the projected messages most relevant to ``query``, best first.

    ``chain`` is the active chain (root first) or its :class:`TurnIndex`; at most ``cap`` results; the
    last ``exclude_tail`` projected messages (the verbatim tail) are never candidates.
    """
    if not query.strip() or cap <= 0:
        return []
    terms = tokenize(query)
    phrase = query.lower()
    if not terms or not phrase:
        return []
    projected = _candidates(chain, generation)
    if len(projected) <= exclude_tail:
        return []
    scored: list[tuple[float, str, dict]] = []
    for entry_id, message in projected[: len(projected) - exclude_tail]:
        if not message:  # summary, card block or runtime context: never a candidate
            continue
        text = text_content(message)
        score = score_text(text, terms, phrase, extract_entities(text))
        if score > 0.0:
            scored.append((score, entry_id, message))
    scored.sort(key=lambda s: -s[0])
    return [(entry_id, message) for _, entry_id, message in scored[:cap]]
