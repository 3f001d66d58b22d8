"""How reads scale: each read on or near the turn path, its class (flat / session / home), what
bounds it, and the measured curves of :mod:`vakaudit.analyze.readscale` when a result is stored."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from vakaudit.artifacts._base import V7_LAYOUTS
from vakaudit.report import charts
from vakaudit.report.inputs import ReportInputs
from vakaudit.report.sections._common import by_key

TITLE = "How reads scale"
ORDER = 60
CLASS_ORDER = {"home": 0, "session": 1, "flat": 2}


@dataclass(frozen=True, slots=True)
class DeclaredRead:
    artifact: str
    title: str
    read: str
    read_class: str
    bound: str
    size_bytes: int
    rows: int


@dataclass(frozen=True, slots=True)
class MeasuredRead:
    name: str
    vak_function: str
    what: str
    read_class: str  # flat | session | home, or "not measured"
    home_exponent: float | None
    session_exponent: float | None
    home_ms: list[float]
    session_ms: list[float]
    home_slope_us_per_kturn: float | None


@dataclass(frozen=True, slots=True)
class ReadScaling:
    declared: list[DeclaredRead]
    counts: dict[str, int]
    measured: list[MeasuredRead]
    turns: list[int]
    session_turns: int | None
    home_chart: Markup | None
    session_chart: Markup | None
    method: str | None
    has_readscale: bool
    # a 7.0 home: the reads 7.0 does on the turn path instead of the JSONL-era ones, classified on
    # the home when it is readable here (vakaudit.analyze.readscale7.v7_read_classes)
    v7_reads: list[V7Read] | None = None
    v7_measured_on_home: bool = False


@dataclass(frozen=True, slots=True)
class V7Read:
    vak_function: str
    replaces: str  # the JSONL-era read it replaces (its vak function)
    read_class: str  # flat | session | home, or "not measured"
    basis: str  # measured | estimated | not measured
    evidence: str
    section: str


def build(inputs: ReportInputs) -> ReadScaling:
    disk = by_key(inputs.rows("disk_by_kind"), "kind")
    declared = []
    for name, k in sorted(inputs.kinds.items()):
        d = disk.get(name)
        if d is None:
            continue
        declared.append(
            DeclaredRead(
                artifact=name,
                title=k.title,
                read=inputs.card(name).read,
                read_class=inputs.card(name).read_class,
                bound=inputs.card(name).bound,
                size_bytes=int(d["size_bytes"] or 0),
                rows=int(d["writes"] or 0),
            )
        )
    declared.sort(key=lambda r: (CLASS_ORDER.get(r.read_class, 3), -r.size_bytes, r.artifact))
    counts = {c: sum(1 for r in declared if r.read_class == c) for c in ("flat", "session", "home")}
    if inputs.layout in V7_LAYOUTS:
        reads, on_home = _v7_reads(inputs)
        return ReadScaling(declared, counts, [], [], None, None, None, None, False, reads, on_home)
    rs = inputs.readscale
    if rs is None:
        from vakaudit.analyze.readscale import READS

        unmeasured = [
            MeasuredRead(r.name, r.vak_function, r.what, "not measured", None, None, [], [], None)
            for r in READS
        ]
        return ReadScaling(declared, counts, unmeasured, [], None, None, None, None, False)
    measured = [
        MeasuredRead(
            name=r.name,
            vak_function=r.vak_function,
            what=r.what,
            read_class=r.read_class,
            home_exponent=r.home_exponent,
            session_exponent=r.session_exponent,
            home_ms=list(r.home_ms),
            session_ms=list(r.session_ms),
            home_slope_us_per_kturn=r.home_slope_us_per_kturn,
        )
        for r in sorted(rs.reads, key=lambda r: (CLASS_ORDER.get(r.read_class, 3), r.name))
    ]
    turns = list(rs.turns)

    def curve(sweep: str) -> list[dict[str, object]]:
        rows = []
        for r in measured:
            values = r.home_ms if sweep == "home" else r.session_ms
            for t, ms in zip(turns, values, strict=False):
                rows.append({"turns": t, "ms": max(float(ms), 1e-5), "read": r.vak_function})
        return rows

    home_chart = charts.line(
        curve("home"),
        x="turns",
        y="ms",
        series="read",
        title="Read cost against turns in the home (sessions of fixed length)",
        x_title="turns in the home",
        y_title="ms per read (best of runs)",
        log=True,
    )
    session_chart = charts.line(
        curve("session"),
        x="turns",
        y="ms",
        series="read",
        title="Read cost against turns in one session",
        x_title="turns in the session",
        y_title="ms per read (best of runs)",
        log=True,
    )
    return ReadScaling(
        declared=declared,
        counts=counts,
        measured=measured,
        turns=turns,
        session_turns=rs.session_turns,
        home_chart=home_chart,
        session_chart=session_chart,
        method=rs.method,
        has_readscale=True,
    )


def _v7_reads(inputs: ReportInputs) -> tuple[list[V7Read], bool]:
    """The 7.0 turn-path reads: classified on the home (query plans of private copies of its
    catalog.db and refs.db, a fit of the segment walk over its conversations) when the home is
    readable here, else listed with the section of baseline7.md they come from."""
    from vakaudit.analyze.readscale import READS
    from vakaudit.analyze.readscale7 import V7_READS, v7_read_classes
    from vakaudit.report.inputs import v7_home

    jsonl = {r.name: r.vak_function for r in READS}
    home = v7_home(inputs.manifest)
    if home is not None:
        return [
            V7Read(r.vak_function, jsonl.get(r.replaces, r.replaces), r.read_class, r.basis, r.evidence, r.section)
            for r in inputs.memo("v7_read_classes", lambda: v7_read_classes(home))
        ], True
    return [
        V7Read(r.vak_function, jsonl.get(r.replaces, r.replaces), "not measured", "not measured", r.section, r.section)
        for r in V7_READS
    ], False
