"""Side by side: this home and the comparison home of ``report --compare`` (either generation on
either side), each figure measured on both the same way (the same analysis), with the difference
(other − this) and the ratio. Only present when a comparison home is given."""

from __future__ import annotations

from dataclasses import dataclass

from vakaudit.report.inputs import ReportInputs, read_class_counts

TITLE = "Compared with another home"
ORDER = 15
OPTIONAL = True  # only with --compare

LAYOUT_LABEL = {"g1": "JSONL era (g1)", "g2": "JSONL era (g2)", "g3": "7.0 data baseline"}
READ_CLASSES = ("flat", "session", "home")


@dataclass(frozen=True, slots=True)
class CompareRow:
    name: str  # stable key (json)
    label: str
    unit: str  # bytes | count | rate (a per-turn count)
    this: float | None
    other: float | None
    difference: float | None  # other - this
    ratio: float | None  # other / this


@dataclass(frozen=True, slots=True)
class CompareContext:
    this_name: str
    this_layout: str
    other_name: str
    other_layout: str
    rows: list[CompareRow]
    measured: str


def _row(name: str, label: str, unit: str, a: float | None, b: float | None) -> CompareRow:
    diff = b - a if a is not None and b is not None else None
    ratio = b / a if a not in (None, 0) and b is not None else None
    return CompareRow(name, label, unit, a, b, diff, ratio)


def figures(analysis, read_classes: dict[str, int]) -> dict[str, tuple[str, str, float | None]]:
    """The compared figures of one home's analysis: name -> (label, unit, value)."""
    h = analysis.headline
    turns = h.get("turns") or 0
    card = getattr(analysis, "scorecard", None)
    growth = card.criterion("record_growth_per_turn").figure if card is not None else None
    proj = getattr(analysis, "projection", None)
    at = proj.total_bytes.get("100000") if proj is not None else None
    out: dict[str, tuple[str, str, float | None]] = {
        "turns": ("turns (intent entries)", "count", float(turns)),
        "sessions": ("sessions", "count", float(h.get("sessions") or 0)),
        "ledger_bytes_per_turn": ("ledger bytes per turn", "bytes", h.get("bytes_per_turn")),
        "entries_per_turn": ("ledger entries per turn", "rate", h.get("entries_per_turn")),
        "barriers_per_turn": ("barriers (fsync/fdatasync) per turn", "rate", h.get("barriers_per_turn")),
        "record_growth_per_turn": ("record growth per turn (all growing kinds)", "bytes", growth),
        "home_bytes": ("home on disk", "bytes", float(h.get("home_bytes") or 0)),
        "home_bytes_per_turn": (
            "home bytes per turn",
            "bytes",
            (h.get("home_bytes") or 0) / turns if turns else None,
        ),
        "projected_home_bytes_100000": ("home at 100,000 turns (estimate)", "bytes", at),
    }
    for rc in READ_CLASSES:
        out[f"read_class_{rc}"] = (f"kinds read {rc}-scaled on the turn path", "count", float(read_classes.get(rc, 0)))
    return out


def build(inputs: ReportInputs) -> CompareContext | None:
    other = inputs.compare
    if other is None:
        return None
    mine = figures(inputs.analysis, read_class_counts(inputs.con))
    theirs = figures(other.analysis, other.read_classes)
    rows = [_row(k, label, unit, value, theirs[k][2]) for k, (label, unit, value) in mine.items()]
    home = inputs.manifest.get("home") or ""
    return CompareContext(
        this_name=home.rstrip("/").rsplit("/", 1)[-1] or "this home",
        this_layout=LAYOUT_LABEL.get(str(inputs.manifest.get("layout")), str(inputs.manifest.get("layout"))),
        other_name=other.name,
        other_layout=LAYOUT_LABEL.get(other.layout, other.layout),
        rows=rows,
        measured=(
            "measured: both homes scanned and analyzed the same way (vakaudit analyze); per-turn figures "
            "divide by each home's own turns (intent entries); barriers follow each home's write "
            "discipline (group commit for a 7.0 ledger); read classes count the artifact kinds present "
            "per declared read class; the 100,000-turn figure is each home's growth projection (an "
            "estimate); difference = other − this, ratio = other / this"
        ),
    )
