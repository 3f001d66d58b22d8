"""The vak session ledger (single-file JSONL era): read, verify and write it byte-compatibly.

Spec: ``ledger.md`` (envelope §2, hash chain §3, payload kinds §4, handle semantics §6, projection
§7). This package imports nothing from vakaudit except :mod:`vakaudit.errors`, :mod:`vakaudit.findings`
(the verdict on a ledger, :mod:`vakaudit.ledger.verdict`, is findings) and the compiled kernel
:mod:`vakaudit._native`.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> module; loaded on first use, so that importing one small part (verify of a 7.0 home needs
# only the severity policy) does not import the whole JSONL ledger reader and writer with it
_EXPORTS = {
    "CorruptError": "vakaudit.errors",
    "ExistsError": "vakaudit.errors",
    "LedgerError": "vakaudit.errors",
    "LockedError": "vakaudit.errors",
    "ChainVerifier": "vakaudit.ledger.chain",
    "LineCheck": "vakaudit.ledger.chain",
    "LineStatus": "vakaudit.ledger.chain",
    "RawLine": "vakaudit.ledger.chain",
    "iter_lines": "vakaudit.ledger.chain",
    "iter_raw_lines": "vakaudit.ledger.chain",
    "line_digest": "vakaudit.ledger.chain",
    "verify_lines": "vakaudit.ledger.chain",
    "KNOWN_KINDS": "vakaudit.ledger.entry",
    "Entry": "vakaudit.ledger.entry",
    "EntryKind": "vakaudit.ledger.entry",
    "EntryParseError": "vakaudit.ledger.entry",
    "format_ts": "vakaudit.ledger.ids",
    "new_uuid7": "vakaudit.ledger.ids",
    "parse_ts": "vakaudit.ledger.ids",
    "dumps": "vakaudit.ledger.jsonenc",
    "agent_sessions_home": "vakaudit.ledger.keys",
    "session_path": "vakaudit.ledger.keys",
    "workspace_key": "vakaudit.ledger.keys",
    "SessionLog": "vakaudit.ledger.log",
    "Fidelity": "vakaudit.ledger.projection",
    "WorkingSetPlan": "vakaudit.ledger.projection",
    "TurnIndex": "vakaudit.ledger.turns",
    "WorkError": "vakaudit.ledger.work",
    "WorkItemState": "vakaudit.ledger.work",
    "WorkProjection": "vakaudit.ledger.work",
    "project_work": "vakaudit.ledger.work",
}

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
