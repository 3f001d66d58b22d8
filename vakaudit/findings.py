"""Findings: data problems found in a home, with provenance.

A finding never aborts a scan. Codes are a closed, stable vocabulary: users gate CI on them, so a
code is never renamed or reused. No I/O here.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa


class Severity(StrEnum):
    """How bad a finding is, ordered ``info < warning < error < critical``."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2, Severity.CRITICAL: 3}


class FindingCode(StrEnum):
    """Stable finding codes. Add new ones at the end of their group; never rename."""

    # ledger lines and chain
    PREV_HASH_MISMATCH = "prev_hash_mismatch"
    TORN_LAST_LINE = "torn_last_line"
    UNPARSEABLE_LINE = "unparseable_line"
    INVALID_UTF8 = "invalid_utf8"
    DUPLICATE_ID = "duplicate_id"
    ORPHAN_PARENT = "orphan_parent"
    PARENT_CYCLE = "parent_cycle"
    UNCHAINED_LINE = "unchained_line"
    HEADER_MISSING = "header_missing"
    HEADER_NOT_FIRST = "header_not_first"
    DUPLICATE_HEADER = "duplicate_header"
    UNKNOWN_KIND = "unknown_kind"
    TIMESTAMP_BACKWARDS = "timestamp_backwards"
    CRLF_LINE_END = "crlf_line_end"
    BOM = "bom"
    LINE_TOO_LONG = "line_too_long"
    NESTING_TOO_DEEP = "nesting_too_deep"
    EMPTY_LEDGER = "empty_ledger"
    WORK_DUPLICATE_KIND = "work_duplicate_kind"
    LEDGER_GROWING = "ledger_growing"
    LINE_MODIFIED = "line_modified"
    LINES_REORDERED = "lines_reordered"
    ABANDONED_BRANCH = "abandoned_branch"
    # files and layout
    UNDECLARED_FILE = "undeclared_file"
    SYMLINK_OUTSIDE_HOME = "symlink_outside_home"
    UNREADABLE_FILE = "unreadable_file"
    SECRET_FILE = "secret_file"
    NESTED_HOME = "nested_home"
    TENANT_STORE_HOME = "tenant_store_home"
    APPEND_ONLY_VIOLATION = "append_only_violation"
    READER_FAILED = "reader_failed"
    SYMLINK_UNRESOLVABLE = "symlink_unresolvable"
    DATABASE_NOT_TABLE = "database_not_table"
    DATABASE_ROW_LIMIT = "database_row_limit"
    DATABASE_TIME_LIMIT = "database_time_limit"
    # sidecar rows
    SIDECAR_UNPARSEABLE_ROW = "sidecar_unparseable_row"
    # across artifacts (verify)
    RECEIPT_UNACCOUNTED = "receipt_unaccounted"
    SIDECAR_ROW_UNMATCHED = "sidecar_row_unmatched"
    SIDECAR_ROW_DUPLICATE = "sidecar_row_duplicate"
    INDEX_MISSING_ROW = "index_missing_row"
    INDEX_EXTRA_ROW = "index_extra_row"
    INDEX_STALE_ROW = "index_stale_row"
    CHECKPOINT_MISMATCH = "checkpoint_mismatch"
    COMMITMENT_EVENT_ILLEGAL = "commitment_event_illegal"
    OUTBOX_JOB_INVALID = "outbox_job_invalid"


@dataclass(frozen=True, slots=True)
class Finding:
    """One data problem, with where it was found."""

    code: FindingCode
    severity: Severity
    rel_path: str | None
    message: str
    line_no: int | None = None
    offset_bytes: int | None = None
    entry_id: str | None = None
    expected: str | None = None
    actual: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["code"] = str(self.code)
        d["severity"] = str(self.severity)
        return d


@functools.cache
def findings_schema() -> pa.Schema:
    """The ``findings`` table's schema (built on first use; see ``FINDINGS_SCHEMA``)."""
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("code", pa.string(), nullable=False),
            pa.field("severity", pa.string(), nullable=False),
            pa.field("rel_path", pa.string()),
            pa.field("line_no", pa.int64()),
            pa.field("offset_bytes", pa.int64()),
            pa.field("entry_id", pa.string()),
            pa.field("message", pa.string(), nullable=False),
            pa.field("expected", pa.string()),
            pa.field("actual", pa.string()),
        ]
    )


def __getattr__(name: str) -> Any:
    # FINDINGS_SCHEMA is built on first use: importing findings (every command does) must not pull in
    # pyarrow, which costs ~50 MB of RSS to commands that never build a table (synth, verify --json).
    if name == "FINDINGS_SCHEMA":
        return findings_schema()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def findings_table(findings: list[Finding]) -> pa.Table:
    """Findings as an Arrow table with :data:`FINDINGS_SCHEMA`."""
    import pyarrow as pa

    rows = [f.to_dict() for f in findings]
    return pa.Table.from_pylist(rows, schema=findings_schema())
