"""The vak session ledger (single-file JSONL era): read, verify and write it byte-compatibly.

Spec: ``ledger.md`` (envelope §2, hash chain §3, payload kinds §4, handle semantics §6, projection
§7). This package imports nothing from vakaudit except :mod:`vakaudit.errors`, :mod:`vakaudit.findings`
(the verdict on a ledger, :mod:`vakaudit.ledger.verdict`, is findings) and the compiled kernel
:mod:`vakaudit._native`.
"""

from __future__ import annotations

from vakaudit.errors import CorruptError, ExistsError, LedgerError, LockedError
from vakaudit.ledger.chain import (
    ChainVerifier,
    LineCheck,
    LineStatus,
    RawLine,
    iter_lines,
    iter_raw_lines,
    line_digest,
    verify_lines,
)
from vakaudit.ledger.entry import KNOWN_KINDS, Entry, EntryKind, EntryParseError
from vakaudit.ledger.ids import format_ts, new_uuid7, parse_ts
from vakaudit.ledger.jsonenc import dumps
from vakaudit.ledger.keys import agent_sessions_home, session_path, workspace_key
from vakaudit.ledger.log import SessionLog
from vakaudit.ledger.projection import Fidelity, WorkingSetPlan
from vakaudit.ledger.turns import TurnIndex
from vakaudit.ledger.work import WorkError, WorkItemState, WorkProjection, project_work

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
