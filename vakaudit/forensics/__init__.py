"""Forensics: chain, tree and cross-artifact verification of a home, snapshot proofs, timelines.

Public API:

- :func:`verify_ledger` (one ledger -> :class:`LedgerReport`), :func:`verify_home` (a whole home ->
  :class:`HomeReport`, what ``vakaudit verify`` prints);
- :func:`seal_home`, :func:`write_seal`, :func:`read_seal`, :func:`verify_since` (append-only proof
  between two points in time; ``vakaudit seal`` / ``verify --since``);
- :func:`build_timeline`, :func:`write_timeline` (``vakaudit timeline``);
- :class:`TornPolicy`, :data:`SEVERITY`, :func:`severity_of` (the severity policy).

Uses :mod:`vakaudit.ledger` for the format, the chain rules and the one classification of ledger
defects (:mod:`vakaudit.ledger.verdict`, which the scan uses too) with its severity policy
(:mod:`vakaudit.ledger.policy`). Never writes, locks, truncates or
repairs anything inside a home.
"""

from __future__ import annotations

from vakaudit._lazy import lazy_exports

# name -> submodule; loaded on first use, so that importing one small part (the CLI needs only the
# severity policy to declare its options) does not import the whole verifier and pyarrow with it
_EXPORTS = {
    "HomeReport": "home",
    "verify_home": "home",
    "LONG_LINE_BYTES": "vakaudit.ledger.verdict",
    "MAX_JSON_DEPTH": "vakaudit.ledger.verdict",
    "VerifyProgress": "home",
    "LedgerReport": "vakaudit.ledger.verdict",
    "verify_ledger": "vakaudit.ledger.verdict",
    "SEVERITY": "vakaudit.ledger.policy",
    "TornPolicy": "vakaudit.ledger.policy",
    "severity_of": "vakaudit.ledger.policy",
    "SEAL_FORMAT": "seal",
    "read_seal": "seal",
    "seal_file": "seal",
    "seal_home": "seal",
    "verify_since": "seal",
    "write_seal": "seal",
    "TIMELINE_FORMATS": "timeline",
    "TIMELINE_SCHEMA": "timeline",
    "build_timeline": "timeline",
    "write_timeline": "timeline",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


__all__ = [
    "HomeReport",
    "LedgerReport",
    "LONG_LINE_BYTES",
    "MAX_JSON_DEPTH",
    "SEAL_FORMAT",
    "SEVERITY",
    "TIMELINE_FORMATS",
    "TIMELINE_SCHEMA",
    "TornPolicy",
    "VerifyProgress",
    "build_timeline",
    "read_seal",
    "seal_file",
    "seal_home",
    "severity_of",
    "verify_home",
    "verify_ledger",
    "verify_since",
    "write_seal",
    "write_timeline",
]
