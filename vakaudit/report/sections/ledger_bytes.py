"""Where the ledger bytes go: share by entry kind, and inside the top kinds by payload field."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from vakaudit.report import charts
from vakaudit.report.filters import size
from vakaudit.report.inputs import ReportInputs

TITLE = "Where the ledger bytes go"
ORDER = 20
TOP_KINDS = 3
TOP_FIELDS = 8


@dataclass(frozen=True, slots=True)
class KindRow:
    kind: str
    entry_count: int
    size_bytes: int
    share: float
    mean_bytes: float | None
    p50_bytes: float | None
    p95_bytes: float | None
    max_bytes: int | None


@dataclass(frozen=True, slots=True)
class FieldRow:
    field: str
    entry_count: int
    size_bytes: int
    share_of_kind: float
    mean_bytes: float | None


@dataclass(frozen=True, slots=True)
class KindFields:
    kind: str
    size_bytes: int
    share: float
    fields: list[FieldRow]
    chart: Markup | None
    plain_bytes: int | None = None  # a 7.0 home: the kind's plaintext bytes (what its fields add up to)


@dataclass(frozen=True, slots=True)
class MessageRow:
    role: str
    message_count: int
    size_bytes: int
    mean_bytes: float | None
    carrying_tool_results: int
    carrying_tool_calls: int


@dataclass(frozen=True, slots=True)
class LedgerBytes:
    ledger_bytes: int
    entries: int
    kinds: list[KindRow]
    chart: Markup | None
    top: list[KindFields]
    messages: list[MessageRow]
    tool_result_blocks: int
    tool_result_bytes: int
    measured: str
    measured_fields: str
    measured_messages: str


def build(inputs: ReportInputs) -> LedgerBytes:
    rows = inputs.rows("ledger_bytes_by_kind")
    kinds = [
        KindRow(
            kind=str(r["kind"]),
            entry_count=int(r["entry_count"]),
            size_bytes=int(r["size_bytes"]),
            share=float(r["share"] or 0),
            mean_bytes=r["mean_bytes"],
            p50_bytes=r["p50_bytes"],
            p95_bytes=r["p95_bytes"],
            max_bytes=r["max_bytes"],
        )
        for r in rows
    ]
    total = sum(k.size_bytes for k in kinds)
    chart = (
        charts.hbar(
            [
                {"label": k.kind, "value": k.share, "text": f"{k.share:.1%} · {size(k.size_bytes)}"}
                for k in kinds
            ],
            label="label",
            value="value",
            text="text",
            title=f"Share of {size(total)} of ledger bytes by entry kind",
            color=charts.SEMANTIC["ledger"],
        )
        if kinds
        else None
    )
    fields: dict[str, list[dict[str, Any]]] = {}
    for r in inputs.rows("ledger_bytes_by_field"):
        fields.setdefault(str(r["kind"]), []).append(r)
    top = []
    plain = {
        str(r["kind"]): int(r["b"])
        for r in inputs.query(
            "SELECT kind, sum(plain_bytes) AS b FROM ledger_entry WHERE plain_bytes IS NOT NULL GROUP BY kind"
        )
    }
    for k in kinds[:TOP_KINDS]:
        frows = sorted(fields.get(k.kind, []), key=lambda r: (-int(r["size_bytes"]), str(r["field"])))
        shown = [
            FieldRow(
                field=str(r["field"]),
                entry_count=int(r["entry_count"]),
                size_bytes=int(r["size_bytes"]),
                share_of_kind=float(r["share_of_kind"] or 0),
                mean_bytes=r["mean_bytes"],
            )
            for r in frows[:TOP_FIELDS]
        ]
        rest = frows[TOP_FIELDS:]
        if rest:
            shown.append(
                FieldRow(
                    field=f"{len(rest)} other fields",
                    entry_count=max(int(r["entry_count"]) for r in rest),
                    size_bytes=sum(int(r["size_bytes"]) for r in rest),
                    share_of_kind=sum(float(r["share_of_kind"] or 0) for r in rest),
                    mean_bytes=None,
                )
            )
        fchart = (
            charts.hbar(
                [
                    {"label": f.field, "value": f.share_of_kind, "text": f"{f.share_of_kind:.1%}"}
                    for f in shown
                ],
                label="label",
                value="value",
                text="text",
                title=f"Bytes of {k.kind} by payload field",
                color=charts.SEMANTIC["derived"],
            )
            if shown
            else None
        )
        top.append(KindFields(k.kind, k.size_bytes, k.share, shown, fchart, plain.get(k.kind)))
    messages = [
        MessageRow(
            role=str(r["role"]),
            message_count=int(r["message_count"]),
            size_bytes=int(r["size_bytes"]),
            mean_bytes=r["mean_bytes"],
            carrying_tool_results=int(r["carrying_tool_results"] or 0),
            carrying_tool_calls=int(r["carrying_tool_calls"] or 0),
        )
        for r in inputs.rows("message_averages")
    ]
    tr = inputs.one("tool_result_bytes")
    ov = inputs.one("overview")
    return LedgerBytes(
        ledger_bytes=total,
        entries=int(ov.get("entries") or 0),
        kinds=kinds,
        chart=chart,
        top=top,
        messages=messages,
        tool_result_blocks=int(tr.get("tool_result_blocks") or 0),
        tool_result_bytes=int(tr.get("tool_result_bytes") or 0),
        measured=inputs.measured("ledger_bytes_by_kind"),
        measured_fields=inputs.measured("ledger_bytes_by_field"),
        measured_messages=inputs.measured("message_averages"),
    )
