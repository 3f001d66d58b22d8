"""What the model sees: projections of the active chain into neutral messages.

Pure computation over an already-parsed active chain; no I/O here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from vakaudit.ledger.turns import Generation, TurnIndex, generation_for

__all__ = [
    "Fidelity",
    "Generation",
    "TailSections",
    "TurnIndex",
    "WorkingSetPlan",
    "derive_messages",
    "derive_with_plan",
    "generation_for",
    "tail_sections",
]


class Fidelity(StrEnum):
    """How a closed turn is rendered under a working-set plan (§7.5)."""

    FULL = "Full"
    CARD = "Card"
    PACKET = "Packet"


@dataclass(frozen=True, slots=True)
class WorkingSetPlan:
    """In-memory working-set plan: per-turn fidelity, optional packet range, budget."""

    per_turn: tuple[tuple[str, Fidelity], ...] = ()
    packet_range: tuple[str, str] | None = None
    retrieved: tuple[str, ...] = ()
    budget: int = 0
    spent: int = 0


@dataclass(frozen=True, slots=True)
class TailSections:
    """Session part of the request tail (§7.7); each absent section is None."""

    intent: str | None = None
    work_contract: str | None = None
    thread: str | None = None
    workspace: str | None = None


def derive_messages(chain: Sequence[Any], *, generation: str) -> list[dict]:
    """Projection without a plan."""
    raise NotImplementedError


def derive_with_plan(chain: Sequence[Any], plan: WorkingSetPlan | None, *, generation: str) -> list[dict]:
    """Projection under a working-set plan (G2+)."""
    raise NotImplementedError


def tail_sections(chain: Sequence[Any], *, generation: str, plan: WorkingSetPlan | None = None) -> TailSections:
    """Tail sections of the request (G1' onward)."""
    raise NotImplementedError
