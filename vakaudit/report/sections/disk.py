"""Where the disk goes: apparent bytes of the whole home by artifact kind."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from vakaudit.report import charts
from vakaudit.report.filters import size
from vakaudit.report.inputs import ReportInputs
from vakaudit.report.sections._common import kind_title

TITLE = "Where the disk goes"
ORDER = 30
CHART_ROWS = 14


@dataclass(frozen=True, slots=True)
class DiskRow:
    kind: str
    title: str
    group: str
    tone: str
    file_count: int
    writes: int
    size_bytes: int
    share: float
    max_file_bytes: int | None


@dataclass(frozen=True, slots=True)
class Disk:
    home_bytes: int
    home_files: int
    allocated_bytes: int
    rows: list[DiskRow]
    chart: Markup | None
    hidden: int
    measured: str


def build(inputs: ReportInputs) -> Disk:
    rows = [
        DiskRow(
            kind=str(r["kind"]),
            title=kind_title(inputs.kinds, str(r["kind"])),
            group=str(r["group"]),
            tone=charts.GROUP_TONE.get(str(r["group"]), "neutral"),
            file_count=int(r["file_count"] or 0),
            writes=int(r["writes"] or 0),
            size_bytes=int(r["size_bytes"] or 0),
            share=float(r["share"] or 0),
            max_file_bytes=r["max_file_bytes"],
        )
        for r in inputs.rows("disk_by_kind")
    ]
    ov = inputs.one("overview")
    allocated = inputs.query("SELECT coalesce(sum(allocated_bytes), 0) AS b FROM files")[0]["b"]
    shown = rows[:CHART_ROWS]
    chart = (
        charts.hbar(
            [
                {
                    "label": r.kind,
                    "value": r.size_bytes,
                    "text": f"{size(r.size_bytes)} · {r.share:.1%}",
                    "tone": r.tone,
                }
                for r in shown
            ],
            label="label",
            value="value",
            text="text",
            color_by="tone",
            title="Bytes of the home by artifact kind",
        )
        if shown
        else None
    )
    return Disk(
        home_bytes=int(ov.get("home_bytes") or 0),
        home_files=int(ov.get("home_files") or 0),
        allocated_bytes=int(allocated or 0),
        rows=rows,
        chart=chart,
        hidden=max(0, len(rows) - len(shown)),
        measured=inputs.measured("disk_by_kind"),
    )
