"""Capacity analysis of a scanned vak home: DuckDB over the scan's Parquet, one ``.sql`` per metric.

Public API::

    analyze(scan_or_home, *, turns=(1000, 10000, 100000)) -> Analysis
    analyze_views(con, *, turns=..., gb=...) -> Analysis    (the same over any open home's views)
    open_scan(path) -> duckdb connection with one view per scan table plus the analysis views
    metric_names(), run_metric(con, name) -> MetricResult
    readscale.run(turns=..., out=None) -> ReadScaleResult      (measured read scaling)

A readscale result stored in the scan directory (``readscale.run(out=scan_dir)`` or ``vakaudit
readscale --out SCAN_DIR``, file ``readscale.json``) is picked up by :func:`analyze` and carried in
``Analysis.readscale``, so a report shows it without re-running the timings.

Every figure carries its provenance: measured figures say what measured them (the ``measured``
header of their query); the growth projection is an estimate and carries its method. Tables are
never loaded into Python: queries return aggregates only. Nothing here prints or writes into a home.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vakaudit.analyze import projection as _projection
from vakaudit.analyze import readscale
from vakaudit.analyze._open import ScanReused, open_scan, resolve_scan, scan_home_of
from vakaudit.analyze.metrics import MetricResult, metric_names, run_metric
from vakaudit.analyze.projection import NON_GROWING_GROUPS, ArtifactGrowth, HomeRates, Projection, project
from vakaudit.analyze.scorecard import Scorecard, build_scorecard
from vakaudit.artifacts import LEDGER_KIND
from vakaudit.scan.manifest import read_manifest

HEADLINE_SOURCES = {
    "sessions": "overview",
    "turns": "overview",
    "entries_per_turn": "per_turn",
    "bytes_per_turn": "per_turn",
    "barriers_per_turn": "barriers_per_turn",
    "binding_share": "ledger_bytes_by_kind",
    "ledger_bytes": "overview",
    "home_bytes": "overview",
}


@dataclass(slots=True)
class Analysis:
    """Results of every metric, the headline figures and the growth projection (an estimate)."""

    metrics: dict[str, MetricResult]
    headline: dict[str, Any]
    projection: Projection
    scan_dir: Path | None = None
    provenance: dict[str, str] = field(default_factory=dict)
    readscale: dict[str, Any] | None = None  # a stored readscale result found in the scan directory
    scorecard: Scorecard | None = None  # the data-baseline scorecard (vak 7.0's storage exit criteria)

    def __getitem__(self, name: str) -> MetricResult:
        return self.metrics[name]

    def to_dict(self) -> dict[str, Any]:
        """Plain, deterministic, JSON-ready results (no absolute paths)."""
        out = {
            "headline": self.headline,
            "provenance": dict(sorted(self.provenance.items())),
            "metrics": {name: self.metrics[name].to_dict() for name in self.metrics},
            "projection": self.projection.to_dict(),
        }
        if self.readscale is not None:
            out["readscale"] = self.readscale
        if self.scorecard is not None:
            out["scorecard"] = self.scorecard.to_dict()
        return out

    def to_json(self, *, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=True, ensure_ascii=False) + "\n"


def analyze(
    scan_or_home: str | os.PathLike[str] | Any,
    *,
    turns: Iterable[int] = _projection.DEFAULT_TURNS,
    gb: Iterable[float] = _projection.DEFAULT_GB,
    scan_out: str | os.PathLike[str] | None = None,
    progress: Callable[[Any], None] | None = None,
    keys: Any = None,
) -> Analysis:
    """Run every metric over a scan (a scan directory or a ``ScanResult``; a home is scanned first,
    into ``scan_out`` or the scan engine's default location, unlocked by ``keys`` when it is a sealed
    7.0 home) and project growth to ``turns``."""
    scan = resolve_scan(scan_or_home, out=scan_out, progress=progress, keys=keys)
    con = open_scan(scan)
    try:
        return analyze_open(con, scan, turns=turns, gb=gb, progress=progress)
    finally:
        con.close()


def analyze_open(
    con: Any,
    scan: Path,
    *,
    turns: Iterable[int] = _projection.DEFAULT_TURNS,
    gb: Iterable[float] = _projection.DEFAULT_GB,
    progress: Callable[[Any], None] | None = None,
) -> Analysis:
    """:func:`analyze` over ``con``, the connection :func:`open_scan` opened on the scan directory
    ``scan`` (left open: the report goes on querying it)."""
    layout = read_manifest(scan).get("layout")
    result = analyze_views(con, turns=turns, gb=gb, progress=progress, layout=layout)
    result.scan_dir = scan
    if (scan / readscale.RESULT_FILE).is_file():
        stored = readscale.load(scan).to_dict()
        stored.pop("stored_at", None)
        result.provenance["readscale"] = stored["method"]
        result.readscale = stored
    return result


def analyze_views(
    con: Any,
    *,
    turns: Iterable[int] = _projection.DEFAULT_TURNS,
    gb: Iterable[float] = _projection.DEFAULT_GB,
    progress: Callable[[str], None] | None = None,
    layout: str | None = None,
) -> Analysis:
    """Every metric, the projection and the data-baseline scorecard over an open connection holding
    one home's views (:func:`open_scan`, or one home of a fleet lake); ``layout`` is the home's
    (``g1``/``g2``/``g3``: the scan manifest's), which decides how the scorecard counts ledger syncs."""
    metrics = _run_metrics(con, list(metric_names()), progress)
    proj = _build_projection(con, metrics, turns=turns, gb=gb, layout=layout)
    provenance = {k: metrics[src].measured for k, src in HEADLINE_SOURCES.items() if src in metrics}
    provenance["projection"] = proj.method
    card = build_scorecard(con, metrics, layout=layout)
    provenance["scorecard"] = "vak 7.0's storage exit criteria, each measured on the home (analyze.scorecard)"
    return Analysis(
        metrics=metrics, headline=_headline(metrics), projection=proj, provenance=provenance, scorecard=card
    )


#: metrics run on this many cursors of the connection at once (DuckDB runs a query without the GIL;
#: most of these queries are too small to use a second core on their own)
METRIC_THREADS = 2


def _run_metrics(con: Any, names: list[str], progress: Callable[[str], None] | None) -> dict[str, MetricResult]:
    """Every metric of ``names``, in that order; on :data:`METRIC_THREADS` cursors of ``con`` when the
    machine has more than one core (each view of the connection reads the same from every cursor)."""
    if METRIC_THREADS < 2 or (os.cpu_count() or 1) < 2 or not hasattr(con, "cursor"):
        out = {}
        for name in names:
            if progress:
                progress(f"metric {name}")
            out[name] = run_metric(con, name)
        return out

    def one(name: str) -> MetricResult:
        cur = con.cursor()
        try:
            return run_metric(cur, name)
        finally:
            cur.close()

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=METRIC_THREADS) as pool:
        futures = [(name, pool.submit(one, name)) for name in names]
        out = {}
        for name, fut in futures:
            if progress:
                progress(f"metric {name}")
            out[name] = fut.result()
        return out


