"""Forensics: chain, tree and cross-artifact verification of a home, snapshot proofs, timelines.

Public API:

- :func:`verify_ledger` (one ledger -> :class:`LedgerReport`), :func:`verify_home` (a whole home ->
  :class:`HomeReport`, what ``vakaudit verify`` prints);
- :func:`seal_home`, :func:`write_seal`, :func:`read_seal`, :func:`verify_since` (append-only proof
  between two points in time; ``vakaudit seal`` / ``verify --since``);
- :func:`build_timeline`, :func:`write_timeline` (``vakaudit timeline``);
- :class:`TornPolicy`, :data:`SEVERITY`, :func:`severity_of` (the severity policy).

Uses :mod:`vakaudit.ledger` for the format and the chain rules. Never writes, locks, truncates or
repairs anything inside a home.
"""

from __future__ import annotations

from vakaudit.forensics._io import is_inside
from vakaudit.forensics.home import HomeReport, verify_home
from vakaudit.forensics.ledger import LONG_LINE_BYTES, MAX_JSON_DEPTH, LedgerReport, verify_ledger
from vakaudit.forensics.policy import SEVERITY, TornPolicy, severity_of
from vakaudit.forensics.seal import SEAL_FORMAT, read_seal, seal_file, seal_home, verify_since, write_seal
from vakaudit.forensics.timeline import TIMELINE_FORMATS, TIMELINE_SCHEMA, build_timeline, write_timeline

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
    "build_timeline",
    "is_inside",
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
