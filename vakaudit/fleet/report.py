"""The fleet report: one self-contained HTML page over a lake, built with the home report's machinery.

Same page shell, stylesheet, filters and charts as ``vakaudit report`` (:mod:`vakaudit.report`):
Jinja with autoescape and ``StrictUndefined``, charts pre-rendered to inline SVG or plain HTML bars,
no script, no external URL. Private by default: the lake holds no message text and the page shows
homes by ``home_id`` and folder name, with sizes, counts, rates and finding codes. Each section is a
``build_*`` function returning a plain dataclass and a template ``templates/fleet_<name>.html.j2``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from vakaudit.fleet.analysis import FIGURES, OUTLIER_METHOD, FleetAnalysis, HomeFigures, analyze_fleet
from vakaudit.report import charts
from vakaudit.report.filters import FILTERS, size
from vakaudit.report.render import TEMPLATES, RenderedSection

HERE = Path(__file__).resolve().parent
TOP = 20  # homes shown per ranked chart (every home is in the tables)


@dataclass(frozen=True, slots=True)
class Masthead:
    homes: int
    home_bytes: int
    turns: int
    sessions: int
    median_bytes_per_turn: float | None
    median_barriers_per_turn: float | None
    needs_a_look: int
    findings: int
    gb: float


@dataclass(frozen=True, slots=True)
class Distributions:
    bytes_per_turn: Markup
    home_bytes: Markup
    measured: str


@dataclass(frozen=True, slots=True)
class Ranked:
    figure: str
    title: str
    measured: str
    chart: Markup
    rows: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Rankings:
    ranked: list[Ranked]
    homes: list[dict[str, Any]]
    gb: float
    days_measured: str


@dataclass(frozen=True, slots=True)
class Findings:
    codes: list[str]
    rows: list[dict[str, Any]]  # home, counts per code
    measured: str


@dataclass(frozen=True, slots=True)
class Look:
    rows: list[dict[str, Any]]
    outlier_method: str


def _label(h: HomeFigures) -> str:
    return f"{Path(h.home_path).name or 'home'} · {h.home_id[:8]}"


def _median(values: list[float]) -> float | None:
    vals = sorted(values)
    if not vals:
        return None
    mid = len(vals) // 2
    return vals[mid] if len(vals) % 2 else (vals[mid - 1] + vals[mid]) / 2


def build_masthead(a: FleetAnalysis) -> Masthead:
    return Masthead(
        homes=len(a.homes),
        home_bytes=sum(h.home_bytes for h in a.homes),
        turns=sum(h.turns for h in a.homes),
        sessions=sum(h.sessions for h in a.homes),
        median_bytes_per_turn=_median([h.bytes_per_turn for h in a.homes if h.bytes_per_turn is not None]),
        median_barriers_per_turn=_median([h.barriers_per_turn for h in a.homes if h.barriers_per_turn is not None]),
        needs_a_look=len(a.needs_a_look),
        findings=sum(sum(h.findings.values()) for h in a.homes),
        gb=a.gb,
    )


def _histogram(values: list[float], *, bins: int = 8) -> list[dict[str, Any]]:
    """Counts over ``bins`` equal-width ranges on a log10 scale (sizes span orders of magnitude)."""
    pos = [v for v in values if v > 0]
    if not pos:
        return []
    lo, hi = math.log10(min(pos)), math.log10(max(pos))
    if hi == lo:  # every home the same: one bar
        return [{"range": size(10**lo, 0), "homes": len(pos)}]
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in pos:
        counts[min(int((math.log10(v) - lo) / width), bins - 1)] += 1
    return [
        {"range": f"{size(10 ** (lo + i * width), 0)}–{size(10 ** (lo + (i + 1) * width), 0)}", "homes": c}
        for i, c in enumerate(counts)
    ]


def build_distributions(a: FleetAnalysis) -> Distributions:
    bpt = _histogram([h.bytes_per_turn for h in a.homes if h.bytes_per_turn])
    hb = _histogram([float(h.home_bytes) for h in a.homes])
    return Distributions(
        bytes_per_turn=charts.vbar(
            bpt, x="range", y="homes", title="Homes by ledger bytes per turn", x_title="bytes per turn", y_title="homes"
        )
        if bpt
        else Markup(""),
        home_bytes=charts.vbar(hb, x="range", y="homes", title="Homes by size", x_title="home size", y_title="homes")
        if hb
        else Markup(""),
        measured=f"bytes per turn: {FIGURES['bytes_per_turn']}; home size: sum of file sizes from each home's scan; "
        "bins of equal width on a log scale",
    )


_TITLES = {
    "bytes_per_turn": "Ledger bytes per turn",
    "barriers_per_turn": "Barriers per turn",
    "growth_bytes_per_day": "Growth per day (estimate)",
}


def build_rankings(a: FleetAnalysis) -> Rankings:
    by_id = {h.home_id: h for h in a.homes}
    ranked = []
    for name, title in _TITLES.items():
        rows = [dict(r, label=_label(by_id[r["home_id"]])) for r in a.rankings[name]]
        fmt = "{:,.1f}" if name == "barriers_per_turn" else "{:,.0f}"
        ranked.append(
            Ranked(
                figure=name,
                title=title,
                measured=a.provenance[name],
                chart=charts.hbar(rows[:TOP], label="label", value=name, title=title, value_format=fmt)
                if rows
                else Markup(""),
                rows=rows,
            )
        )
    homes = [
        {
            "label": _label(h),
            "home_id": h.home_id,
            "layout": h.layout,
            "home_bytes": h.home_bytes,
            "sessions": h.sessions,
            "turns": h.turns,
            "bytes_per_turn": h.bytes_per_turn,
            "barriers_per_turn": h.barriers_per_turn,
            "growth_bytes_per_day": h.growth_bytes_per_day,
            "days_until": h.days_until,
        }
        for h in sorted(a.homes, key=lambda h: (-h.home_bytes, h.home_id))
    ]
    return Rankings(ranked=ranked, homes=homes, gb=a.gb, days_measured=a.provenance["days_until"])


def build_findings(a: FleetAnalysis) -> Findings:
    codes = sorted({c for h in a.homes for c in h.findings})
    rows = [
        {"label": _label(h), "worst": h.worst_severity, "counts": [h.findings.get(c, 0) for c in codes]}
        for h in sorted(a.homes, key=lambda h: (-sum(h.findings.values()), h.home_id))
        if h.findings
    ]
    return Findings(codes=codes, rows=rows, measured=a.provenance["findings_by_code"])


def build_look(a: FleetAnalysis) -> Look:
    by_id = {h.home_id: h for h in a.homes}
    rows = [{"label": _label(by_id[r["home_id"]]), "reasons": r["reasons"]} for r in a.needs_a_look]
    return Look(rows=rows, outlier_method=OUTLIER_METHOD)


SECTIONS: list[tuple[str, str, Callable[[FleetAnalysis], Any]]] = [
    ("masthead", "The fleet", build_masthead),
    ("look", "Homes that need a look", build_look),
    ("distributions", "Distributions", build_distributions),
    ("rankings", "Homes ranked", build_rankings),
    ("findings", "Findings by code per home", build_findings),
]


def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader([str(HERE / "templates"), str(TEMPLATES)]),
        autoescape=select_autoescape(enabled_extensions=("html", "j2"), default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    return env


def render_fleet_html(a: FleetAnalysis, *, version: str, generated_at: str) -> str:
    env = environment()
    rendered = []
    for number, (name, title, build) in enumerate(SECTIONS, start=1):
        html = env.get_template(f"fleet_{name}.html.j2").render(ctx=build(a), section={"title": title})
        rendered.append(RenderedSection(name, title, Markup(html), number))
    css = Markup((TEMPLATES / "report.css").read_text(encoding="utf-8"))
    return env.get_template("base.html.j2").render(
        sections=rendered,
        css=css,
        version=version,
        generated_at=generated_at,
        title=f"vakaudit fleet report — {len(a.homes)} homes",
        include_content=False,
    )


def build_fleet_report(
    lake: str | Path, *, gb: float = 100.0, clock: Callable[[], datetime] | None = None
) -> str:
    """The fleet page of ``lake`` as one HTML string (``clock`` fixes the "generated on" time)."""
    from vakaudit import __version__

    now = (clock or (lambda: datetime.now(UTC)))()
    return render_fleet_html(
        analyze_fleet(lake, gb=gb), version=__version__, generated_at=now.strftime("%Y-%m-%d %H:%M UTC")
    )
