"""The scan's Parquet parts: the task writers, and the rewrites that prune rows of files read again.

A part is one Parquet file under ``<table>/``; the manifest lists, per file, the parts holding its
rows. ``entries`` parts are written in large row groups with a dictionary on the low-cardinality
columns; side tables are zstd alone.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from vakaudit.artifacts.session_ledger import (
    ENTRIES_SCHEMA,
    EntriesBuffer,
)
from vakaudit.findings import FINDINGS_SCHEMA, Finding
from vakaudit.ledger.policy import regrade
from vakaudit.names import shown
from vakaudit.scan.tables import all_tables
from vakaudit.scan.tables7 import CHAINS_PART, FRAMES_PART

# side tables are small and varied: zstd alone compresses them smaller than dictionary pages, ~20 % faster
SIDE_DICTIONARY = False
MERGED_PARTS = frozenset({"all.parquet", "walk.parquet", "files.parquet", FRAMES_PART, CHAINS_PART})  # rewritten by every scan
PARQUET_COMPRESSION = "zstd"
# entries columns with few distinct values per file; ids, digests and numbers skip the dictionary
# (it would fall back to plain encoding anyway, after costing time): ~20 % less Parquet CPU
ENTRIES_DICTIONARY_COLUMNS = [
    "rel_path",
    "session_id",
    "agent_id",
    "workspace_key",
    "kind",
    "chain_status",
    "role",
    "control",
    "model",
    "provider",
    "stop_reason",
    "activity_kind",
    "activity_label",
    "purpose",
    "app_version",
    "system_prompt_sha256",
]
# a task's entries batches are written as a row group once they reach ENTRIES_GROUP_ROWS rows or
# ENTRIES_GROUP_BYTES Arrow bytes (what a worker holds at most)
ENTRIES_GROUP_ROWS = 65_536
ENTRIES_GROUP_BYTES = 32 << 20
# a 7.0 home's frame rows (one part for the whole home, written by the scan's own process): smaller
# row groups, because a rescan holds one row group of the last scan's part while it writes the new
# one (decoded, a 32 MiB group costs about twice that in resident memory)
FRAMES_GROUP_BYTES = 8 << 20


class _EntriesPart:
    """The ``entries`` part of one task: every ledger of the task streams its rows into it (or the
    part of another ``schema``'s table, the rows of another resumable kind).

    Rows gather in ``buffer`` (shared by the task's scanners, converted to Arrow every
    ``ENTRIES_BATCH_ROWS``; default an ``EntriesBuffer``), then in record batches written as one row
    group once they reach ``ENTRIES_GROUP_ROWS`` rows or ``group_bytes`` (default
    ``ENTRIES_GROUP_BYTES``): a worker's memory stays bounded whatever the ledgers' sizes, and a
    small ledger adds rows, not a Parquet file or row group.
    """

    def __init__(
        self, out: str, name: str, group_bytes: int = ENTRIES_GROUP_BYTES, *,
        schema: pa.Schema | None = None, buffer: Any = None,
    ) -> None:
        self.out = out
        self.name = name
        self.group_bytes = group_bytes
        self.schema = ENTRIES_SCHEMA if schema is None else schema
        self.buffer = EntriesBuffer() if buffer is None else buffer
        self._batches: list[pa.RecordBatch] = []
        self._rows = 0
        self._bytes = 0
        self._writer: pq.ParquetWriter | None = None
        self.writes = 0  # row groups written so far
        self._dropped: set[str] = set()  # files whose rows reached the file and must leave it at close

    def add(self, batch: pa.RecordBatch) -> None:
        self._batches.append(batch)
        self._rows += batch.num_rows
        self._bytes += batch.nbytes
        if self._rows >= ENTRIES_GROUP_ROWS or self._bytes >= self.group_bytes:
            self._write()

    def _write(self) -> None:
        if not self._rows:
            return
        if self._writer is None:
            self._writer = _entries_writer(os.path.join(self.out, self.name), self.schema)
        self._writer.write_table(pa.Table.from_batches(self._batches), row_group_size=self._rows)
        self._batches, self._rows, self._bytes = [], 0, 0
        self.writes += 1

    def drop(self, rel_path: str, writes_before: int) -> None:
        """Remove the rows of a file whose scan failed after ``writes_before`` row groups were written."""
        import pyarrow.compute as pc

        self.buffer.discard_unmarked()
        if len(self.buffer):  # rows of the files before it (its own are filtered out below)
            self._batches.append(self.buffer.take())
        kept = [b.filter(pc.not_equal(b.column("rel_path"), shown(rel_path))) for b in self._batches]
        self._batches = [b for b in kept if b.num_rows]
        self._rows = sum(b.num_rows for b in self._batches)
        self._bytes = sum(b.nbytes for b in self._batches)
        if self.writes > writes_before:
            self._dropped.add(rel_path)

    def close(self) -> bool:
        """Write what is left; whether the part exists (holds rows)."""
        if len(self.buffer):
            self.add(self.buffer.take())
        self._write()
        if self._writer is None:
            return False
        self._writer.close()
        path = Path(self.out, self.name)
        if self._dropped:
            keep = _rewrite_part(path, lambda t, rows: _drop_rows(t, self._dropped, rows=rows))
            if not keep:
                path.unlink()
                return False
        return True


def _entries_writer(path: str | os.PathLike[str], schema: pa.Schema | None = None) -> pq.ParquetWriter:
    """A writer of ``entries`` rows (or another table's streamed rows: ``schema``), with a dictionary
    on its low-cardinality columns."""
    schema = ENTRIES_SCHEMA if schema is None else schema
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return pq.ParquetWriter(
        path,
        schema,
        compression=PARQUET_COMPRESSION,
        use_dictionary=[c for c in ENTRIES_DICTIONARY_COLUMNS if c in schema.names],
    )


def _prune_parts(out: Path, files: dict[str, dict[str, Any]], keep: set[str], *, sweep: bool = True) -> None:
    """Delete per-file parts of dropped files; rewrite shared parts to the rows of kept files only.

    With ``sweep``, also removes part files no kept file references (left by an interrupted scan);
    only before the workers run, since their new parts are referenced by no manifest yet.
    """
    members: dict[str, set[str]] = {}
    for rel, entry in files.items():
        for part in entry.get("parts", []):
            members.setdefault(part, set()).add(rel)
    referenced: set[str] = set()
    for part, rels in members.items():
        path = out / part
        kept = rels & keep
        if not kept:
            path.unlink(missing_ok=True)
            continue
        referenced.add(part)
        if kept != rels and path.is_file():
            _rewrite_part(path, lambda t, rows, kept=kept: _keep_rows(t, kept, rows=rows))
    if not sweep:
        return
    for name in all_tables():
        folder = out / name
        if folder.is_dir():
            for path in folder.glob("*.parquet"):
                if path.name not in MERGED_PARTS and f"{name}/{path.name}" not in referenced:
                    path.unlink()


def _rewrite_part(path: Path, select: Callable[[pa.Table, int], pa.Table]) -> int:
    """Rewrite a part to the rows ``select`` keeps of it, a bounded slice at a time; the rows kept.
    ``select`` gets a slice and the part's number of rows.

    The part keeps its schema, encoding and row groups of up to ``ENTRIES_GROUP_ROWS`` rows.
    """
    pf = pq.ParquetFile(path)
    tmp = path.with_name(f".{path.name}.tmp")
    kept = 0
    try:
        if path.parent.name == "entries":
            writer = _entries_writer(tmp)
        else:
            writer = pq.ParquetWriter(
                tmp, pf.schema_arrow, compression=PARQUET_COMPRESSION, use_dictionary=SIDE_DICTIONARY
            )
        with writer:
            rows = pf.metadata.num_rows
            for batch in pf.iter_batches(batch_size=ENTRIES_GROUP_ROWS):
                t = select(pa.Table.from_batches([batch]), rows)
                if t.num_rows:
                    writer.write_table(t, row_group_size=ENTRIES_GROUP_ROWS)
                    kept += t.num_rows
    finally:
        pf.close()
    os.replace(tmp, path)
    return kept


def _write_table(out: Path, name: str, table: pa.Table, filename: str = "all.parquet") -> None:
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{filename}.tmp"
    pq.write_table(table, tmp, compression=PARQUET_COMPRESSION)
    os.replace(tmp, folder / filename)


def _read_part(path: Path, schema: pa.Schema) -> pa.Table:
    """A part read whole, as ``schema``. Through ``ParquetFile``: ``pq.read_table`` goes through
    Arrow's dataset layer, whose import (with Arrow's compute) costs a scan ~50 ms."""
    if not path.is_file():
        return schema.empty_table()
    pf = pq.ParquetFile(path)
    try:
        t = pf.read()
    finally:
        pf.close()
    return _as_table(t, schema)


def _as_table(t: pa.Table, schema: pa.Schema) -> pa.Table:
    """``t`` as ``schema``: cast only when its schema differs (a cast imports Arrow's compute)."""
    return t if t.schema == schema else t.cast(schema)


def _keep_rows(table: pa.Table, keep: set[str], *, rows: int | None = None) -> pa.Table:
    """The rows of ``table`` whose ``rel_path`` is one of the files ``keep``, in order. ``rows``:
    how many rows the caller selects from in all (a part read by batches), which picks the way."""
    return _rows_where(table, "rel_path", set(map(shown, keep)), keep=True, rows=rows)


def _drop_rows(table: pa.Table, drop: set[str], *, rows: int | None = None) -> pa.Table:
    """The rows of ``table`` whose ``rel_path`` is none of the files ``drop``, in order."""
    return _rows_where(table, "rel_path", set(map(shown, drop)), keep=False, rows=rows)


# up to this many rows, a selection is made in Python: importing Arrow's compute module costs
# ~40 ms, what Python's membership test and the slicing spend on about this many rows
PY_SELECT_ROWS = 262_144


def _rows_where(table: pa.Table, column: str, values: set[str], *, keep: bool, rows: int | None = None) -> pa.Table:
    """The rows of ``table`` whose ``column`` is (``keep``) or is not (not ``keep``) in ``values``,
    in order; a null is in no set. With Arrow's compute when it is loaded already or the rows are
    many, else in Python (runs of selected rows as zero-copy slices): same rows, same order."""
    if not table.num_rows:
        return table
    if _compute_pays(rows or table.num_rows):
        import pyarrow.compute as pc

        mask = pc.is_in(table[column], value_set=pa.array(sorted(values), pa.string()))
        return table.filter(mask if keep else pc.invert(mask))
    return _slice_runs(table, [(v in values) == keep for v in table[column].to_pylist()])


def _compute_pays(rows: int) -> bool:
    """Whether a selection over ``rows`` rows is made with Arrow's compute: when it is loaded already
    or the rows are many (see ``PY_SELECT_ROWS``); else in Python."""
    return rows > PY_SELECT_ROWS or "pyarrow.compute" in sys.modules


def _slice_runs(table: pa.Table, selected: list[bool]) -> pa.Table:
    """The rows of ``table`` where ``selected`` is true, in order, without Arrow's compute: each run
    of selected rows is a zero-copy slice."""
    pieces: list[pa.Table] = []
    start = None
    for i, sel in enumerate(selected):
        if sel and start is None:
            start = i
        elif not sel and start is not None:
            pieces.append(table.slice(start, i - start))
            start = None
    if start is not None:
        pieces.append(table.slice(start))
    if len(pieces) == 1 and pieces[0].num_rows == table.num_rows:
        return table
    return pa.concat_tables(pieces) if pieces else table.slice(0, 0)


def _findings_table(findings: Iterable[Finding]) -> pa.Table:
    """Findings as rows, graded by the one severity policy ``verify`` grades by (its default)."""
    rows = [regrade(f).to_row() for f in findings]
    return pa.Table.from_pylist(rows, schema=FINDINGS_SCHEMA) if rows else FINDINGS_SCHEMA.empty_table()
