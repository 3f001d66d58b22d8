"""Findings: the forensic summary of the scan (chain breaks, torn lines, undeclared files, …), each
with the exact file (relative to the home), line and byte offset."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from vakaudit.findings import Severity
from vakaudit.report.inputs import ReportInputs

TITLE = "Findings"
ORDER = 120
MAX_LISTED = 200
MAX_DETAIL_CHARS = 120
RANK = {s.value: s.rank for s in Severity}


@dataclass(frozen=True, slots=True)
class CodeCount:
    code: str
    severity: str
    count: int
    files: int


@dataclass(frozen=True, slots=True)
class FindingRow:
    anchor: str
    code: str
    severity: str
    rel_path: str | None
    line_no: int | None
    offset_bytes: int | None
    entry_id: str | None
    message: str
    expected: str | None
    actual: str | None
    href: str | None
    source: str  # scan | verify


@dataclass(frozen=True, slots=True)
class Findings:
    total: int
    by_severity: dict[str, int]
    codes: list[CodeCount]
    rows: list[FindingRow]
    listed: int
    chain_ok_sessions: int
    sessions: int
    verified: bool  # the forensic cross checks ran (report --verify)


def _clip(text: str | None) -> str | None:
    if text is None:
        return None
    return text if len(text) <= MAX_DETAIL_CHARS else text[: MAX_DETAIL_CHARS - 1] + "…"


def build(inputs: ReportInputs) -> Findings:
    codes = inputs.query(
        "SELECT code, severity, sum(count) AS n, count(DISTINCT rel_path) AS files FROM report_findings GROUP BY code, severity"
    )
    codes_sorted = sorted(
        codes, key=lambda r: (-RANK.get(str(r["severity"]), -1), -int(r["n"]), str(r["code"]))
    )
    total = sum(int(r["n"]) for r in codes)
    by_sev = {s.value: 0 for s in sorted(Severity, key=lambda s: -s.rank)}
    for r in codes:
        by_sev[str(r["severity"])] = by_sev.get(str(r["severity"]), 0) + int(r["n"])
    rows_raw = inputs.query(
        f"""
        SELECT code, severity, rel_path, line_no, offset_bytes, entry_id, message, expected, actual, source
        FROM report_findings
        ORDER BY CASE severity WHEN 'critical' THEN 0 WHEN 'error' THEN 1 WHEN 'warning' THEN 2 ELSE 3 END,
                 code, rel_path NULLS FIRST, line_no NULLS FIRST, offset_bytes NULLS FIRST, message
        LIMIT {MAX_LISTED}
        """
    )
    rows = []
    for i, r in enumerate(rows_raw, start=1):
        href = None
        if inputs.link_base is not None and r["rel_path"]:
            href = (
                inputs.link_base + quote(str(r["rel_path"])) + (f"#L{r['line_no']}" if r["line_no"] else "")
            )
        rows.append(
            FindingRow(
                anchor=f"finding-{i}",
                code=str(r["code"]),
                severity=str(r["severity"]),
                rel_path=r["rel_path"],
                line_no=r["line_no"],
                offset_bytes=r["offset_bytes"],
                entry_id=r["entry_id"],
                message=str(r["message"]),
                expected=_clip(r["expected"]),
                actual=_clip(r["actual"]),
                href=href,
                source=str(r["source"]),
            )
        )
    chain = inputs.query("SELECT count(*) FILTER (WHERE chain_ok) AS ok, count(*) AS n FROM sessions")[0]
    return Findings(
        total=total,
        by_severity=by_sev,
        codes=[
            CodeCount(str(r["code"]), str(r["severity"]), int(r["n"]), int(r["files"])) for r in codes_sorted
        ],
        rows=rows,
        listed=len(rows),
        chain_ok_sessions=int(chain["ok"] or 0),
        sessions=int(chain["n"] or 0),
        verified=bool(
            inputs.query("SELECT count(*) AS n FROM report_findings WHERE source = 'verify'")[0]["n"]
        )
        or inputs.has_table("verify_findings"),
    )
