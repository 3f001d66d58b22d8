"""The vak session ledger (single-file JSONL era): read, verify and write it byte-compatibly.

Spec: ``ledger.md`` (envelope §2, hash chain §3, payload kinds §4, handle semantics §6, projection
§7). This package imports nothing from vakaudit except :mod:`vakaudit.errors`, :mod:`vakaudit.findings`
(the verdict on a ledger, :mod:`vakaudit.ledger.verdict`, is findings) and the compiled kernel
:mod:`vakaudit._native`.
"""

from __future__ import annotations

from vakaudit._lazy import lazy_exports
from vakaudit.errors import CorruptError, ExistsError, LedgerError, LockedError

# Names resolve on first use (PEP 562): importing vakaudit.ledger, or one small module of it such
# as vakaudit.ledger.policy, does not import the projection, turns and work modules a command may
# never need.
_LAZY: dict[str, str] = {
    "ChainVerifier": "vakaudit.ledger.chain",
    "Entry": "vakaudit.ledger.entry",
    "EntryKind": "vakaudit.ledger.entry",
    "EntryParseError": "vakaudit.ledger.entry",
    "Fidelity": "vakaudit.ledger.projection",
    "KNOWN_KINDS": "vakaudit.ledger.entry",
    "LineCheck": "vakaudit.ledger.chain",
    "LineStatus": "vakaudit.ledger.chain",
    "RawLine": "vakaudit.ledger.chain",
    "SessionLog": "vakaudit.ledger.log",
    "TurnIndex": "vakaudit.ledger.turns",
    "WorkError": "vakaudit.ledger.work",
    "WorkItemState": "vakaudit.ledger.work",
    "WorkProjection": "vakaudit.ledger.work",
    "WorkingSetPlan": "vakaudit.ledger.projection",
    "agent_sessions_home": "vakaudit.ledger.keys",
    "dumps": "vakaudit.ledger.jsonenc",
    "format_ts": "vakaudit.ledger.ids",
    "iter_lines": "vakaudit.ledger.chain",
    "iter_raw_lines": "vakaudit.ledger.chain",
    "line_digest": "vakaudit.ledger.chain",
    "new_uuid7": "vakaudit.ledger.ids",
    "parse_ts": "vakaudit.ledger.ids",
    "project_work": "vakaudit.ledger.work",
    "session_path": "vakaudit.ledger.keys",
    "verify_lines": "vakaudit.ledger.chain",
    "workspace_key": "vakaudit.ledger.keys",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())


__all__ = [
    "SessionLog",
    "Entry",
    "EntryKind",
    "EntryParseError",
    "KNOWN_KINDS",
    "TurnIndex",
    "WorkingSetPlan",
    "Fidelity",
    "workspace_key",
    "session_path",
    "agent_sessions_home",
    "line_digest",
    "ChainVerifier",
    "LineCheck",
    "LineStatus",
    "RawLine",
    "iter_raw_lines",
    "iter_lines",
    "verify_lines",
    "dumps",
    "new_uuid7",
    "format_ts",
    "parse_ts",
    "LedgerError",
    "LockedError",
    "ExistsError",
    "CorruptError",
    "WorkError",
    "WorkProjection",
    "WorkItemState",
    "project_work",
]
