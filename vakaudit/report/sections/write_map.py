"""The write map: one card per artifact kind of the registry, grouped like the reference report,
with the measured size and growth of that artifact in this home."""

from __future__ import annotations

from dataclasses import dataclass

from vakaudit.artifacts import LEDGER_KIND
from vakaudit.report.inputs import ReportInputs
from vakaudit.report.sections._common import GROUP_ORDER, GROUP_TITLES, by_key

TITLE = "The write map"
ORDER = 40


@dataclass(frozen=True, slots=True)
class Card:
    kind: str
    title: str
    summary: str
    path: str
    group: str
    writer: str
    trigger: str
    discipline: str
    barriers_per_write: float
    read: str
    read_class: str
    bound: str
    present: bool
    file_count: int
    writes: int
    size_bytes: int
    bytes_per_turn: float | None
    writes_per_turn: float | None
    projected_bytes: float | None  # at the largest projection point


@dataclass(frozen=True, slots=True)
class Group:
    name: str
    title: str
    cards: list[Card]


@dataclass(frozen=True, slots=True)
class WriteMap:
    groups: list[Group]
    absent: list[Card]
    kinds_declared: int
    kinds_present: int
    projection_turns: int | None
    measured: str
    projection_method: str


def _summary(description: str) -> str:
    first = description.strip().split("\n\n", 1)[0].replace("\n", " ").strip()
    head, sep, rest = first.partition(": ")
    text = (rest if sep and len(head) < 48 else first).replace("``", "")
    return text[:1].upper() + text[1:]


def build(inputs: ReportInputs) -> WriteMap:
    disk = by_key(inputs.rows("disk_by_kind"), "kind")
    growth = by_key(inputs.rows("sidecar_growth"), "artifact")
    proj = inputs.analysis.projection
    last_n = str(max(proj.turns)) if proj.turns else None
    projected = {r.artifact: r.projected_bytes.get(last_n) for r in proj.rows} if last_n else {}
    constant = {r.artifact for r in proj.rows if r.rule == "constant"}
    ov = inputs.one("overview")
    turns = int(ov.get("turns") or 0)
    cards: list[Card] = []
    layout = inputs.manifest.get("layout")
    for name in sorted(inputs.kinds):
        k = inputs.kinds[name]
        d = disk.get(name, {})
        if layout and layout not in k.layouts and not d:
            continue  # a kind of the other generation of homes (JSONL era or 7.0) and absent here
        g = growth.get(name, {})
        if name == LEDGER_KIND and turns:
            bpt = (d.get("size_bytes") or 0) / turns
            wpt = (d.get("writes") or 0) / turns
        elif name in constant:  # sized by configuration, not by turns: no per-turn rate
            bpt, wpt = None, None
        else:
            bpt, wpt = g.get("bytes_per_turn"), g.get("rows_per_turn")
        c = inputs.card(name)
        cards.append(
            Card(
                kind=name,
                title=k.title,
                summary=_summary(k.description),
                path=str(k.all_patterns[0]) if k.all_patterns else "",
                group=str(c.group),
                writer=c.writer,
                trigger=c.trigger,
                discipline=c.discipline,
                barriers_per_write=float(c.barriers_per_write),
                read=c.read,
                read_class=c.read_class,
                bound=c.bound,
                present=bool(d),
                file_count=int(d.get("file_count") or 0),
                writes=int(d.get("writes") or 0),
                size_bytes=int(d.get("size_bytes") or 0),
                bytes_per_turn=bpt,
                writes_per_turn=wpt,
                projected_bytes=projected.get(name),
            )
        )
    groups = []
    order = {g: i for i, g in enumerate(GROUP_ORDER)}
    for gname in sorted({c.group for c in cards}, key=lambda g: (order.get(g, 99), g)):
        present = sorted(
            (c for c in cards if c.group == gname and c.present), key=lambda c: (-c.size_bytes, c.kind)
        )
        if present:
            groups.append(Group(gname, GROUP_TITLES.get(gname, gname), present))
    absent = [c for c in cards if not c.present]
    return WriteMap(
        groups=groups,
        absent=absent,
        kinds_declared=len(cards),
        kinds_present=sum(1 for c in cards if c.present),
        projection_turns=int(last_n) if last_n else None,
        measured=inputs.measured("disk_by_kind"),
        projection_method=proj.method,
    )
