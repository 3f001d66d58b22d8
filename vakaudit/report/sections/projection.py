"""Projection: each artifact at 1k / 10k / 100k turns with the bounds the code enforces applied,
and the days until the home reaches 1 / 10 / 100 GB at the observed turn rate. An estimate: the
figures come from :func:`vakaudit.analyze.project` and carry its method."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from vakaudit.report import charts
from vakaudit.report.filters import size
from vakaudit.report.inputs import ReportInputs

TITLE = "Projection"
ORDER = 70
MIN_SHOWN_BYTES = 1000  # artifacts smaller than this at the largest point are folded into one row


@dataclass(frozen=True, slots=True)
class Row:
    artifact: str
    rule: str
    per_turn_bytes: float | None
    observed_bytes: int
    projected: list[float]
    bound: str
    derived: bool  # a "what if" row (without repeated bindings), not an artifact


@dataclass(frozen=True, slots=True)
class DaysUntil:
    gb: float
    turns: int | None
    days: float | None


@dataclass(frozen=True, slots=True)
class Projection:
    turns: list[int]
    observed_turns: int
    rows: list[Row]
    folded: int
    folded_projected: list[float]
    totals: list[float]
    turns_per_day: float | None
    days_until: list[DaysUntil]
    chart: Markup | None
    method: str
    has_rows: bool


def build(inputs: ReportInputs) -> Projection:
    p = inputs.analysis.projection
    ns = [str(n) for n in p.turns]
    rows, folded, folded_proj = [], 0, [0.0] * len(ns)
    for r in p.rows:
        values = [float(r.projected_bytes.get(n) or 0) for n in ns]
        derived = r.artifact.endswith("_without_repeated_bindings")
        if not derived and (values[-1] if values else 0) < MIN_SHOWN_BYTES:
            folded += 1
            folded_proj = [a + b for a, b in zip(folded_proj, values, strict=True)]
            continue
        rows.append(Row(r.artifact, r.rule, r.per_turn_bytes, r.observed_bytes, values, r.bound, derived))
    totals = [float(p.total_bytes.get(n) or 0) for n in ns]
    chart = None
    if rows and ns:
        top = [r for r in rows if not r.derived][:10]
        chart = charts.hbar(
            [{"label": r.artifact, "value": r.projected[-1], "text": size(r.projected[-1])} for r in top],
            label="label",
            value="value",
            text="text",
            title=f"Estimated size at {int(ns[-1]):,} turns, per artifact",
            color=charts.SEMANTIC["warning"],
        )
    return Projection(
        turns=list(p.turns),
        observed_turns=int(inputs.one("overview").get("turns") or 0),
        rows=rows,
        folded=folded,
        folded_projected=folded_proj,
        totals=totals,
        turns_per_day=p.turns_per_day,
        days_until=[DaysUntil(float(d["gb"]), d.get("turns"), d.get("days")) for d in p.days_until],
        chart=chart,
        method=p.method,
        has_rows=bool(p.rows),
    )
