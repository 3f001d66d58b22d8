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
from vakaudit.scan.parts import _as_table
from vakaudit.scan.tables7 import CHAIN_RECORDS_SCHEMA, CHAINS_PART
from vakaudit.scan.tables7 import CHAIN_STATE_KEY as STATE_KEY
from vakaudit.storage import KeyRing, iter_segments


@dataclass(frozen=True, slots=True)
class _SegmentContext(ReadContext):
    """A kind reader's view of one segment: its readable entries, one per line."""

    data: bytes = b""

    def open(self):  # noqa: ANN201 - a binary file object, as ReadContext.open
        return io.BytesIO(self.data)


@dataclass(slots=True)
class ChainTables:
    """Rows per table name (kind tables and ``chain_records``), the segment findings and, per
    segment file, ``(scan_state, bytes_read, manifest state)`` (what the next scan may trust)."""

    tables: dict[str, pa.Table]
    findings: list[Finding] = field(default_factory=list)
    segments: dict[str, tuple[str, int, dict]] = field(default_factory=dict)


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


def read_chain_tables(root: Path, files: list, keys: KeyRing | None = None, *,
                      prev_files: dict | None = None, prev_dir: Path | None = None) -> ChainTables:
    """The rows of every record chain of the 7.0 home ``root`` (the session ledgers excepted).

    With the previous scan's manifest ``prev_files`` and its output folder ``prev_dir``, a rescan
    trusts what 7.0 guarantees (baseline7.md §3.6), as the ledgers' frames do: a sealed segment
    whose size, mtime and ``seals.log`` entry are as recorded is not opened and keeps its rows, an
    open ``.log`` that only grew is read from its last verified frame. A chain row depends on its
    frame alone, so unlike a ledger's it is kept whether or not the frame was readable, as long as
    this scan opens the chain the way the last one did (with or without its key)."""
    from vakaudit.scan.frames7 import LEDGER_KIND, segment_states, tenant_keys, trusted_segments
    from vakaudit.scan.store7 import chain_key

    tenants = tenant_keys(root, keys)
    prev = _PreviousRows(prev_dir) if prev_files and prev_dir is not None else None
    by_dir: dict[str, list] = {}
    for hf in files:
        if "/" in hf.rel_path:
            by_dir.setdefault(hf.rel_path.rsplit("/", 1)[0], []).append(hf)
    out = ChainTables({})
    parts: dict[str, list[pa.Table]] = {}
    for rel_dir, hf in chain_dirs(files, LEDGER_KIND).items():
        key = chain_key(root / rel_dir, rel_dir, tenants)
        resume: dict = {}
        kept: dict = {}
        if prev is not None:
            resume, kept, _readable, _grew = trusted_segments(
                root, by_dir.get(rel_dir, []), prev_files, out.findings, state_key=STATE_KEY,
                unlocked=key is not None, rows_for=prev.rows)
        rows = _dir_rows(root, rel_dir, hf, key, resume, kept)
        if rows is None:  # a grown segment's new frames take another table than its kept rows
            resume, kept = {}, {}
            rows = _dir_rows(root, rel_dir, hf, key, resume, kept)
        walk, tables, readable, firsts, where = rows
        for name, t in tables:
            parts.setdefault(name, []).append(t)
        out.findings += walk.findings
        for rel, (state, nbytes, facts) in segment_states(root, walk, resume, kept, readable, firsts,
                                                          unlocked=key is not None).items():
            facts["table"] = where.get(rel)
            out.segments[rel] = (state, nbytes, facts)
    out.tables = {name: pa.concat_tables(ts) for name, ts in parts.items()}
    if "chain_records" in out.tables:
        out.tables["chain_records"] = _as_table(out.tables["chain_records"], CHAIN_RECORDS_SCHEMA)
    return out


def _dir_rows(root: Path, rel_dir: str, hf, key: bytes | None, resume: dict, kept: dict):  # noqa: ANN001, ANN202
    """Walk one chain directory: (walk, [(table, rows)], readable frames and first frame per
    segment, the table each segment's rows are in); None when a resumed segment's new frames
    would go to another table than its kept rows."""
    walk = iter_segments(root / rel_dir, key, rel_dir=rel_dir, resume=resume)
    kind = hf.kind
    tables: list[tuple[str, pa.Table]] = []
    readable: dict[str, int] = {}
    firsts: dict[str, object] = {}
    where: dict[str, str] = {}
    for segment, frames_walk in walk:
        frames = list(frames_walk)
        rel = f"{rel_dir}/{segment.rel_path.rsplit('/', 1)[-1]}"
        for f in frames:
            if f.index == 0:
                firsts[rel] = f
            if f.entry is not None:
                readable[rel] = readable.get(rel, 0) + 1
        old = kept.get(rel) if rel in walk.resumed else None
        name, t = None, None
        if frames:
            t = _kind_rows(root, rel, hf.home_scope, kind, frames)
            name = kind.name if t is not None else "chain_records"
            if t is None:
                t = _generic_rows(kind.name, rel, segment.number, frames)
        if old is not None:
            old_name = old[1].get("table")
            if name is not None and name != old_name:
                return None
            name = old_name
            schema = kind.schema if old_name == kind.name else CHAIN_RECORDS_SCHEMA
            before = _as_table(old[0].select(schema.names), schema)
            t = before if t is None else pa.concat_tables([before, _as_table(t, schema)])
        if t is not None and name is not None:
            tables.append((name, t))
            where[rel] = name
    return walk, tables, readable, firsts, where


def _generic_rows(kind: str, rel: str, number: int, frames: list) -> pa.Table:
    return pa.Table.from_pylist(
        [{"kind": kind, "rel_path": rel, "segment": number, "frame_index": f.index, "offset_bytes": f.offset,
          "stored_bytes": f.size_bytes, "plain_bytes": f.plain_bytes, "sealed": f.sealed} for f in frames],
        schema=CHAIN_RECORDS_SCHEMA)


class _PreviousRows:
    """The last scan's chain rows (its ``CHAINS_PART`` of each table), read once per table."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.tables: dict[str, object | None] = {}  # table name -> frames7.RowsByPath

    def rows(self, rel: str, st: dict) -> pa.Table | None:
        from vakaudit.scan.frames7 import RowsByPath

        name = st.get("table")
        if not name:
            return None
        if name not in self.tables:
            path = self.out / name / CHAINS_PART
            self.tables[name] = None
            if path.is_file():
                try:
                    self.tables[name] = RowsByPath.of_file(path)
                except (OSError, pa.ArrowException):
                    pass  # an unreadable part: nothing is kept, the segment is read again
        t = self.tables[name]
        if t is None:
            return None
        try:
            return t.rows(rel)  # the part's row groups are read as they are asked for
        except (OSError, pa.ArrowException):
            self.tables[name] = None  # an unreadable part: nothing is kept, the segment is read again
            return None


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
