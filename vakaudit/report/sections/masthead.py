"""Masthead: what was measured (sessions, turns, entries, bytes, date range, layout) and the
headline tiles (entries, barriers and KB per turn; the largest entry kind's share)."""

from __future__ import annotations

from dataclasses import dataclass

from vakaudit.artifacts import LEDGER_KIND
from vakaudit.report.inputs import ReportInputs

TITLE = "What was measured"
ORDER = 10


@dataclass(frozen=True, slots=True)
class KindRate:
    kind: str
    per_turn: float


@dataclass(frozen=True, slots=True)
class Version:
    app_version: str
    sessions: int


@dataclass(frozen=True, slots=True)
class Masthead:
    sessions: int
    turns: int
    entries: int
    directives: int
    user_messages: int
    assistant_messages: int
    tool_result_blocks: int
    ledger_bytes: int
    home_bytes: int
    home_files: int
    ledger_files: int
    max_ledger_bytes: int
    first_at: str | None
    last_at: str | None
    layout: str
    app_versions: list[Version]
    entries_per_turn: float | None
    bytes_per_turn: float | None
    barriers_per_turn: float | None
    ledger_barriers_per_turn: float | None
    largest_kind: str | None
    largest_kind_share: float
    largest_kind_mean_bytes: float | None
    largest_kind_per_turn: float | None
    shape: list[KindRate]
    top_kinds: list[str]
    provenance: dict[str, str]


def build(inputs: ReportInputs) -> Masthead:
    h = inputs.analysis.headline
    ov = inputs.one("overview")
    turns = int(ov.get("turns") or 0)
    by_kind = inputs.rows("ledger_bytes_by_kind")
    largest = by_kind[0] if by_kind else None
    per_turn_all = next((r for r in inputs.rows("per_turn") if r.get("scope") == "all"), {})
    span = inputs.query(
        "SELECT min(first_at)::VARCHAR AS first_at, max(last_at)::VARCHAR AS last_at FROM sessions"
    )[0]
    versions = inputs.query(
        "SELECT coalesce(app_version, 'unknown') AS app_version, count(*) AS sessions FROM sessions "
        "GROUP BY 1 ORDER BY 1"
    )
    disk = next((r for r in inputs.rows("disk_by_kind") if r["kind"] == LEDGER_KIND), {})
    shape = sorted(
        (KindRate(r["kind"], r["entry_count"] / turns) for r in by_kind if turns),
        key=lambda k: (-k.per_turn, k.kind),
    )[:8]
    return Masthead(
        sessions=int(ov.get("sessions") or 0),
        turns=turns,
        entries=int(ov.get("entries") or 0),
        directives=int(ov.get("directives") or 0),
        user_messages=int(ov.get("user_messages") or 0),
        assistant_messages=int(ov.get("assistant_messages") or 0),
        tool_result_blocks=int(ov.get("tool_result_blocks") or 0),
        ledger_bytes=int(ov.get("ledger_bytes") or 0),
        home_bytes=int(ov.get("home_bytes") or 0),
        home_files=int(ov.get("home_files") or 0),
        ledger_files=int(disk.get("file_count") or 0),
        max_ledger_bytes=int(disk.get("max_file_bytes") or 0),
        first_at=_day(span["first_at"]),
        last_at=_day(span["last_at"]),
        layout=str(inputs.manifest.get("layout") or "unknown"),
        app_versions=[Version(str(v["app_version"]), int(v["sessions"])) for v in versions],
        entries_per_turn=h.get("entries_per_turn"),
        bytes_per_turn=h.get("bytes_per_turn"),
        barriers_per_turn=h.get("barriers_per_turn"),
        ledger_barriers_per_turn=per_turn_all.get("ledger_barriers_per_turn"),
        largest_kind=largest["kind"] if largest else None,
        largest_kind_share=float(largest["share"] or 0) if largest else 0.0,
        largest_kind_mean_bytes=largest["mean_bytes"] if largest else None,
        largest_kind_per_turn=(largest["entry_count"] / turns) if largest and turns else None,
        shape=shape,
        top_kinds=[r["kind"] for r in by_kind[:5]],
        provenance={
            "overview": inputs.measured("overview"),
            "per_turn": inputs.measured("per_turn"),
            "barriers_per_turn": inputs.measured("barriers_per_turn"),
            "ledger_bytes_by_kind": inputs.measured("ledger_bytes_by_kind"),
        },
    )


def _day(value: str | None) -> str | None:
    return value[:10] if value else None
