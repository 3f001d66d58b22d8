"""Severity policy of ``vakaudit verify``: one table, one torn-line policy, one threshold.

Every finding ``verify`` reports gets its severity from :data:`SEVERITY` (findings coming from other
parts of vakaudit, e.g. the home walk, are re-graded with the same table so one policy rules a
report). ``--torn`` changes the grade of *bad lines* only, mirroring RocksDB's WAL recovery modes:

- ``strict`` (kAbsoluteConsistency): a torn last line is an error like any other bad line.
- ``tolerate-tail`` (kTolerateCorruptedTailRecords, the default): a torn last line is a warning,
  because vak itself tolerates it (its reader skips the fragment); other bad lines are errors.
- ``skip`` (kSkipAnyCorruptedRecords): every bad line (torn, unparseable, invalid UTF-8, nested too
  deep) is a warning.

In every mode verification reads on past a bad line and reports everything (a verifier is not a
recovery). Chain breaks (``prev_hash_mismatch``, ``line_modified``, ``lines_reordered``) stay errors in
every mode: they mean bytes changed after they were written, not that a write was interrupted.

No I/O here.
"""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum

from vakaudit.errors import UsageError
from vakaudit.findings import Finding, FindingCode, Severity

__all__ = ["TornPolicy", "SEVERITY", "BAD_LINE_CODES", "CHAIN_BREAK_CODES", "severity_of", "regrade", "parse_severity"]

C = FindingCode
S = Severity


class TornPolicy(StrEnum):
    """How bad lines are graded (``--torn``)."""

    STRICT = "strict"
    TOLERATE_TAIL = "tolerate-tail"
    SKIP = "skip"


#: Default severity of every code (``--torn tolerate-tail``). Why each grade, briefly:
SEVERITY: dict[FindingCode, Severity] = {
    # chain: bytes changed after they were written
    C.PREV_HASH_MISMATCH: S.ERROR,
    C.LINE_MODIFIED: S.ERROR,
    C.LINES_REORDERED: S.ERROR,
    C.DUPLICATE_ID: S.ERROR,  # vak's by-id index keeps the last one; parents resolve wrongly
    C.ORPHAN_PARENT: S.ERROR,  # vak refuses an unknown parent on append: lines are missing
    C.PARENT_CYCLE: S.ERROR,  # only a hand edit makes one
    C.HEADER_MISSING: S.ERROR,
    C.HEADER_NOT_FIRST: S.ERROR,
    # bad lines (graded by --torn)
    C.TORN_LAST_LINE: S.WARNING,  # vak skips the fragment and reads on
    C.UNPARSEABLE_LINE: S.ERROR,
    C.INVALID_UTF8: S.ERROR,  # vak refuses to open the whole ledger
    C.NESTING_TOO_DEEP: S.ERROR,  # serde_json's recursion limit (128): vak skips the line
    C.BOM: S.ERROR,  # serde_json rejects the BOM: vak loses the header line
    # readable, but not as vak wrote it
    C.UNCHAINED_LINE: S.WARNING,  # written before hash chaining: cannot be verified
    C.DUPLICATE_HEADER: S.WARNING,
    C.UNKNOWN_KIND: S.WARNING,  # vak skips the line
    C.TIMESTAMP_BACKWARDS: S.WARNING,  # clocks step back; worth a look, not proof of tampering
    C.CRLF_LINE_END: S.WARNING,  # vak strips the CR; digests still verify
    C.EMPTY_LEDGER: S.WARNING,
    C.LINE_TOO_LONG: S.INFO,
    C.WORK_DUPLICATE_KIND: S.INFO,  # vak's own bytes; its serde reader skips them on reopen
    C.LEDGER_GROWING: S.INFO,
    C.ABANDONED_BRANCH: S.INFO,  # branch_at is a vak feature
    # files and layout
    C.UNDECLARED_FILE: S.INFO,
    C.SYMLINK_OUTSIDE_HOME: S.WARNING,  # never followed
    C.UNREADABLE_FILE: S.ERROR,  # could not be verified at all
    C.SECRET_FILE: S.INFO,
    C.NESTED_HOME: S.INFO,  # known vak defect D2
    C.TENANT_STORE_HOME: S.INFO,  # a 7.0 home: says which of its parts are verified
    C.APPEND_ONLY_VIOLATION: S.ERROR,
    C.SIDECAR_UNPARSEABLE_ROW: S.WARNING,
    C.READER_FAILED: S.ERROR,  # a file could not be read as its kind at all
    C.SYMLINK_UNRESOLVABLE: S.WARNING,  # a loop or a dangling link: never followed
    C.DATABASE_NOT_TABLE: S.WARNING,  # a view (or anything else) where vak writes a table: not read
    C.DATABASE_ROW_LIMIT: S.WARNING,  # more rows than vakaudit reads from a database it did not write
    C.DATABASE_TIME_LIMIT: S.WARNING,  # a query over such a database ran past its time budget
    # across artifacts
    C.RECEIPT_UNACCOUNTED: S.WARNING,  # the cost log legitimately drops rows older than 90 days
    C.SIDECAR_ROW_UNMATCHED: S.WARNING,
    C.SIDECAR_ROW_DUPLICATE: S.ERROR,  # a dispatch billed twice
    C.INDEX_MISSING_ROW: S.INFO,  # store.db is derived and may lag
    C.INDEX_EXTRA_ROW: S.WARNING,
    C.INDEX_STALE_ROW: S.WARNING,
    C.CHECKPOINT_MISMATCH: S.WARNING,  # a manifest whose name, directory and content disagree
    C.COMMITMENT_EVENT_ILLEGAL: S.WARNING,  # vak's append refuses these: a hand edit or an old build
    C.OUTBOX_JOB_INVALID: S.WARNING,
    # 7.0 tenant store as a whole (forensics/home7.py)
    C.OBJECT_WITHOUT_GRANT: S.WARNING,  # unreadable by every scope; vak's GC collects it
    C.GRANT_WITHOUT_OBJECT: S.WARNING,  # vak writes the grant before the body: an interrupted put
    C.REF_TARGET_MISSING: S.ERROR,  # a Document whose current version is gone
}

