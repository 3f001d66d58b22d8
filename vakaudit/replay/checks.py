"""Check verdicts attached to a replayed step (replay spec §16). Values only; no I/O here."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["CHECK_NAMES", "CheckName", "CheckResult", "CheckStatus", "HOST_PARAMETERS", "V7_NEEDS_KEYS"]


class CheckStatus(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    NOT_CHECKABLE = "not_checkable"


class CheckName(StrEnum):
    """Stable check names (the `--json` keys)."""

    PREFIX_DIGEST = "prefix_digest"
    PREFIX_CHANGED_ACTIVITY = "prefix_changed_activity"
    PREFIX_TOKENS_WINDOW = "prefix_tokens_window"
    BINDING_CONSISTENCY = "binding_consistency"
    BINDING_REF = "binding_ref"
    MODEL_VISIBLE_LOGGED = "model_visible_logged"
    USAGE_SANITY = "usage_sanity"
    APPEND_ONLY = "append_only"


CHECK_NAMES = tuple(CheckName)

#: What each check reads of a 7.0 home that only keys open (baseline7.md §6.5, §8.3, §8.6): every
#: ledger entry is a frame sealed under the conversation key, and the interface behind a binding
#: (system prompt, tools, tool index) is a tenant object, sealed whatever the frames are.
V7_NEEDS_KEYS: dict[str, str] = {
    CheckName.PREFIX_DIGEST: "receipts (sealed frames) and the system prompt and tools (interface objects)",
    CheckName.PREFIX_CHANGED_ACTIVITY: "receipts and activities (sealed frames) and the interface objects",
    CheckName.PREFIX_TOKENS_WINDOW: "messages and receipts (sealed frames) and the tool index (interface objects)",
    CheckName.BINDING_CONSISTENCY: "bindings (sealed frames) and their tool schemas and index (interface objects)",
    CheckName.BINDING_REF: "turn_capabilities_bound and turn_capabilities_ref entries (sealed frames)",
    CheckName.MODEL_VISIBLE_LOGGED: "messages and intents (sealed frames)",
    CheckName.USAGE_SANITY: "receipts and assistant messages (sealed frames)",
    CheckName.APPEND_ONLY: "every step's request: sealed frames and interface objects",
}

HOST_PARAMETERS = ("temporal", "stance", "max_tokens", "horizon_tokens", "output_reserve")
"""Request parts a 3.x ledger never recorded; checks name the ones their verdict depends on."""


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check's verdict on one step, with the reason and the host parameters it relied on."""

    name: CheckName
    status: CheckStatus
    reason: str = ""
    depends_on: tuple[str, ...] = ()
    expected: Any = None
    actual: Any = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status is CheckStatus.PASS

    @property
    def failed(self) -> bool:
        return self.status is CheckStatus.FAIL

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": str(self.name), "status": str(self.status), "reason": self.reason}
        out["depends_on"] = list(self.depends_on)
        if self.expected is not None or self.actual is not None:
            out["expected"] = self.expected
            out["actual"] = self.actual
        if self.details:
            out["details"] = self.details
        return out


def passed(name: CheckName, reason: str = "", **kw: Any) -> CheckResult:
    return CheckResult(name, CheckStatus.PASS, reason, **kw)


def failed(name: CheckName, reason: str, **kw: Any) -> CheckResult:
    return CheckResult(name, CheckStatus.FAIL, reason, **kw)


def not_checkable(name: CheckName, reason: str, **kw: Any) -> CheckResult:
    return CheckResult(name, CheckStatus.NOT_CHECKABLE, reason, **kw)
