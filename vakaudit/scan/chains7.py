"""A 7.0 home's record chains (baseline7.md §3.6-§3.7, §9) as rows of their kind tables.

A side ledger of the JSONL era became a record chain directory in 7.0. Where the kind keeps the
JSONL era's row shape (its kind has a reader and a schema), the readable frames of each segment are
handed, one entry per line, to that same reader, so a 7.0 record and a JSONL line become a row
through the same code; ``rel_path`` is then the segment file, ``line_no`` the frame index plus 1,
``offset_bytes`` the frame's offset and ``size_bytes`` its bytes (in a compressed ``.sealed``
segment: in the decompressed body). Every other chain (the 7.0-only kinds, a frame that is not
readable, entries the reader does not take one row each) goes to the generic ``chain_records``
table, one row per frame.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from vakaudit.artifacts._base import ReadContext
from vakaudit.findings import Finding
from vakaudit.storage import KeyRing, iter_segments

CHAIN_RECORDS_SCHEMA = pa.schema(
    [
        pa.field("kind", pa.string(), nullable=False),
        pa.field("rel_path", pa.string(), nullable=False),
        pa.field("segment", pa.int64(), nullable=False),
        pa.field("frame_index", pa.int64(), nullable=False),
        pa.field("offset_bytes", pa.int64(), nullable=False),
        pa.field("stored_bytes", pa.int64(), nullable=False),
        pa.field("plain_bytes", pa.int64()),
        pa.field("sealed", pa.bool_(), nullable=False),
    ]
)

CHAIN_TABLES: dict[str, tuple[pa.Schema, str]] = {
    "chain_records": (
        CHAIN_RECORDS_SCHEMA,
        "one row per frame of a 7.0 record chain whose kind has no JSONL-era table (or whose frame "
        "gives no row of it)",
    ),
}

CHAIN_COLUMN_NOTES: dict[tuple[str, str], str] = {
    ("chain_records", "kind"): "artifact kind of the chain directory (`vakaudit kinds`)",
    ("chain_records", "rel_path"): "the segment file holding the frame",
    ("chain_records", "offset_bytes"): "the frame's offset in its segment's chain (as in `entries`)",
    ("chain_records", "stored_bytes"): "the frame's bytes (4 + length + 32); in a compressed `.sealed` segment "
    "(flag 01, plaintext chains) its bytes in the decompressed body",
    ("chain_records", "plain_bytes"): "bytes of the record's JSON; null when sealed and locked",
}

#: the file name of the part holding a 7.0 home's chain rows in each table folder (rewritten each scan)
CHAINS_PART = "chains7.parquet"


@dataclass(frozen=True, slots=True)
class _SegmentContext(ReadContext):
    """A kind reader's view of one segment: its readable entries, one per line."""

    data: bytes = b""

    def open(self):  # noqa: ANN201 - a binary file object, as ReadContext.open
        return io.BytesIO(self.data)


@dataclass(slots=True)
class ChainTables:
    """Rows per table name (kind tables and ``chain_records``) and the segment findings."""

    tables: dict[str, pa.Table]
    findings: list[Finding] = field(default_factory=list)


def chain_dirs(files: list, skip_kind: str) -> dict[str, object]:
    """Record chain directories (relative to the home) with one of their segment files, sorted."""
    out: dict[str, object] = {}
    for hf in files:
        if hf.kind.name == skip_kind or hf.file_type != "file" or "/" not in hf.rel_path:
            continue
        parent, name = hf.rel_path.rsplit("/", 1)
        if name.startswith("seg-") and hf.kind.v7 is not None:
            out.setdefault(parent, hf)
    return dict(sorted(out.items()))


def read_chain_tables(root: Path, files: list, keys: KeyRing | None = None) -> ChainTables:
    """The rows of every record chain of the 7.0 home ``root`` (the session ledgers excepted)."""
    from vakaudit.scan.frames7 import LEDGER_SEGMENT_KIND, tenant_keys
    from vakaudit.scan.store7 import chain_key

    tenants = tenant_keys(root, keys)
    parts: dict[str, list[pa.Table]] = {}
    generic: list[dict] = []
    findings: list[Finding] = []
    for rel_dir, hf in chain_dirs(files, LEDGER_SEGMENT_KIND).items():
        kind = hf.kind
        walk = iter_segments(root / rel_dir, chain_key(root / rel_dir, rel_dir, tenants), rel_dir=rel_dir)
        for segment, frames_walk in walk:
            frames = list(frames_walk)
            rel = f"{rel_dir}/{segment.rel_path.rsplit('/', 1)[-1]}"
            t = _kind_rows(root, rel, hf.home_scope, kind, frames)
            if t is not None:
                parts.setdefault(kind.name, []).append(t)
                continue
            generic += [{"kind": kind.name, "rel_path": rel, "segment": segment.number, "frame_index": f.index,
                         "offset_bytes": f.offset, "stored_bytes": f.size_bytes, "plain_bytes": f.plain_bytes,
                         "sealed": f.sealed} for f in frames]
        findings += walk.findings
    tables = {name: pa.concat_tables(ts) for name, ts in parts.items()}
    if generic:
        tables["chain_records"] = pa.Table.from_pylist(generic, schema=CHAIN_RECORDS_SCHEMA)
    return ChainTables(tables, findings)


def _kind_rows(root: Path, rel: str, home_scope: str, kind, frames: list) -> pa.Table | None:  # noqa: ANN001 - an ArtifactKind
    """The kind table rows of one segment's frames through the kind's own reader; None when the kind
    has no reader, a frame is not readable or the reader does not give exactly one row per frame."""
    if kind.reader is None or kind.schema is None or kind.secret or not frames:
        return None
    if any(f.entry is None or b"\n" in f.entry for f in frames):
        return None
    data = b"".join(f.entry + b"\n" for f in frames)
    # the reader sees the chain as the JSONL-era file it replaces (a reader may take only that name)
    era = next((p.rsplit("/", 1)[-1] for p in kind.patterns if not any(c in p.rsplit("/", 1)[-1] for c in "*?[")),
               rel.rsplit("/", 1)[-1])
    ctx = _SegmentContext(root, f"{rel.rsplit('/', 1)[0]}/{era}", home_scope, None, data=data)
    batches = list(kind.reader(ctx))
    t = pa.Table.from_batches(batches, schema=kind.schema) if batches else kind.schema.empty_table()
    if t.num_rows != len(frames):
        return None
    for name, values in (("rel_path", [rel] * len(frames)), ("line_no", [f.index + 1 for f in frames]), ("offset_bytes", [f.offset for f in frames]),
                         ("size_bytes", [f.size_bytes for f in frames])):
        i = t.schema.get_field_index(name)
        t = t.set_column(i, t.schema.field(name), pa.array(values, t.schema.field(name).type))
    return t