#: Chain breaks: bytes changed after they were written (errors under every ``--torn`` policy; the
#: "chain findings" a ``vakaudit check`` budget bounds).
CHAIN_BREAK_CODES = frozenset({C.PREV_HASH_MISMATCH, C.LINE_MODIFIED, C.LINES_REORDERED})

#: Codes whose grade ``--torn`` changes.
BAD_LINE_CODES = frozenset({C.TORN_LAST_LINE, C.UNPARSEABLE_LINE, C.INVALID_UTF8, C.NESTING_TOO_DEEP})


def severity_of(code: FindingCode, torn: TornPolicy = TornPolicy.TOLERATE_TAIL) -> Severity:
    """The severity ``verify`` gives ``code`` under the torn-line policy ``torn``."""
    if code in BAD_LINE_CODES:
        if torn is TornPolicy.SKIP:
            return S.WARNING
        if code is C.TORN_LAST_LINE:
            return S.ERROR if torn is TornPolicy.STRICT else S.WARNING
    return SEVERITY.get(code, S.WARNING)


def regrade(finding: Finding, torn: TornPolicy = TornPolicy.TOLERATE_TAIL) -> Finding:
    """``finding`` with the severity of this policy (codes the table does not know keep theirs)."""
    if finding.code not in SEVERITY:
        return finding
    sev = severity_of(finding.code, torn)
    return finding if sev == finding.severity else replace(finding, severity=sev)


def parse_severity(text: str) -> Severity:
    """A ``--fail-on`` value; raises :class:`UsageError` for anything else."""
    try:
        return Severity(text.lower())
    except ValueError:
        names = ", ".join(s.value for s in Severity)
        raise UsageError(f"--fail-on must be one of {names}, not {text!r}") from None
