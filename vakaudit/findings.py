"""Findings: data problems found in a home, with provenance.

A finding never aborts a scan. Codes are a closed, stable vocabulary: users gate CI on them, so a
code is never renamed or reused. No I/O here.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from vakaudit.names import raw_bytes, shown

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
    # 7.0 frames, record chains and segments (vakaudit.storage)
    FRAME_BAD_LINK = "frame_bad_link"
    FRAME_BAD_LENGTH = "frame_bad_length"
    FRAME_TORN_TAIL = "frame_torn_tail"
    FRAME_UNDECRYPTABLE = "frame_undecryptable"
    FRAME_BAD_PAYLOAD = "frame_bad_payload"
    SEGMENT_MALFORMED = "segment_malformed"
    SEGMENT_SEAL_MISMATCH = "segment_seal_mismatch"
    SEGMENT_SEAL_MISSING = "segment_seal_missing"
    SEGMENT_DISCONTINUOUS = "segment_discontinuous"
    SEGMENT_SEALING_LEFTOVER = "segment_sealing_leftover"
    SEGMENT_INTERRUPTED_SEAL = "segment_interrupted_seal"
    SEGMENT_GAP = "segment_gap"
    SEGMENT_DROPPED = "segment_dropped"
    SEALS_LOG_BAD_ENTRY = "seals_log_bad_entry"
    # 7.0 tenant store and keys (vakaudit.storage)
    SCOPE_KEY_MALFORMED = "scope_key_malformed"
    SCOPE_KEY_MISSING = "scope_key_missing"
    SCOPE_ERASED = "scope_erased"
    GRANT_MALFORMED = "grant_malformed"
    OBJECT_ID_MISMATCH = "object_id_mismatch"
    REFS_DB_UNREADABLE = "refs_db_unreadable"
    DOCUMENT_MALFORMED = "document_malformed"
    # 7.0 homes: the tenant object store as a whole (vakaudit.forensics.home7)
    OBJECT_WITHOUT_GRANT = "object_without_grant"
    GRANT_WITHOUT_OBJECT = "grant_without_object"
    REF_TARGET_MISSING = "ref_target_missing"


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
    #: 7.0 record chains: the segment number and the frame's index in its segment (0-based).
    segment: int | None = None
    frame_index: int | None = None
    count: int = 1  # findings this one stands for: more than 1 for a fold of repeats (FindingFold)

    def to_dict(self) -> dict[str, Any]:
        """The finding as JSON-ready values: text escaped by :func:`vakaudit.names.shown` (a path or
        a message may carry a file name that is not UTF-8; its bytes: :func:`vakaudit.names.raw_bytes`
        of ``rel_path``)."""
        d = asdict(self)
        for name in ("rel_path", "message", "entry_id", "expected", "actual"):
            if isinstance(d[name], str):
                d[name] = shown(d[name])
        # the 7.0 chain position only where there is one: JSONL-era findings keep their shape
        for name in ("segment", "frame_index"):
            if d[name] is None:
                del d[name]
        d["code"] = str(self.code)
        d["severity"] = str(self.severity)
        return d

    def to_row(self) -> dict[str, Any]:
        """A row of the ``findings`` table: :meth:`to_dict` plus ``rel_path_raw``, the bytes of a
        ``rel_path`` that is not UTF-8 (None otherwise)."""
        d = self.to_dict()
        d["rel_path_raw"] = raw_bytes(self.rel_path)
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
            pa.field("rel_path_raw", pa.binary()),
            pa.field("line_no", pa.int64()),
            pa.field("offset_bytes", pa.int64()),
            pa.field("entry_id", pa.string()),
            pa.field("message", pa.string(), nullable=False),
            pa.field("expected", pa.string()),
            pa.field("actual", pa.string()),
            pa.field("count", pa.int64(), nullable=False),
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

    rows = [f.to_row() for f in findings]
    return pa.Table.from_pylist(rows, schema=findings_schema())


#: Findings of one code in one file listed in full before the rest are folded into a count.
FOLD_KEEP = 100


class FindingFold:
    """Collects findings in bounded memory: per code and file the first :data:`FOLD_KEEP` in full, the
    rest counted into one finding with ``count`` (so counts stay exact: the sum of ``count``).

    ``append`` takes a finding (a folded one adds its whole count); :meth:`findings` gives the kept
    findings followed by one fold per code and file that had more. A fold carries the line, byte
    offset and entry id of the first finding it folded.
    """

    __slots__ = ("_keep", "_seen", "_kept", "_folds")

    def __init__(self, keep: int = FOLD_KEEP) -> None:
        self._keep = keep
        self._seen: dict[tuple[str, str | None], int] = {}
        self._kept: list[Finding] = []
        self._folds: dict[tuple[str, str | None], list] = {}  # [first folded, count]

    def append(self, finding: Finding) -> None:
        key = (finding.code, finding.rel_path)
        n = self._seen.get(key, 0)
        self._seen[key] = n + finding.count
        if finding.count == 1 and n < self._keep:
            self._kept.append(finding)
            return
        fold = self._folds.get(key)
        if fold is None:
            self._folds[key] = [finding, finding.count]
        else:
            fold[1] += finding.count

    def extend(self, findings: Iterable[Finding]) -> None:
        for f in findings:
            self.append(f)

    @property
    def folded(self) -> int:
        """How many findings are not listed in full."""
        return sum(n for _, n in self._folds.values())

    def findings(self) -> list[Finding]:
        out = list(self._kept)
        for (code, rel), (first, n) in self._folds.items():
            if n == 1:  # one past the limit: it is listed as it is
                out.append(first)
                continue
            where = "" if first.line_no is None else f" from line {first.line_no} on"
            out.append(
                Finding(
                    FindingCode(code),
                    first.severity,
                    rel,
                    f"{n} more {code} finding(s) in this file{where}, folded into this row (the first "
                    f"{self._keep} are listed in full)",
                    first.line_no,
                    first.offset_bytes,
                    first.entry_id,
                    count=n,
                )
            )
        return out


def folded_count(findings: Iterable[Finding]) -> int:
    """How many of the findings ``findings`` stands for are folded (not listed in full)."""
    return sum(f.count for f in findings if f.count > 1)
