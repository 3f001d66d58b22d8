"""Fleet figures over a lake: each home's single-home analysis, ranked, and outliers against the fleet.

Per home, the ordinary metric queries (``vakaudit/analyze/queries/``) and growth projection run on
that home's partitions (:func:`vakaudit.fleet.views.open_lake` with its ``home_id``), so a fleet
figure is the same number ``vakaudit analyze`` prints for the home. Fleet-wide SQL lives in
``queries/`` next to this module.

Outliers: a home's robust z-score for a figure is ``0.6745 * (x - median) / MAD`` over the homes
that have the figure (MAD: median absolute deviation); when the MAD is 0 it is
``(x - median) / (1.253314 * mean absolute deviation)`` instead; a home with ``|z| > 3.5`` is an
outlier (Iglewicz and Hoaglin's modified z-score). Figures with fewer than 3 homes have no outliers.
Nothing here prints or writes.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from vakaudit.analyze import analyze_views
from vakaudit.analyze.metrics import query_rows
from vakaudit.fleet.views import open_lake

OUTLIER_Z = 3.5
#: figures ranked and checked for outliers: name -> what it is
FIGURES = {
    "bytes_per_turn": "ledger bytes per turn (mean over turns; analyze's per_turn metric)",
    "barriers_per_turn": "barriers (fsync/fdatasync) per turn, all artifacts (analyze's barriers_per_turn metric)",
    "growth_bytes_per_day": (
        "estimate: the home's projected bytes per additional turn (analyze's growth projection between its "
        "smallest and largest N turns) times its observed turns per day"
    ),
}
OUTLIER_METHOD = (
    "robust z-score 0.6745 * (x - median) / MAD over the fleet's homes (MAD 0: (x - median) / "
    f"(1.253314 * mean absolute deviation)); |z| > {OUTLIER_Z} is an outlier; at least 3 homes"
)


@dataclass(frozen=True, slots=True)
class HomeFigures:
    """One home's fleet figures (from its own single-home analysis)."""

    home_id: str
    home_path: str
    layout: str
    scanned_at: str
    home_bytes: int
    sessions: int
    turns: int
    bytes_per_turn: float | None
    barriers_per_turn: float | None
    turns_per_day: float | None
    growth_bytes_per_day: float | None
    days_until: float | None  # until the home holds ``gb`` GB at its observed turn rate (estimate)
    scan_duration_ms: float
    findings: dict[str, int]  # code -> count
    worst_severity: str | None


@dataclass(slots=True)
class FleetAnalysis:
    """Every home's figures, rankings, findings by code, outliers and the homes that need a look."""

    gb: float
    homes: list[HomeFigures]
    rankings: dict[str, list[dict[str, Any]]]
    findings_by_code: list[dict[str, Any]]
    outliers: list[dict[str, Any]]
    needs_a_look: list[dict[str, Any]]
    provenance: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "gb": self.gb,
            "homes": [asdict(h) for h in self.homes],
            "rankings": self.rankings,
            "findings_by_code": self.findings_by_code,
            "outliers": self.outliers,
            "needs_a_look": self.needs_a_look,
            "provenance": self.provenance,
        }


@cache
def fleet_query(name: str) -> str:
    return resources.files("vakaudit.fleet").joinpath("queries", f"{name}.sql").read_text(encoding="utf-8")


_SEVERITY_ORDER = ("info", "warning", "error", "critical")


def analyze_fleet(lake: str | Path, *, gb: float = 100.0) -> FleetAnalysis:
    """The fleet figures of every home in ``lake``; ``gb``: the size for "days until N GB"."""
    lake_p = Path(lake)
    con = open_lake(lake_p)
    try:
        homes = query_rows(con, fleet_query("homes"))
        findings = query_rows(con, fleet_query("findings_by_code"))
    finally:
        con.close()
    by_home: dict[str, dict[str, int]] = {}
    worst: dict[str, str] = {}
    for r in findings:
        by_home.setdefault(r["home_id"], {})
        by_home[r["home_id"]][r["code"]] = by_home[r["home_id"]].get(r["code"], 0) + r["finding_count"]
        if r["severity"] in _SEVERITY_ORDER and (
            r["home_id"] not in worst or _SEVERITY_ORDER.index(r["severity"]) > _SEVERITY_ORDER.index(worst[r["home_id"]])
        ):
            worst[r["home_id"]] = r["severity"]
    figures = [_home_figures(lake_p, h, gb, by_home.get(h["home_id"], {}), worst.get(h["home_id"])) for h in homes]
    rankings = {name: _ranking(figures, name) for name in FIGURES}
    rankings["days_until"] = [
        {"home_id": h.home_id, "days_until": h.days_until}
        for h in sorted((h for h in figures if h.days_until is not None), key=lambda h: (h.days_until, h.home_id))
    ]
    outliers = [o for name in FIGURES for o in _outliers(figures, name)]
    provenance = dict(FIGURES)
    provenance["days_until"] = f"estimate: analyze's growth projection, days until the home holds {gb:g} GB"
    provenance["outliers"] = OUTLIER_METHOD
    provenance["findings_by_code"] = "findings table of each home's scan, counted per code"
    return FleetAnalysis(
        gb=gb,
        homes=figures,
        rankings=rankings,
        findings_by_code=findings,
        outliers=outliers,
        needs_a_look=_needs_a_look(figures, outliers),
        provenance=provenance,
    )


