"""vakaudit: audit, investigate and capacity-plan the on-disk home of the vak agent runtime.

The public API is what ``__all__`` names; names are imported lazily so that ``import vakaudit``
stays fast and the ledger can be used without the analytics stack.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "SessionLog": "vakaudit.ledger",
    "Entry": "vakaudit.ledger",
    "TurnIndex": "vakaudit.ledger",
    "WorkingSetPlan": "vakaudit.ledger",
    "Fidelity": "vakaudit.ledger",
    "workspace_key": "vakaudit.ledger",
    "line_digest": "vakaudit.ledger",
    "LockedError": "vakaudit.ledger",
    "Finding": "vakaudit.findings",
    "FindingCode": "vakaudit.findings",
    "Severity": "vakaudit.findings",
    "VakauditError": "vakaudit.errors",
}

__all__ = ["__version__", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'vakaudit' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
