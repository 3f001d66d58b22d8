"""Delivery outbox jobs: one JSON file per delivery job, one complete record line per state change.

Lives at ``<data>/delivery/jobs/<hex(job_id)>.json`` (the file name is the job id's UTF-8 bytes in
lowercase hex; the REGISTRY says ``jobs``, D10, so a root-level ``jobs/`` is accepted too). Written
by vak-delivery ``outbox.rs``: enqueue creates the file (create-new), writes one line, fsyncs the file
and the directory; ``mark_delivered`` / ``mark_failed`` / ``mark_dead_letter`` append a complete new
record and fsync the file; an in-process mutex is the only lock. ``pending()`` and ``list()`` parse
every file; delivered and dead-lettered files are never removed (home.md §6.4).

Rows: one per record line (history); the job's current state is its last parseable line
(``max(line_no)`` per ``rel_path``). ``file_job_id`` is the job id decoded from the file name.
``text`` is ``content.source_markdown``, ``content.markdown`` or ``content.title``.
"""

from __future__ import annotations

from typing import Any

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import (
    ArtifactKind,
    Discipline,
    ReadContext,
    RegistryClass,
    WriteCard,
    WriteGroup,
)
from vakaudit.artifacts._columns import FileCol, col, dig
from vakaudit.artifacts._files import file_stem
from vakaudit.artifacts._rowspec import RowSpec, jsonl_reader


def _job_id_from_name(ctx: ReadContext) -> str | None:
    try:
        return bytes.fromhex(file_stem(ctx)).decode("utf-8")
    except ValueError:
        return None


def _text(obj: dict[str, Any]) -> Any:
    content = dig(obj, ("job", "content"))
    if isinstance(content, dict):
        for key in ("source_markdown", "markdown", "title"):
            if isinstance(content.get(key), str):
                return content[key]
    return None


#: a job's first state, and the states that settle it: no record may follow them (home.md §6.4)
FIRST_DELIVERY_STATE = "pending"
SETTLED_DELIVERY_STATES = ("delivered", "dead_letter")

ROWS = RowSpec(
    (
        col("schema_version", decl.int64()),
        col("job_id", decl.string(), ("job", "job_id")),
        col("target", decl.string(), ("job", "target")),
        col("kind", decl.string(), ("job", "kind")),
        col("content_type", decl.string(), ("job", "content", "type")),
        col("markup", decl.string(), ("job", "profile", "markup")),
        col("text", decl.string(), _text),
        col("state", decl.string()),  # pending | delivered | dead_letter
        col("attempts", decl.int64()),
        col("created_at_ms", decl.int64()),
        col("updated_at_ms", decl.int64()),
        col("packet_surface", decl.string(), ("packet", "surface")),
        col("last_error", decl.string()),
    ),
    trace=False,
    file_cols=(FileCol(decl.field("file_job_id", decl.string()), _job_id_from_name),),
)


def _is_job(rel_path: str) -> bool:
    return rel_path.endswith(".json")


# history rows of one job file (other files in the directory give none)
reader = jsonl_reader(ROWS, _is_job)


KIND = ArtifactKind(
    name="delivery_jobs",
    title="Delivery outbox jobs",
    patterns=("**/delivery/jobs/*", "jobs/*.json"),
    card=WriteCard(
        writer="Outbox::enqueue / mark_* — vak-delivery",
        trigger="every delivery enqueued, and each state change of a job",
        discipline="per-job file create (fsync file + dir) / append a full record (fsync) under an in-process mutex",
        barriers_per_write=1,
        read="outbox pending() reads and parses every job file in the directory",
        bound="delivered jobs are never removed",
        group=WriteGroup.SERVER,
        read_class="home",
        style=Discipline.APPEND,
        levers=("sidecar_bounds",),  # "Give every append-only sidecar a size bound"
    ),
    registry_class=RegistryClass.LEDGER,
    description=__doc__,
    declared_schema=ROWS.declared_schema,
    reader=reader,
    append_only=True,
)
