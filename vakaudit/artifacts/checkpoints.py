"""Checkpoints: a workspace snapshot before a turn that may have an effect (vak-core ``checkpoints.rs``).

Lives at ``<sessions_home>/checkpoints/<session_id>/NNNN.json`` (``NNNN`` = seq, at least 4 digits),
with the temporary ``.NNNN.tmp`` beside it and, in an intermediate build, a content-addressed
``checkpoints/blobs/`` store (naming unconfirmed). All of these belong to this kind. Written by
``checkpoints::capture`` then ``store`` on a session's first turn and on any turn that
``expects_effect``: compact JSON into the ``.tmp`` file, then rename; no fsync; the directory is then
pruned to the 20 newest by seq (never for ended sessions, D1). Limits: 8 MiB per file, 64 MiB per
walk. Read only on rewind or for a delta summary (home.md §5).

Rows: one per ``files[]`` entry of a snapshot, with its size, never its content; a snapshot with no
entries gives one row with ``entry_index`` null. The document is scanned as a stream (multi-MB base64
strings are measured, not loaded). ``format``: ``base64`` (G1, ``files[].content``), ``hashed``
(later, ``files[].hash`` + ``size``), ``blob`` (a file of ``checkpoints/blobs/``, sized by stat),
null when no entry says. ``.tmp`` files give no rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from vakaudit.artifacts._base import ArtifactKind, ReadContext, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._jsonl import BATCH_ROWS, TIMESTAMP, parse_ts
from vakaudit.artifacts._jsonstream import (
    JsonStreamError,
    base64_decoded_len,
    iter_scalars,
    scan_scalars,
    string_len,
)
from vakaudit.findings import Finding, FindingCode, Severity

SCHEMA = pa.schema(
    [
        pa.field("rel_path", pa.string(), nullable=False),
        pa.field("home_scope", pa.string(), nullable=False),
        pa.field("session_id", pa.string()),
        pa.field("seq", pa.int64()),
        pa.field("created_at", TIMESTAMP),
        pa.field("format", pa.string()),  # base64 | hashed | blob
        pa.field("label_bytes", pa.int64()),  # the prompt text is user content: only its size is kept
        pa.field("files_count", pa.int64()),
        pa.field("observed_count", pa.int64()),
        pa.field("snapshot_content_bytes", pa.int64()),  # sum of content_bytes over the snapshot
        pa.field("entry_index", pa.int64()),  # position in files[]
        pa.field("file_rel_path", pa.string()),  # workspace-relative path of the snapshotted file
        pa.field("content_bytes", pa.int64()),  # decoded size (base64) / declared size (hashed)
        pa.field("encoded_bytes", pa.int64()),  # bytes the entry's content string takes in the file
        pa.field("hash", pa.string()),
        pa.field("mtime_ns", pa.int64()),
    ]
)

_SNAPSHOT = re.compile(r"\d{4,}\.json")
_ENTRY_KEYS = ("file_rel_path", "content_bytes", "encoded_bytes", "hash", "mtime_ns")


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _snapshot(ctx: ReadContext, fast: bool = True) -> Iterator[pa.RecordBatch]:
    head: dict[str, Any] = {"label_bytes": None, "seq": None, "session_id": None, "created_at": None}
    entries: dict[int, dict[str, Any]] = {}
    observed = 0
    fmt: str | None = None
    fault: JsonStreamError | None = None
    with ctx.open() as f:
        try:
            events = scan_scalars(f) if fast else None
            if events is None:  # not a plain document: the streaming scanner, from the start
                f.seek(0)
                events = iter_scalars(f)
            for path, value in events:
                top = path[0] if path else None
                if top == "files" and len(path) == 3 and isinstance(path[1], int):
                    entry = entries.setdefault(path[1], dict.fromkeys(_ENTRY_KEYS))
                    key = path[2]
                    if key == "rel_path":
                        entry["file_rel_path"] = value if isinstance(value, str) else None
                    elif key == "content":
                        fmt = fmt or "base64"
                        entry["encoded_bytes"] = string_len(value)
                        entry["content_bytes"] = base64_decoded_len(value)
                    elif key == "hash":
                        fmt = "hashed"
                        entry["hash"] = value if isinstance(value, str) else None
                    elif key == "size":
                        entry["content_bytes"] = _int(value)
                    elif key == "mtime_ns":
                        entry["mtime_ns"] = _int(value)
                elif top == "observed" and len(path) == 2:
                    observed += 1
                elif top == "label" and len(path) == 1:
                    head["label_bytes"] = string_len(value)
                elif top == "seq" and len(path) == 1:
                    head["seq"] = _int(value)
                elif top == "session_id" and len(path) == 1 and isinstance(value, str):
                    head["session_id"] = value
                elif top == "created_at" and len(path) == 1:
                    head["created_at"] = parse_ts(value)
        except JsonStreamError as exc:
            fault = exc
    if fault is not None:
        ctx.emit(
            Finding(
                FindingCode.SIDECAR_UNPARSEABLE_ROW,
                Severity.WARNING,
                ctx.rel_path,
                f"checkpoint is not one valid JSON document ({fault}); the entries before the fault are kept",
                offset_bytes=fault.offset,
            )
        )
    if head["session_id"] is None:
        parts = ctx.rel_path.split("/")
        head["session_id"] = ctx.session_id or (parts[-2] if len(parts) >= 2 else None)
    sizes = [e["content_bytes"] for e in entries.values() if e["content_bytes"] is not None]
    common = {
        "rel_path": ctx.rel_path,
        "home_scope": ctx.home_scope,
        **head,
        "format": fmt,
        "files_count": len(entries),
        "observed_count": observed,
        "snapshot_content_bytes": sum(sizes),
    }
    rows = [{"entry_index": i, **e} for i, e in sorted(entries.items())] or [
        {"entry_index": None, **dict.fromkeys(_ENTRY_KEYS)}
    ]
    for start in range(0, len(rows), BATCH_ROWS):
        part = rows[start : start + BATCH_ROWS]
        arrays = [
            pa.repeat(pa.scalar(common[f.name], f.type), len(part))
            if f.name in common
            else pa.array([row[f.name] for row in part], f.type)
            for f in SCHEMA
        ]
        yield pa.RecordBatch.from_arrays(arrays, schema=SCHEMA)


def _blob(ctx: ReadContext) -> Iterator[pa.RecordBatch]:
    size = ctx.path.lstat().st_size  # metadata only: the blob's content is never read
    row = dict.fromkeys(SCHEMA.names)
    row.update(
        rel_path=ctx.rel_path,
        home_scope=ctx.home_scope,
        format="blob",
        hash=ctx.rel_path.rsplit("/", 1)[-1],
        content_bytes=size,
    )
    yield pa.RecordBatch.from_pylist([row], schema=SCHEMA)


def session_of(rel_path: str) -> str | None:
    """``checkpoints/<session_id>/NNNN.json`` names its session; blobs belong to none."""
    parts = rel_path.split("/")
    if len(parts) >= 3 and parts[-3] == "checkpoints" and parts[-2] != "blobs":
        return parts[-2]
    return None


def reader(ctx: ReadContext) -> Iterator[pa.RecordBatch]:
    """Rows of one snapshot file, or the size row of one blob; temp files give none."""
    if "/checkpoints/blobs/" in f"/{ctx.rel_path}":
        return _blob(ctx)
    if _SNAPSHOT.fullmatch(ctx.rel_path.rsplit("/", 1)[-1]):
        return _snapshot(ctx)
    return iter(())


KIND = ArtifactKind(
    name="checkpoints",
    title="Checkpoints",
    patterns=(
        "**/checkpoints/*/*.json",
        "**/checkpoints/*/.*.tmp",
        "**/checkpoints/blobs/**",
        "**/checkpoints/**",
    ),
    card=WriteCard(
        writer="checkpoints::store — vak-core",
        trigger="first turn of a session, and any turn where expects_effect",
        discipline="tmp + rename; no fsync; prunes to 20 newest per session",
        barriers_per_write=0,
        read="only on rewind / delta summary",
        bound="8 MB per file, 64 MB per snapshot, 20 per session; no dedupe between snapshots, no GC across sessions",
        group=WriteGroup.CHECKPOINT,
        read_class="flat",
    ),
    registry_class=RegistryClass.LEDGER,
    description=__doc__,
    schema=SCHEMA,
    reader=reader,
    priority=25,  # the whole tree is this kind's, whatever a file inside is called
    session_id_of=session_of,
)
