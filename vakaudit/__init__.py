"""vakaudit: audit, investigate and capacity-plan the on-disk home of the vak agent runtime.

The public API is what ``__all__`` names; names are imported lazily so that ``import vakaudit``
stays fast and the ledger can be used without the analytics stack. The analysis entry point is
``vakaudit.analyze.analyze`` (``vakaudit.analyze`` is its package).
"""

from __future__ import annotations

from vakaudit._lazy import lazy_exports

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
    "scan_home": "vakaudit.scan",
    "ScanResult": "vakaudit.scan",
    "Analysis": "vakaudit.analyze",
    "iter_requests": "vakaudit.replay",
    "verify_home": "vakaudit.forensics",
    "verify_ledger": "vakaudit.forensics",
    "seal_home": "vakaudit.forensics",
    "verify_since": "vakaudit.forensics",
    "build_timeline": "vakaudit.forensics",
    "build_home": "vakaudit.synth",
    "build_report": "vakaudit.report",
    "Finding": "vakaudit.findings",
    "FindingCode": "vakaudit.findings",
    "Severity": "vakaudit.findings",
    "VakauditError": "vakaudit.errors",
}

__all__ = ["__version__", *sorted(_LAZY)]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
