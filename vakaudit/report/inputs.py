"""What every report section builds from: the analysis, the open scan, the write map and options.

The report presents; :mod:`vakaudit.analyze` computes. Sections read the analysis' metric rows
first and query the scan (through the same DuckDB views analyze uses) only for the few small
aggregates no metric provides. Nothing here reads message text unless ``include_content`` is set.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vakaudit.errors import UsageError
from vakaudit.outputs import check_temp_dir

# ISO 8601 with seconds, UTC, as printed in the footer ("generated on ...").
CLOCK_FORMAT = "%Y-%m-%d %H:%M UTC"


def system_clock() -> datetime:
    return datetime.now(UTC)


@dataclass(slots=True)
class ReportInputs:
    """Everything a section's ``build`` may use. Paths shown in the report are relative to the home."""

    analysis: Any  # vakaudit.analyze.Analysis
    con: Any  # DuckDB connection from vakaudit.analyze.open_scan (views over the scan)
    manifest: dict[str, Any]
    kinds: dict[str, Any]  # artifact kind name -> ArtifactKind (the write map)
    readscale: Any | None  # vakaudit.analyze.readscale.ReadScaleResult, when one is stored
    include_content: bool
    generated_at: datetime
    home: Path | None  # the home root when it is readable here (content opt-in only)
    link_base: str | None = None  # prefix for file links in findings (None: no href)
    cache: dict[str, Any] = field(default_factory=dict)
    compare: ComparedHome | None = None  # the other home of ``report --compare``

    @property
    def metrics(self) -> dict[str, Any]:
        return self.analysis.metrics

    @property
    def layout(self) -> str | None:
        return self.manifest.get("layout")

    @property
    def locked(self) -> bool:
        """A 7.0 home scanned without the keys to some of its frames (the scan's ``locked_frames``)."""
        return int((self.manifest.get("stats") or {}).get("locked_frames") or 0) > 0

    def card(self, name: str) -> Any:
        """The write-map card of artifact kind ``name`` in this home's layout (a 7.0 home gets the
        7.0 card of a side ledger that became a record chain); None for an undeclared kind."""
        from vakaudit.analyze._open import card_for

        k = self.kinds.get(name)
        return card_for(k, self.layout) if k is not None else None

    def rows(self, metric: str) -> list[dict[str, Any]]:
        m = self.analysis.metrics.get(metric)
        return list(m.rows) if m is not None else []

    def one(self, metric: str) -> dict[str, Any]:
        rows = self.rows(metric)
        return rows[0] if rows else {}

    def measured(self, metric: str) -> str:
        m = self.analysis.metrics.get(metric)
        return m.measured if m is not None else ""

    def query(self, sql: str, params: Any = None) -> list[dict[str, Any]]:
        """A small aggregate over the scan (JSON-ready rows, floats rounded like analyze's)."""
        from vakaudit.analyze.metrics import query_rows

        return query_rows(self.con, sql, params)

    def has_table(self, name: str) -> bool:
        key = "_views"
        if key not in self.cache:
            self.cache[key] = {
                r[0]
                for r in self.con.execute(
                    "SELECT view_name FROM duckdb_views() WHERE NOT internal "
                    "UNION SELECT table_name FROM duckdb_tables()"
                ).fetchall()
            }
        return name in self.cache[key]

    def memo(self, key: str, fn: Callable[[], Any]) -> Any:
        if key not in self.cache:
            self.cache[key] = fn()
        return self.cache[key]


@dataclass(frozen=True, slots=True)
class ComparedHome:
    """The other home of a comparison, measured the same way: its analysis and the kinds present in
    it per declared read class (``flat``, ``session``, ``home``)."""

    name: str  # the home's folder name (paths are not shown)
    layout: str
    analysis: Any  # vakaudit.analyze.Analysis
    read_classes: dict[str, int]


