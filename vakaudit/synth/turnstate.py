"""The state a synthetic session carries between entries: the chain's (snapshotted at turn boundaries
so a branch can restore it) and the open turn's. Shared by :mod:`vakaudit.synth.session` and the
two parts of its writer (:mod:`vakaudit.synth.steps`, :mod:`vakaudit.synth.payloads`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ChainState", "TurnState"]


@dataclass(slots=True)
class ChainState:
    """Chain-dependent state, snapshotted at turn boundaries so a branch can restore it."""

    tail_id: str
    last_digest: str = ""
    seen_digests: frozenset = frozenset()
    goal_revision: int = 0
    turn_no: int = 0
    directive_ids: tuple = ()
    msg_chars: int = 0
    last_intent_visible: str | None = None


@dataclass(slots=True)
class TurnState:
    """What one turn has written so far, for the entries that close it."""

    number: int
    directive_id: str = ""
    directive_text: str = ""
    act: str = "answer"
    domains: list = field(default_factory=list)
    calls: list = field(default_factory=list)  # (tool, tool_use_id, input, result_len, result_head)
    presentations: list = field(default_factory=list)
    final_text: str = ""
    receipts: list = field(default_factory=list)  # (provider, model, usage, attempts)
