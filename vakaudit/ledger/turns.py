"""Turn structure of a session ledger (G2/G3): which messages form which turn.

Pure computation over an already-parsed active chain; no I/O here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Generation(StrEnum):
    """Ledger code generation whose projection rules apply (spec ledger.md §0)."""

    G1 = "g1"
    G1P = "g1p"
    G2 = "g2"
    G3 = "g3"
    G4 = "g4"


def generation_for(app_version: str) -> str:
    """Generation from a header's ``contract.app_version``: G1 < 3.5.0, G2 = 3.5.0, else G3."""
    parts = app_version.strip().split("-", 1)[0].split("+", 1)[0].split(".")
    try:
        nums = tuple(int(p) for p in parts)
    except ValueError:
        return Generation.G3
    while len(nums) < 3:
        nums = (*nums, 0)
    if nums[:3] < (3, 5, 0):
        return Generation.G1
    if nums[:3] == (3, 5, 0):
        return Generation.G2
    return Generation.G3


@dataclass(slots=True)
class Turn:
    """One user turn: its directive, steps, final answer and attached entries."""

    turn_id: str
    number: int
    directive: Any
    position: int = 0
    steps: list[Any] = field(default_factory=list)
    final_answer: Any = None
    evidence_ids: list[str] = field(default_factory=list)
    presentations: list[Any] = field(default_factory=list)
    card: dict | None = None
    card_written: bool = False
    reading: dict | None = None
    closed: bool = False
    behind_reset: bool = False
    raw_tail: list[Any] = field(default_factory=list)


@dataclass(slots=True)
class TurnIndex:
    """Turns and packets of one active chain."""

    turns: list[Turn] = field(default_factory=list)
    packets: list[Any] = field(default_factory=list)

    @classmethod
    def from_chain(cls, chain: Sequence[Any], *, generation: str) -> TurnIndex:
        raise NotImplementedError