def read_class_counts(con: Any) -> dict[str, int]:
    """Artifact kinds present in a scan per read class of their write card."""
    rows = con.execute(
        "SELECT c.read_class, count(DISTINCT f.kind) FROM files f JOIN write_cards c ON c.kind = f.kind "
        "GROUP BY 1 ORDER BY 1"
    ).fetchall()
    return {str(k): int(n) for k, n in rows}


def load_compared(
    home_or_scan: str | os.PathLike[str], *, keys: Any = None, progress: Callable[[str], None] | None = None
) -> ComparedHome:
    """Scan (when given a home) and analyze the comparison home of ``report --compare``."""
    from vakaudit.analyze import analyze_open, open_scan
    from vakaudit.analyze._open import read_manifest, resolve_scan

    scan = resolve_scan(home_or_scan, progress=progress, keys=keys)
    con = open_scan(scan)
    try:
        analysis = analyze_open(con, scan, progress=progress)
        classes = read_class_counts(con)
    finally:
        con.close()
    manifest = read_manifest(scan)
    name = Path(manifest.get("home") or str(home_or_scan)).name
    return ComparedHome(name, str(manifest.get("layout")), analysis, classes)


def load_inputs(
    home_or_scan: str | os.PathLike[str],
    *,
    include_content: bool = False,
    clock: Callable[[], datetime] | None = None,
    readscale: str | os.PathLike[str] | None = None,
    scan_out: str | os.PathLike[str] | None = None,
    link_base: str | None = None,
    turns: tuple[int, ...] | None = None,
    verify: bool = False,
    progress: Callable[[str], None] | None = None,
    keys: Any = None,
    compare: str | os.PathLike[str] | None = None,
    compare_keys: Any = None,
) -> ReportInputs:
    """Scan (when given a home), analyze and open the scan for the report's sections.

    ``readscale``: a stored :mod:`vakaudit.analyze.readscale` result (file or directory); by default
    the scan directory's ``readscale.json`` is used when present. ``verify``: also run
    :func:`vakaudit.forensics.verify_home` on the home (cross-artifact checks: receipts against the
    cost and routing ledgers, store.db against the ledgers, abandoned branches) and add what it finds
    beyond the scan's own findings; needs the home, and reads every ledger again. ``keys`` (a
    :class:`~vakaudit.storage.KeyRing`) unlocks a sealed 7.0 home for the scan. ``compare``: another
    home or scan (either generation), measured the same way for the comparison section and the
    measured to-be; ``compare_keys`` unlocks it when it is a sealed 7.0 home.
    """
    from vakaudit.analyze import analyze_open, open_scan
    from vakaudit.analyze import readscale as rs
    from vakaudit.analyze._open import read_manifest, resolve_scan
    from vakaudit.artifacts import all_kinds
    from vakaudit.report.chart_process import running
    from vakaudit.report.charts import warm_up

    # a chart process (started before the scan) holds a core while it starts its engine: the scan
    # takes the others (on two cores it reads in this process: no pool competing with it)
    jobs = max(1, (os.cpu_count() or 1) - 1) if running() is not None else None
    scan = resolve_scan(home_or_scan, out=scan_out, progress=progress, keys=keys, jobs=jobs)
    kwargs: dict[str, Any] = {"progress": progress}
    if turns:
        kwargs["turns"] = turns
    # analyze runs on the report's own connection to the scan; meanwhile the chart engine starts when
    # no chart process (vakaudit.report.chart_process) draws the charts
    manifest = read_manifest(scan)
    check_temp_dir(manifest.get("home"))  # the report's compiled templates go to the temporary directory
    cache: dict[str, Any] = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        warm = pool.submit(warm_up) if running() is None else None
        # a 7.0 home readable here: its turn-path reads are classified on it ("How reads scale"),
        # mostly outside the GIL (SQLite plans, the segment walk's hashing), while analyze runs
        reads7 = pool.submit(_v7_reads, manifest)
        con = open_scan(scan)
        try:
            analysis = analyze_open(con, scan, **kwargs)
        except BaseException:
            con.close()
            raise
        finally:
            if warm is not None:
                warm.result()
            if (found := reads7.result()) is not None:
                cache["v7_read_classes"] = found
    kinds = all_kinds()
    kinds = dict(kinds) if isinstance(kinds, dict) else {k.name: k for k in kinds}
    stored = None
    if readscale is not None:
        stored = rs.load(readscale)
    elif getattr(analysis, "readscale", None):
        stored = rs.ReadScaleResult.from_dict(analysis.readscale)  # analyze found it beside the scan
    elif (scan / rs.RESULT_FILE).is_file():
        stored = rs.load(scan)
    home = None
    home_text = manifest.get("home")
    if include_content:
        if not home_text or not Path(home_text).is_dir():
            raise UsageError(
                "--include-content needs the home itself: the scan's home "
                f"{home_text or '(unknown)'} is not readable here; give the home instead of the scan"
            )
        home = Path(home_text)
    _findings_view(con, manifest, verify=verify, progress=progress)
    now = (clock or system_clock)()
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    compared = load_compared(compare, keys=compare_keys, progress=progress) if compare is not None else None
    return ReportInputs(
        compare=compared,
        analysis=analysis,
        con=con,
        manifest=manifest,
        kinds=kinds,
        readscale=stored,
        include_content=include_content,
        generated_at=now.astimezone(UTC),
        home=home,
        link_base=link_base,
        cache=cache,
    )


