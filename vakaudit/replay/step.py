"""One replayed execute step as the replay yields it: the request, where it came from, and its checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vakaudit.ledger.projection import WorkingSetPlan
from vakaudit.names import shown
from vakaudit.replay.checks import CheckResult
from vakaudit.replay.prefix import PrefixBreak
from vakaudit.replay.request import NeutralRequest, Regime

__all__ = ["ReplayStep"]


@dataclass(slots=True)
class ReplayStep:
    """One reconstructed execute step: the request, where it came from, and the checks."""

    ledger_path: str
    session_id: str
    turn: int
    step: int
    receipt_id: str
    receipt_line: int | None
    regime: Regime
    generation: str
    request: NeutralRequest
    computed_digest: str
    recorded_digest: str
    binding_id: str | None
    checks: list[CheckResult]
    prefix_break: PrefixBreak | None = None
    message_chars: int = 0
    plan: WorkingSetPlan | None = None

    @property
    def status(self) -> str:
        """`fail` if any check failed, else `pass` if any passed, else `not_checkable`."""
        if any(c.failed for c in self.checks):
            return "fail"
        if any(c.passed for c in self.checks):
            return "pass"
        return "not_checkable"

    def check(self, name: str) -> CheckResult | None:
        return next((c for c in self.checks if c.name == name), None)

    def to_dict(self, *, with_request: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ledger": shown(self.ledger_path),
            "session_id": self.session_id,
            "turn": self.turn,
            "step": self.step,
            "receipt_id": self.receipt_id,
            "receipt_line": self.receipt_line,
            "regime": str(self.regime),
            "generation": str(self.generation),
            "model": self.request.model,
            "provider": self.request.provider,
            "binding_id": self.binding_id,
            "computed_digest": self.computed_digest,
            "recorded_digest": self.recorded_digest,
            "message_count": len(self.request.messages),
            "message_chars": self.message_chars,
            "breakpoints": self.request.breakpoints,
            "status": self.status,
            "checks": [c.to_dict() for c in self.checks],
            "prefix_break": self.prefix_break.to_dict() if self.prefix_break else None,
        }
        if with_request:
            out["request"] = self.request.to_dict()
        return out
