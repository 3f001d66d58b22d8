"""Data-baseline scorecard: vak 7.0's storage exit criteria, each measured on this home (the
figure, the bound, pass or fail, and what to look at when it fails). On a JSONL-era home it shows,
with the same rules, how far the home is from the bounds the 7.0 baseline promises."""

from __future__ import annotations

from dataclasses import dataclass

from vakaudit.report.inputs import ReportInputs

TITLE = "Data-baseline scorecard"
ORDER = 105

STATUS_LABEL = {"pass": "pass", "fail": "fail", "needs_keys": "needs --keys", "no_turns": "no turns"}


@dataclass(frozen=True, slots=True)
class CriterionRow:
    name: str
    title: str
    figure: float | None
    bound: float
    unit: str
    status: str  # pass | fail | needs_keys | no_turns
    label: str
    measured: str
    look_at: str
    contributors: list[str]


@dataclass(frozen=True, slots=True)
class ScorecardContext:
    applies: bool
    v7: bool
    locked: bool
    turns: int
    passed: int
    failed: int
    unmeasured: int
    rows: list[CriterionRow]


def _contributor(c: dict) -> str:
    name = c.get("kind") or c.get("artifact") or c.get("rel_path") or "?"
    if c.get("bytes_per_turn") is not None:
        return f"{name}: {c['bytes_per_turn']:,.0f} B/turn"
    if c.get("syncs_per_turn") is not None:
        return f"{name}: {c['syncs_per_turn']:,.2f}/turn"
    if c.get("rel_path") and c.get("kind"):
        return f"{c['rel_path']} ({c['kind']})"
    return str(name)


def build(inputs: ReportInputs) -> ScorecardContext:
    card = getattr(inputs.analysis, "scorecard", None)
    if card is None:
        return ScorecardContext(False, False, False, 0, 0, 0, 0, [])
    rows = [
        CriterionRow(
            name=c.name,
            title=c.title,
            figure=c.figure,
            bound=c.bound,
            unit=c.unit,
            status=str(c.status),
            label=STATUS_LABEL[str(c.status)],
            measured=c.measured,
            look_at=c.look_at,
            contributors=[_contributor(x) for x in c.contributors[:5]] if str(c.status) == "fail" else [],
        )
        for c in card.criteria
    ]
    return ScorecardContext(
        applies=True,
        v7=card.layout == "g3",
        locked=card.locked,
        turns=card.turns,
        passed=sum(r.status == "pass" for r in rows),
        failed=sum(r.status == "fail" for r in rows),
        unmeasured=sum(r.status in ("needs_keys", "no_turns") for r in rows),
        rows=rows,
    )