def v7_home(manifest: dict[str, Any]) -> Path | None:
    """The scanned home when it is a 7.0 home readable here (None otherwise)."""
    from vakaudit.artifacts._base import V7_LAYOUTS

    home = manifest.get("home")
    if manifest.get("layout") not in V7_LAYOUTS or not home:
        return None
    p = Path(home)
    return p if (p / "tenants").is_dir() else None


def _v7_reads(manifest: dict[str, Any]) -> list[Any] | None:
    home = v7_home(manifest)
    if home is None:
        return None
    from vakaudit.analyze.readscale7 import v7_read_classes

    return v7_read_classes(home)


def _findings_view(con: Any, manifest: dict[str, Any], *, verify: bool, progress: Any) -> None:
    """``report_findings``: the scan's findings (source ``scan``), plus with ``verify`` the findings of
    :func:`vakaudit.forensics.verify_home` that the scan did not already report (source ``verify``)."""
    cols = "code, severity, rel_path, line_no, offset_bytes, entry_id, message, expected, actual, count"
    if not verify:
        con.execute(
            f"CREATE OR REPLACE VIEW report_findings AS SELECT {cols}, 'scan' AS source FROM findings"
        )
        return
    from vakaudit.findings import findings_table
    from vakaudit.forensics import verify_home

    home_text = manifest.get("home")
    if not home_text or not Path(home_text).is_dir():
        raise UsageError(
            f"--verify needs the home itself: the scan's home {home_text or '(unknown)'} is not readable here"
        )
    if progress:
        progress("verify: cross-artifact checks")
    report = verify_home(home_text)
    con.register("verify_findings_arrow", findings_table(list(report.findings)))
    con.execute("CREATE OR REPLACE TABLE verify_findings AS SELECT * FROM verify_findings_arrow")
    con.unregister("verify_findings_arrow")
    con.execute(
        f"""
        CREATE OR REPLACE VIEW report_findings AS
        SELECT {cols}, 'scan' AS source FROM findings
        UNION ALL
        SELECT {cols}, 'verify' AS source FROM verify_findings v
        WHERE NOT EXISTS (
            SELECT 1 FROM findings f
            WHERE f.code = v.code AND f.rel_path IS NOT DISTINCT FROM v.rel_path
              AND f.line_no IS NOT DISTINCT FROM v.line_no
        )
        """
    )
