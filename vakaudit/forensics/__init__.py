"""Forensics: chain, tree and cross-artifact verification of a home, snapshot proofs, timelines.

Uses :mod:`vakaudit.ledger` for the format and the chain rules. Never writes, locks, truncates or
repairs anything inside a home.
"""

from __future__ import annotations

from vakaudit.forensics.ledger import LONG_LINE_BYTES, MAX_JSON_DEPTH, LedgerReport, verify_ledger
from vakaudit.forensics.policy import SEVERITY, TornPolicy, severity_of

__all__ = [
    "LedgerReport",
    "verify_ledger",
    "LONG_LINE_BYTES",
    "MAX_JSON_DEPTH",
    "SEVERITY",
    "TornPolicy",
    "severity_of",
]
