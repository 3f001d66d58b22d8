"""Flow runs: the persisted state of each ``vak flow run`` and each planner attempt (vak-flow).

Lives under ``<sessions_home>/flow-runs/`` (and the data root): ``<flow-name>/<unix-nanos>.json`` for
CLI runs (``--resume`` picks the name that sorts last), ``plan-<unix-nanos>-<attempt>.json`` for
planner attempts, and ``managed/`` for managed flows (layout unconfirmed; its JSON files are read the
same way). Written by the executor's ``persist`` after node state changes: the whole file as pretty
JSON with a plain ``fs::write`` — no tmp file, no rename, no fsync (home.md §6.5).

Rows: one per run document (``FlowState``): node counts per status and the frozen definition's size;
node outputs are not stored. Files that are not ``.json`` give no rows.
"""

from __future__ import annotations

from typing import Any

import orjson

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import (
    ArtifactKind,
    Baseline7,
    Discipline,
    ReadContext,
    RegistryClass,
    WriteCard,
    WriteGroup,
    one_row_reader,
)
from vakaudit.artifacts._columns import to_json
from vakaudit.artifacts._files import read_small, too_large
from vakaudit.artifacts._timestamps import TIMESTAMP, timestamp
from vakaudit.findings import Finding, FindingCode, Severity

CAP_BYTES = 64 * 1024 * 1024
STATUSES = ("pending", "running", "completed", "failed", "skipped")

_SCHEMA = decl.schema(
    [
        decl.field("rel_path", decl.string(), nullable=False),
        decl.field("home_scope", decl.string(), nullable=False),
        decl.field("run_kind", decl.string()),  # cli | plan | managed
        decl.field("run_id", decl.string()),
        decl.field("flow_name", decl.string()),
        decl.field("started_at", TIMESTAMP),
        decl.field("definition_bytes", decl.int64()),
        decl.field("node_count", decl.int64()),
        *(decl.field(f"nodes_{s}", decl.int64()) for s in STATUSES),
        decl.field("node_status", decl.string()),  # JSON object node id -> status
        decl.field("output_bytes", decl.int64()),  # JSON size of every node output together
    ]
)


def _run_kind(rel_path: str) -> str:
    parts = rel_path.split("/")
    inside = parts[parts.index("flow-runs") + 1 : -1] if "flow-runs" in parts else []
    if "managed" in inside:
        return "managed"
    return "plan" if parts[-1].startswith("plan-") else "cli"


def _row(ctx: ReadContext, doc: dict[str, Any] | None) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(_SCHEMA.names)
    row.update(rel_path=ctx.rel_path, home_scope=ctx.home_scope, run_kind=_run_kind(ctx.rel_path))
    if doc is None:
        return row
    nodes = doc.get("nodes") if isinstance(doc.get("nodes"), dict) else {}
    status = {k: v.get("status") for k, v in nodes.items() if isinstance(v, dict)}
    definition = doc.get("definition_toml")
    row.update(
        run_id=doc.get("run_id") if isinstance(doc.get("run_id"), str) else None,
        flow_name=doc.get("flow_name") if isinstance(doc.get("flow_name"), str) else None,
        started_at=timestamp(doc.get("started_at")),
        definition_bytes=len(definition.encode("utf-8", "surrogatepass"))
        if isinstance(definition, str)
        else None,
        node_count=len(nodes),
        node_status=to_json(status),
        output_bytes=sum(len(orjson.dumps(v.get("output"))) for v in nodes.values() if isinstance(v, dict)),
    )
    for s in STATUSES:
        row[f"nodes_{s}"] = sum(1 for v in status.values() if v == s)
    return row


def _row_of(ctx: ReadContext) -> dict[str, Any] | None:
    """The row of one flow-run document (None: not a ``.json`` file), its findings emitted."""
    if not ctx.rel_path.endswith(".json"):
        return None
    data = read_small(ctx, CAP_BYTES)
    doc: dict[str, Any] | None = None
    if data is None:
        ctx.emit(too_large(ctx, CAP_BYTES))
    else:
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            value = exc
        if isinstance(value, dict):
            doc = value
        else:
            why = str(value).split(":", 1)[0] if isinstance(value, Exception) else "not a JSON object"
            ctx.emit(
                Finding(
                    FindingCode.SIDECAR_UNPARSEABLE_ROW,
                    Severity.WARNING,
                    ctx.rel_path,
                    f"flow run document does not parse ({why})",
                )
            )
    return _row(ctx, doc)


reader = one_row_reader(_row_of, _SCHEMA, "One row per flow-run document.")


KIND = ArtifactKind(
    name="flow_runs",
    title="Flow runs",
    patterns=("**/flow-runs/**",),
    card=WriteCard(
        writer="FlowState::persist — vak-flow executor",
        trigger="after node state changes of a flow run or planner attempt",
        discipline="whole-file pretty JSON via plain fs::write; no tmp, no rename, no fsync",
        barriers_per_write=0,
        read="--resume reads the file whose name sorts last",
        bound="none",
        group=WriteGroup.SERVER,
        read_class="flat",
        style=Discipline.REWRITE,
    ),
    v7=Baseline7(('**/flow-runs/**',), (18, 53), vak_class='Record', owner='vak-flow'),
    registry_class=RegistryClass.LEDGER,
    description=__doc__,
    declared_schema=_SCHEMA,
    reader=reader,
    priority=5,  # the whole tree is this kind's
)

__getattr__ = decl.exports(__name__, SCHEMA=_SCHEMA)