def _headline(m: dict[str, MetricResult]) -> dict[str, Any]:
    ov = m["overview"].one()
    per_turn = next((r for r in m["per_turn"].rows if r["scope"] == "all"), {})
    turns = ov["turns"] or 0
    barriers = sum(r["barriers"] or 0 for r in m["barriers_per_turn"].rows) / turns if turns else None
    binding = next(
        (r for r in m["ledger_bytes_by_kind"].rows if r["kind"] == "turn_capabilities_bound"), None
    )
    return {
        "sessions": ov["sessions"],
        "turns": ov["turns"],
        "entries": ov["entries"],
        "entries_per_turn": per_turn.get("entries_per_turn"),
        "bytes_per_turn": per_turn.get("bytes_per_turn"),
        "barriers_per_turn": _projection._r(barriers) if barriers is not None else None,
        "binding_share": binding["share"] if binding else 0.0,
        "ledger_bytes": ov["ledger_bytes"],
        "home_bytes": ov["home_bytes"],
    }


def _build_projection(
    con: Any, m: dict[str, MetricResult], *, turns: Iterable[int], gb: Iterable[float],
    layout: str | None = None,
) -> Projection:
    ov = m["overview"].one()
    rate = m["turn_rate"].one() if "turn_rate" in m else {}
    artifacts = [
        ArtifactGrowth(
            kind=r["kind"],
            size_bytes=int(r["size_bytes"] or 0),
            rows=int(r["writes"] or 0),
            files=int(r["file_count"] or 0),
            grows=r["group"] not in NON_GROWING_GROUPS,
        )
        for r in m["disk_by_kind"].rows
    ]
    without = None
    if "ledger_without_repeated_bindings" in m and m["ledger_without_repeated_bindings"].rows:
        without = m["ledger_without_repeated_bindings"].one().get("ledger_bytes_without")
    rates = HomeRates(
        turns=int(ov["turns"] or 0),
        sessions=int(ov["sessions"] or 0),
        span_days=rate.get("span_days"),
        ledger_bytes=int(ov["ledger_bytes"] or 0),
    )
    return project(
        artifacts,
        rates,
        turns=turns,
        ledger_kind=LEDGER_KIND,
        ledger_without_bindings_bytes=int(without) if without is not None else None,
        gb=gb,
        layout=layout,
    )


__all__ = [
    "Analysis",
    "ArtifactGrowth",
    "HomeRates",
    "MetricResult",
    "Projection",
    "ScanReused",
    "Scorecard",
    "analyze",
    "analyze_views",
    "build_scorecard",
    "metric_names",
    "open_scan",
    "project",
    "readscale",
    "run_metric",
    "scan_home_of",
]