def _home_figures(lake: Path, home: dict[str, Any], gb: float, findings: dict[str, int], worst: str | None) -> HomeFigures:
    con = open_lake(lake, home["home_id"])
    try:
        a = analyze_views(con, gb=(gb,))
    finally:
        con.close()
    proj = a.projection
    growth = None
    if proj.turns_per_day and len(proj.turns) >= 2 and proj.total_bytes:
        lo, hi = proj.turns[0], proj.turns[-1]
        per_turn = (proj.total_bytes[str(hi)] - proj.total_bytes[str(lo)]) / (hi - lo)
        growth = per_turn * proj.turns_per_day
    days = proj.days_until[0]["days"] if proj.days_until else None
    h = a.headline
    return HomeFigures(
        home_id=home["home_id"],
        home_path=home["home_path"],
        layout=home["layout"],
        scanned_at=home["scanned_at"],
        home_bytes=int(home["home_bytes"] or 0),
        sessions=int(h["sessions"] or 0),
        turns=int(h["turns"] or 0),
        bytes_per_turn=h["bytes_per_turn"],
        barriers_per_turn=h["barriers_per_turn"],
        turns_per_day=proj.turns_per_day,
        growth_bytes_per_day=growth,
        days_until=days,
        scan_duration_ms=float(home["scan_duration_ms"] or 0.0),
        findings=dict(sorted(findings.items())),
        worst_severity=worst,
    )


def _ranking(figures: list[HomeFigures], name: str) -> list[dict[str, Any]]:
    have = [h for h in figures if getattr(h, name) is not None]
    have.sort(key=lambda h: (-getattr(h, name), h.home_id))
    return [{"rank": i, "home_id": h.home_id, name: getattr(h, name)} for i, h in enumerate(have, start=1)]


def robust_z(values: list[float]) -> list[float | None]:
    """The modified z-score of each value (see the module docstring); None when it is undefined."""
    if len(values) < 3:
        return [None] * len(values)
    med = statistics.median(values)
    mad = statistics.median(abs(v - med) for v in values)
    if mad > 0:
        return [0.6745 * (v - med) / mad for v in values]
    mean_ad = statistics.fmean(abs(v - med) for v in values)
    if mean_ad == 0:
        return [0.0] * len(values)
    return [(v - med) / (1.253314 * mean_ad) for v in values]


def _outliers(figures: list[HomeFigures], name: str) -> list[dict[str, Any]]:
    have = [h for h in figures if getattr(h, name) is not None]
    zs = robust_z([float(getattr(h, name)) for h in have])
    out = []
    for h, z in zip(have, zs, strict=True):
        if z is not None and abs(z) > OUTLIER_Z:
            out.append({"home_id": h.home_id, "figure": name, "value": getattr(h, name), "z": round(z, 2)})
    out.sort(key=lambda o: (-abs(o["z"]), o["home_id"]))
    return out


def _needs_a_look(figures: list[HomeFigures], outliers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Homes with an error or critical finding, or an outlier figure, with the reasons."""
    reasons: dict[str, list[str]] = {}
    for h in figures:
        if h.worst_severity in ("error", "critical"):
            codes = ", ".join(sorted(h.findings))
            reasons.setdefault(h.home_id, []).append(f"{h.worst_severity} findings ({codes})")
    for o in outliers:
        reasons.setdefault(o["home_id"], []).append(f"{o['figure']} outlier (z {o['z']:+.1f})")
    return [{"home_id": hid, "reasons": rs} for hid, rs in sorted(reasons.items())]


__all__ = ["FIGURES", "FleetAnalysis", "HomeFigures", "OUTLIER_METHOD", "analyze_fleet", "robust_z"]
