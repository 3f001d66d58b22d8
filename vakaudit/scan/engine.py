"""The scan engine: walk a home, read every file with its kind's reader, write Parquet + manifest.

Read-only, incremental, parallel, bounded:

- nothing in the home is written, locked, truncated or repaired; files are opened read-only
  (``O_NOFOLLOW``, ``O_NOATIME`` when allowed) and the output directory may not lie inside the home;
- a second scan into the same output directory re-reads only what changed: an unchanged file
  (inode, size, mtime) is not reopened; an append-only file that grew is read from where the last
  scan stopped, after checking its head (first 4 KiB) and its last scanned line are unchanged (a
  JSONL side file read on its own also keeps its line count, so its old bytes are not read again to
  number the new lines; small bundled files are counted again, at most 512 KiB each); a
  file that shrank or whose scanned prefix changed is fully rescanned and reported
  (``append_only_violation``);
- files are spread over a process pool in tasks: small files bundled, a big one alone. A ledger is
  never split across tasks (the chain needs the previous line's digest). The ledgers of a task
  stream their ``entries`` rows into the task's one Parquet part (``entries/t<gen>-<task>``), in
  large row groups flushed at a bounded size, so memory stays flat as the home grows and a small
  ledger costs no Parquet file of its own; small side files of a task share one part per kind
  (``<kind>/b<gen>-<task>``), a side file with many rows streams into its own. Side files are
  bundled by expected CPU (``_COST_PER_BYTE``, ``_COST_PER_FILE``); the small files of a kind whose
  reader carries a bundle (JSONL sidecars, checkpoints) are read into it and their rows become
  Arrow together, so a file of a few rows costs its reading, not a batch of its own; a side file is
  opened once (its reader and its rescan anchor share the descriptor);
- the manifest lists, per file, the parts holding its rows and how many rows it has there; a file
  rescanned from scratch or gone has its rows removed from shared parts before the workers run;
- ``turns`` and ``sessions`` are kept for ledgers unchanged since the last scan and derived with
  DuckDB for the others, over the parts their rows live in. With a process pool the ledger tasks
  are handed out first and the derivation joins the pool as soon as they are done, while side
  files are still read (unless a ledger was found rewritten: its old rows are pruned first).
"""

from __future__ import annotations

import gc
import hashlib
import io
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from vakaudit.artifacts import get_kind
from vakaudit.artifacts._base import ReadContext
from vakaudit.artifacts._jsonl import Bundle, Bundled
from vakaudit.artifacts.session_ledger import (
    BATCH_ROWS,
    ENTRIES_SCHEMA,
    ENTRY_FIELDS_SCHEMA,
    HEAD_ANCHOR_BYTES,
    EntriesBuffer,
    LedgerScanner,
    LedgerState,
    fields_table,
)
from vakaudit.errors import ScanError, UsageError
from vakaudit.findings import FINDINGS_SCHEMA, Finding, FindingCode, FindingFold, Severity
from vakaudit.ledger.policy import regrade
from vakaudit.ledger.verdict import verify_ledger
from vakaudit.outputs import check_output
from vakaudit.scan.chains7 import CHAINS_PART, read_chain_tables
from vakaudit.scan.frames7 import FRAMES_PART, read_frame_entries, segment_changes
from vakaudit.scan.manifest import MANIFEST, read_manifest
from vakaudit.scan.store7 import STORE_TABLES, read_store_tables
from vakaudit.scan.tables import (
    CORE_TABLES,
    FILES_SCHEMA,
    LEDGER_KIND,
    SESSIONS_SCHEMA,
    TURNS_SCHEMA,
    all_tables,
)
from vakaudit.scan.walk import (
    HomeFile,
    detect_layout,
    has_tenants_tree,
    iter_home_files,
    open_read_only,
    resolve_home,
)

if TYPE_CHECKING:  # pragma: no cover
    from vakaudit.scan.result import ScanResult
    from vakaudit.storage import KeyRing

MANIFEST_FORMAT = 3  # 3: findings rows have a count (folds of repeated findings)
SIDE_PART_BYTES = 1 << 20  # side files whose rows take this many Arrow bytes stream into their own part
# side tables are small and varied: zstd alone compresses them smaller than dictionary pages, ~20 % faster
SIDE_DICTIONARY = False
MERGED_PARTS = frozenset({"all.parquet", "walk.parquet", "files.parquet", FRAMES_PART})  # rewritten by every scan
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
SMALL_TASK_FILES = 256  # files bundled into one task at most
# a side file costing this much (in ledger bytes, see _COST_PER_BYTE) is a task of its own; a bundle stops
# growing here: ~16 MB of JSONL sidecars, ~128 MB of checkpoints (each task writes a part per kind)
SIDE_TASK_COST = 32 << 20
# the same for ledgers: each task writes one entries part, and a Parquet row group costs ~5 ms of zstd
# set-up over the 42 columns whatever its rows, so ledger bundles are larger; on a small home they are
# cut so that every worker gets several
LEDGER_TASK_BYTES = 64 << 20
MIN_LEDGER_TASK_BYTES = 1 << 20
INLINE_BYTES = 8 << 20  # below this much work, no process pool is started
# a task's entries part: rows become Arrow batches of ENTRIES_BATCH_ROWS, written as a row group once
# they reach ENTRIES_GROUP_ROWS rows or ENTRIES_GROUP_BYTES Arrow bytes (what a worker holds at most)
ENTRIES_BATCH_ROWS = BATCH_ROWS
ENTRIES_GROUP_ROWS = 65_536
ENTRIES_GROUP_BYTES = 32 << 20
DERIVE_APART_BYTES = 256 << 20  # from this much ledger data to derive, turns/sessions are derived in a child
# entries rows aggregated per DuckDB query when deriving turns and sessions (a single larger ledger
# is still one query): every row can open a turn, and ~100k turns fill the query's 96 MB
DERIVE_GROUP_ROWS = 65_536
# turns aggregated per DuckDB query: a query's turns are in one hash table (DuckDB cannot spill its
# ~25 aggregate states per turn; 50k turns need more than 48 MB), so a ledger of more turns is
# derived in slices of this many (rel_path, turn_no) keys, in order
DERIVE_TURN_SLICE = 16_384


@dataclass(frozen=True, slots=True)
class ScanProgress:
    """What a progress callback receives after each finished task."""

    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int


@dataclass(slots=True)
class ScanStats:
    """Counters of one scan (what it had to read, and what it could skip)."""

    files: int = 0
    home_bytes: int = 0
    files_full: int = 0
    files_appended: int = 0
    files_unchanged: int = 0
    files_not_read: int = 0
    bytes_scanned: int = 0  # bytes newly covered by readers
    bytes_read: int = 0  # bytes actually read from the home (anchors and counting included)
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


# --------------------------------------------------------------------------- tasks (worker side)


@dataclass(slots=True)
class _Item:
    rel_path: str
    kind: str
    home_scope: str
    session_id: str | None
    size: int
    mode: str  # full | append
    prev: dict[str, Any] | None = None


@dataclass(slots=True)
class _ItemResult:
    rel_path: str
    mode: str  # full | append (append downgraded to full when the anchor check failed)
    state: dict[str, Any]
    part: str | None = None
    rows: int = 0
    bytes_scanned: int = 0
    bytes_read: int = 0
    findings: list[Finding] = field(default_factory=list)
    fields: pa.Table | None = None  # entry_fields rows (a task's ledgers: all on its first ledger's result)
    table: pa.Table | None = None


class _CountingRaw(io.RawIOBase):
    """A read-only file that counts the bytes it hands out."""

    def __init__(self, fd: int, counter: list[int], closefd: bool = True) -> None:
        self._f = io.FileIO(fd, "rb", closefd=closefd)
        self._counter = counter

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int | None:
        n = self._f.readinto(b)
        if n:
            self._counter[0] += n
        return n

    def seek(self, pos: int, whence: int = 0) -> int:
        return self._f.seek(pos, whence)

    def tell(self) -> int:
        return self._f.tell()

    def fileno(self) -> int:
        return self._f.fileno()

    def close(self) -> None:
        self._f.close()
        super().close()


@dataclass(frozen=True, slots=True)
class _CountingContext(ReadContext):
    """A side file's context: every ``open()`` reads the one descriptor the engine opened (from byte 0),
    so the engine takes the file's anchor from it afterwards without opening the file again."""

    counter: list[int] = field(default_factory=lambda: [0])
    fd: int = -1

    def open(self) -> _CountingRaw:  # type: ignore[override]
        os.lseek(self.fd, 0, os.SEEK_SET)
        return _CountingRaw(self.fd, self.counter, closefd=False)


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def _violation(rel_path: str, why: str) -> Finding:
    return Finding(
        FindingCode.APPEND_ONLY_VIOLATION,
        Severity.ERROR,
        rel_path,
        f"append-only file was rewritten since the last scan ({why}); rescanned from byte 0",
    )


def _anchor_ok(f: _CountingRaw, prev: dict[str, Any]) -> str | None:
    """None when the previously scanned prefix is intact, else why not."""
    st = LedgerState.from_dict(prev)
    f.seek(0)
    head = f.read(min(st.offset, HEAD_ANCHOR_BYTES))
    if st.head_sha256 is not None and _sha(head) != st.head_sha256:
        return "its first bytes changed"
    if st.last_line_sha256 is not None and st.offset > 0:
        f.seek(st.last_line_offset)
        last = f.read(st.offset - st.last_line_offset)
        if _sha(last) != st.last_line_sha256:
            return f"the line at byte {st.last_line_offset} changed"
    return None


class _EntriesPart:
    """The ``entries`` part of one task: every ledger of the task streams its rows into it.

    Rows gather in ``buffer`` (shared by the task's scanners, converted to Arrow every
    ``ENTRIES_BATCH_ROWS``), then in record batches written as one row group once they reach
    ``ENTRIES_GROUP_ROWS`` rows or ``ENTRIES_GROUP_BYTES``: a worker's memory stays bounded
    whatever the ledgers' sizes, and a small ledger adds rows, not a Parquet file or row group.
    """

    def __init__(self, out: str, name: str) -> None:
        self.out = out
        self.name = name
        self.buffer = EntriesBuffer()
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
        if self._rows >= ENTRIES_GROUP_ROWS or self._bytes >= ENTRIES_GROUP_BYTES:
            self._write()

    def _write(self) -> None:
        if not self._rows:
            return
        if self._writer is None:
            self._writer = _entries_writer(os.path.join(self.out, self.name))
        self._writer.write_table(pa.Table.from_batches(self._batches), row_group_size=self._rows)
        self._batches, self._rows, self._bytes = [], 0, 0
        self.writes += 1

    def drop(self, rel_path: str, writes_before: int) -> None:
        """Remove the rows of a file whose scan failed after ``writes_before`` row groups were written."""
        import pyarrow.compute as pc

        self.buffer.discard_unmarked()
        if len(self.buffer):  # rows of the files before it (its own are filtered out below)
            self._batches.append(self.buffer.take())
        kept = [b.filter(pc.not_equal(b.column("rel_path"), rel_path)) for b in self._batches]
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
            keep = _rewrite_part(path, lambda t: _drop_rows(t, self._dropped))
            if not keep:
                path.unlink()
                return False
        return True


def _entries_writer(path: str | os.PathLike[str]) -> pq.ParquetWriter:
    return pq.ParquetWriter(
        path,
        ENTRIES_SCHEMA,
        compression=PARQUET_COMPRESSION,
        use_dictionary=ENTRIES_DICTIONARY_COLUMNS,
    )


def _scan_ledger(home: str, it: _Item, sink: _EntriesPart, scanned: list[LedgerScanner]) -> _ItemResult:
    writes_before = sink.writes
    try:
        return _scan_ledger_into(home, it, sink, scanned)
    except BaseException:  # its rows so far leave the shared part: no row of a file without a result
        sink.drop(it.rel_path, writes_before)
        raise


def _scan_ledger_into(home: str, it: _Item, sink: _EntriesPart, scanned: list[LedgerScanner]) -> _ItemResult:
    findings = FindingFold()  # bounded: repeats of a code in one file are counted
    counter = [0]
    path = os.path.join(home, it.rel_path)
    f = _CountingRaw(open_read_only(path), counter)
    try:
        fd = f.fileno()
        end = os.fstat(fd).st_size
        mode = it.mode
        state = LedgerState()
        if mode == "append" and it.prev is not None:
            prev = it.prev.get("ledger") or {}
            prev_state = LedgerState.from_dict(prev)
            why = None if end >= prev_state.offset else f"it shrank from {prev_state.offset} to {end} bytes"
            if why is None:
                why = _anchor_ok(f, prev)
            if why is None:
                state = prev_state
            else:
                findings.append(_violation(it.rel_path, why))
                mode = "full"
        start = state.offset
        scanner = LedgerScanner(
            it.rel_path,
            state,
            findings.append,
            session_id=it.session_id,
            buffer=sink.buffer,
            batch_rows=ENTRIES_BATCH_ROWS,
        )
        for batch in scanner.scan(f, end, still_growing=lambda: os.fstat(fd).st_size > end):
            sink.add(batch)
        scanned.append(scanner)
        # the ledger's findings: the one verdict on the whole file (an appended line can settle an
        # earlier one: it attests its predecessor's bytes, ends an abandoned branch, names a parent)
        verdict = verify_ledger(path, it.rel_path)
        counter[0] += verdict.size_bytes
        findings.extend(f for f in verdict.findings if f.code != FindingCode.LEDGER_GROWING or not scanner.growing)
        return _ItemResult(
            it.rel_path,
            mode,
            {"ledger": scanner.state.to_dict()},
            part=sink.name if scanner.rows else None,
            rows=scanner.rows,
            bytes_scanned=scanner.state.offset - start,
            bytes_read=counter[0],
            findings=findings.findings(),
        )
    finally:
        f.close()


def _scan_sidecar(home: str, out: str, gen: int, it: _Item, home_path: Path | None = None) -> _ItemResult:
    """Read one side file with its kind's reader. The file is opened once: the reader and the anchor
    for the next incremental scan (its first 4 KiB, whether it ends in LF) read the same descriptor."""
    fd = open_read_only(os.path.join(home, it.rel_path))
    try:
        return _scan_sidecar_fd(out, gen, it, fd, Path(home) if home_path is None else home_path)
    finally:
        os.close(fd)


def _side_start(
    it: _Item, fd: int, counter: list[int], findings: FindingFold
) -> tuple[str, int, int | None]:
    """``(mode, start offset, lines before it when known)`` of a side file's read: an append resumes
    where the last scan stopped (line numbers go on from the count it recorded, so the old bytes are
    not read again to count them) unless the file shrank or its first bytes changed (then it is an
    append-only violation, read from byte 0)."""
    if it.mode != "append" or it.prev is None:
        return it.mode, 0, None
    start = int(it.prev.get("offset", 0))
    size = os.fstat(fd).st_size
    why = None if size >= start else f"it shrank from {start} to {size} bytes"
    if why is None and it.prev.get("head_sha256"):
        head = os.pread(fd, min(start, HEAD_ANCHOR_BYTES), 0)
        counter[0] += len(head)
        if _sha(head) != it.prev["head_sha256"]:
            why = "its first bytes changed"
    if why is not None:
        findings.append(_violation(it.rel_path, why))
        return "full", 0, None
    lines = it.prev.get("lines")
    return "append", start, lines if isinstance(lines, int) else None


def _scan_bundled(home: Path, it: _Item, bundle: Bundle) -> _ItemResult:
    """Read one small side file into its task's bundle of the kind (its rows become Arrow later,
    together with other files', and land in the task's shared part)."""
    fd = open_read_only(os.path.join(home, it.rel_path))
    try:
        findings = FindingFold()  # bounded: repeats of a code in one file are counted
        counter = [0]
        mode, start, start_line = _side_start(it, fd, counter, findings)
        ctx = _CountingContext(
            home, it.rel_path, it.home_scope, it.session_id, start, findings.append, start_line, counter, fd
        )
        end: int | None
        try:
            rows, end = bundle.add(ctx)
        except OSError:
            raise
        except Exception as exc:  # a reader bug must not stop the scan of a whole home
            findings.append(_reader_failed(it.rel_path, it.kind, exc))
            rows, mode, start, end = 0, "full", 0, None
        if not rows or end is None:
            end = os.fstat(fd).st_size
        return _ItemResult(
            it.rel_path,
            mode,
            _anchor(fd, end, counter),
            rows=rows,
            bytes_scanned=end - start,
            bytes_read=counter[0],
            findings=findings.findings(),
        )
    finally:
        os.close(fd)


def _reader_failed(rel_path: str, kind: str, exc: Exception) -> Finding:
    return Finding(
        FindingCode.READER_FAILED,
        Severity.ERROR,
        rel_path,
        f"the {kind} reader failed: {type(exc).__name__}: {exc}",
    )


def _scan_sidecar_fd(out: str, gen: int, it: _Item, fd: int, home: Path) -> _ItemResult:
    kind = get_kind(it.kind)
    findings = FindingFold()  # bounded: repeats of a code in one file are counted
    counter = [0]
    mode, start, start_line = _side_start(it, fd, counter, findings)
    ctx = _CountingContext(
        home, it.rel_path, it.home_scope, it.session_id, start, findings.append, start_line, counter, fd
    )
    schema = kind.schema
    assert schema is not None and kind.reader is not None
    # rows that outgrow SIDE_PART_BYTES stream into the file's own Parquet part; fewer rows (most
    # files, multi-MB checkpoints included) join the task's shared part: one Parquet file costs ~1 ms
    part: str | None = None
    writer: pq.ParquetWriter | None = None
    batches: list[pa.RecordBatch] = []
    buffered = 0
    rows = 0
    max_end = start
    names = schema.names
    has_spans = "offset_bytes" in names and "size_bytes" in names
    at_offset = names.index("offset_bytes") if has_spans else -1
    at_size = names.index("size_bytes") if has_spans else -1
    # rows numbered by physical line: the last row's number is the line count for the next scan
    at_line = names.index("line_no") if has_spans and "line_no" in names else -1
    lines = start_line if start else None
    try:
        for batch in kind.reader(ctx):
            n = batch.num_rows
            if not n:
                continue
            if batch.schema is not schema and batch.schema != schema:
                batch = pa.Table.from_batches([batch]).cast(schema).combine_chunks().to_batches()[0]
            rows += n
            if has_spans:  # rows come in file order: a batch ends where its last row ends
                hi = batch.column(at_offset)[n - 1].as_py() + batch.column(at_size)[n - 1].as_py()
                if hi > max_end:
                    max_end = hi
                    if at_line >= 0:
                        lines = batch.column(at_line)[n - 1].as_py()
            if writer is not None:
                writer.write_batch(batch)
                continue
            batches.append(batch)
            buffered += batch.nbytes
            if buffered >= SIDE_PART_BYTES:
                part = f"{kind.name}/{_file_key(it.rel_path)}-{gen}.parquet"
                os.makedirs(os.path.join(out, kind.name), exist_ok=True)
                writer = pq.ParquetWriter(
                    os.path.join(out, part),
                    schema,
                    compression=PARQUET_COMPRESSION,
                    use_dictionary=SIDE_DICTIONARY,
                )
                for b in batches:
                    writer.write_batch(b)
                batches = []
    except Exception as exc:  # a reader bug must not stop the scan of a whole home
        findings.append(_reader_failed(it.rel_path, kind.name, exc))
        batches, rows = [], 0
        mode, start, lines = "full", 0, None
        if writer is not None:
            writer.close()
            writer = None
        if part is not None:
            Path(out, part).unlink(missing_ok=True)
            part = None
    finally:
        if writer is not None:
            writer.close()
    table = None if part is not None else pa.Table.from_batches(batches, schema=schema)
    end = max_end if (has_spans and rows) else os.fstat(fd).st_size
    state = _anchor(fd, end, counter)
    if at_line >= 0 and lines is not None:
        state["lines"] = lines
    return _ItemResult(
        it.rel_path,
        mode,
        state,
        part=part,
        rows=rows,
        bytes_scanned=end - start,
        bytes_read=counter[0],
        findings=findings.findings(),
        table=table,
    )


def _anchor(fd: int, end: int, counter: list[int]) -> dict[str, Any]:
    """A side file's state for the next incremental scan: scanned up to ``end``, the digest of its first
    bytes, whether the scanned part ends in LF (a file that does not is always rescanned in full)."""
    head = os.pread(fd, min(end, HEAD_ANCHOR_BYTES), 0) if end else b""
    state: dict[str, Any] = {"offset": end, "head_sha256": _sha(head)}
    counter[0] += len(head)
    if end:
        if end <= len(head):
            last = head[end - 1 : end]
        else:
            last = os.pread(fd, 1, end - 1)
            counter[0] += len(last)
        state["ends_with_lf"] = last == b"\n"
    return state


def _run_task(home: str, out: str, gen: int, task_id: int, items: list[_Item]) -> list[_ItemResult]:
    # a task makes many short-lived containers and no cycles: the cyclic collector would only walk them
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _run_task_items(home, out, gen, task_id, items)
    finally:
        if enabled:
            gc.enable()


def _run_task_items(home: str, out: str, gen: int, task_id: int, items: list[_Item]) -> list[_ItemResult]:
    out_results = []
    sink = _EntriesPart(out, f"entries/t{gen}-{task_id}.parquet")
    scanned: list[LedgerScanner] = []
    side = _SideRows(home, out, gen)
    for it in items:
        try:
            if it.kind == LEDGER_KIND:
                out_results.append(_scan_ledger(home, it, sink, scanned))
            else:
                side.scan(it, out_results)
        except OSError as exc:  # vanished or became unreadable between the walk and the read
            out_results.append(_unreadable(it, exc))
    side.finish(out_results)
    shared = side.tables
    if not sink.close():  # every row was dropped again (a ledger that failed half-way was the only one)
        for r in out_results:
            if r.part == sink.name:
                r.part, r.rows = None, 0
    if scanned:  # one entry_fields table for the task, not one per ledger
        first = next(r for r in out_results if r.rel_path == scanned[0].rel_path)
        first.fields = fields_table(scanned)
    kinds = {it.rel_path: it.kind for it in items}
    for k, tables in shared.items():
        part = f"{k}/b{gen}-{task_id}.parquet"
        table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
        os.makedirs(os.path.join(out, k), exist_ok=True)
        pq.write_table(
            table, os.path.join(out, part), compression=PARQUET_COMPRESSION, use_dictionary=SIDE_DICTIONARY
        )
        for r in out_results:
            if r.part is None and r.rows and kinds[r.rel_path] == k:
                r.part = part
    # a worker runs many tasks: hand freed Arrow buffers back so its memory does not ratchet up
    pa.default_memory_pool().release_unused()
    return out_results


# --------------------------------------------------------------------------- parent side


def _unreadable(it: _Item, exc: OSError) -> _ItemResult:
    why = f"cannot read: {exc.strerror or exc}"
    return _ItemResult(
        it.rel_path,
        "full",
        {},
        findings=[Finding(FindingCode.UNREADABLE_FILE, Severity.ERROR, it.rel_path, why)],
    )


class _SideRows:
    """The side files of a task: read alone or into their kind's bundle, their rows gathered for the
    task's shared part of each kind (in file order) unless a file streamed into its own part."""

    def __init__(self, home: str, out: str, gen: int) -> None:
        self.home, self.out, self.gen = home, out, gen
        self.home_path = Path(home)
        self.tables: dict[str, list[pa.Table]] = {}  # per kind, the rows of its shared part
        # per kind, the open bundle and the files with rows in it (their index in the results)
        self._bundles: dict[str, tuple[Bundle, list[tuple[int, _Item]]]] = {}

    def scan(self, it: _Item, results: list[_ItemResult]) -> None:
        """Read one side file, appending its result to ``results``."""
        bundled: Bundled | None = getattr(get_kind(it.kind).reader, "bundle", None)
        if bundled is not None and it.size < bundled.file_bytes:
            bundle, files = self._bundles.get(it.kind) or self._bundles.setdefault(
                it.kind, (bundled.new(), [])
            )
            r = _scan_bundled(self.home_path, it, bundle)
            if r.rows:
                files.append((len(results), it))
            results.append(r)
            if bundle.full:
                self._take(it.kind, results)
            return
        if it.kind in self._bundles:  # the bundle's rows so far come first: the part keeps file order
            self._take(it.kind, results)
        results.append(self._alone(it))

    def finish(self, results: list[_ItemResult]) -> None:
        for kind in list(self._bundles):
            self._take(kind, results)

    def _alone(self, it: _Item) -> _ItemResult:
        try:
            r = _scan_sidecar(self.home, self.out, self.gen, it, self.home_path)
        except OSError as exc:
            return _unreadable(it, exc)
        if r.table is not None and r.table.num_rows:
            self.tables.setdefault(it.kind, []).append(r.table)
        r.table = None
        return r

    def _take(self, kind: str, results: list[_ItemResult]) -> None:
        bundle, files = self._bundles.pop(kind)
        try:
            batches = bundle.batches()
        except Exception:  # a bug building many files' rows must not cost them: each is read alone
            for i, it in files:
                results[i] = self._alone(it)
            return
        if batches:
            self.tables.setdefault(kind, []).append(pa.Table.from_batches(batches, schema=bundle.schema))


def _file_key(rel_path: str) -> str:
    return hashlib.sha256(rel_path.encode("utf-8", "surrogateescape")).hexdigest()[:20]


def default_out(home: str | os.PathLike[str]) -> Path:
    """Where a scan goes when no ``--out`` is given: a per-home folder in the user cache, never in the home."""
    home = Path(home).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    tag = hashlib.sha256(str(home).encode()).hexdigest()[:12]
    out = Path(cache) / "vakaudit" / "scans" / f"{home.name or 'home'}-{tag}"
    try:
        check_output(out, home, folder=True)
    except UsageError:  # a home under the cache folder (or holding it): use the temp folder instead
        import tempfile

        out = Path(tempfile.gettempdir()) / "vakaudit-scans" / f"{home.name or 'home'}-{tag}"
        check_output(out, home, folder=True)
    return out


def _load_manifest(out: Path, home: Path, *, full: bool = False) -> dict[str, Any] | None:
    """The previous scan's manifest in ``out`` (None: start over); with ``full`` an unreadable one
    is started over too."""
    from vakaudit import __version__

    path = out / MANIFEST
    if not path.is_file():
        if out.exists() and any(out.iterdir()):
            raise ScanError(
                f"output directory {out} is not empty and holds no vakaudit scan; choose another --out"
            )
        return None
    try:
        manifest = read_manifest(out)
    except ScanError:
        if full:
            return None
        raise
    if manifest.get("home") != str(home):
        raise ScanError(
            f"{out} holds a scan of another home ({manifest.get('home')}); choose another --out for {home}"
        )
    if manifest.get("format") != MANIFEST_FORMAT or manifest.get("tool_version") != __version__:
        return None  # another vakaudit wrote it: start over
    return manifest


def _plan(
    files: list[HomeFile], prev_files: dict[str, dict[str, Any]], layout: str, full: bool
) -> tuple[list[_Item], dict[str, str], list[Finding]]:
    """What to read: (items, state per rel_path, findings). States: full/append/unchanged/not_read."""
    items: list[_Item] = []
    states: dict[str, str] = {}
    findings: list[Finding] = []
    for hf in files:
        rel = hf.rel_path
        kind = hf.kind
        if layout == "g3" or not hf.should_read or (kind.schema is None and kind.name != LEDGER_KIND):
            states[rel] = "not_read"
            continue
        prev = None if full else prev_files.get(rel)
        if prev is not None and prev.get("kind") != kind.name:
            prev = None
        append_capable = kind.name == LEDGER_KIND or kind.append_only
        if prev is not None and "state" in prev:
            same_file = prev.get("inode") == hf.inode and prev.get("device") == hf.device
            if same_file and prev.get("size") == hf.size_bytes and prev.get("mtime_ns") == hf.mtime_ns:
                states[rel] = "unchanged"
                continue
            pstate = prev["state"]
            if append_capable and not same_file:
                findings.append(_violation(rel, "it was replaced by another file (new inode)"))
            elif append_capable and hf.size_bytes < prev.get("size", 0):
                findings.append(
                    _violation(rel, f"it shrank from {prev.get('size')} to {hf.size_bytes} bytes")
                )
            elif (
                append_capable
                and not (pstate.get("ledger") or {}).get("torn")
                and pstate.get("ends_with_lf", True)
            ):
                items.append(
                    _Item(rel, kind.name, hf.home_scope, hf.session_id, hf.size_bytes, "append", pstate)
                )
                states[rel] = "append"
                continue
        items.append(_Item(rel, kind.name, hf.home_scope, hf.session_id, hf.size_bytes, "full"))
        states[rel] = "full"
    return items, states, findings


def _group(items: list[_Item], jobs: int = 1) -> list[list[_Item]]:
    """Tasks: small files bundled (ledgers with ledgers, side files with side files), a big file
    alone; the costliest first.

    A ledger bundle writes one ``entries`` part, so bundles are as large as ``LEDGER_TASK_BYTES``
    allows, but cut so that each of ``jobs`` workers gets several of them.
    """
    ledgers = sorted((i for i in items if i.kind == LEDGER_KIND), key=lambda i: i.rel_path)
    ledger_bytes = sum(i.size for i in ledgers)
    budget = max(MIN_LEDGER_TASK_BYTES, min(LEDGER_TASK_BYTES, ledger_bytes // (4 * jobs) + 1))
    tasks = _bundle(ledgers, budget)
    sides = sorted((i for i in items if i.kind != LEDGER_KIND), key=lambda i: i.rel_path)
    tasks += _bundle(sides, SIDE_TASK_COST, _item_cost)
    # longest first, so the pool's last tasks are short and both workers finish together
    tasks.sort(key=lambda task: -_task_cost(task))
    return tasks


def _item_cost(it: _Item) -> float:
    """A file's expected CPU in ledger bytes (see ``_COST_PER_BYTE``, ``_COST_PER_FILE``)."""
    return it.size * _COST_PER_BYTE.get(it.kind, _COST_PER_BYTE_DEFAULT) + _COST_PER_FILE


def _task_cost(task: list[_Item]) -> float:
    return sum(map(_item_cost, task))


def _bundle(
    items: list[_Item], budget: float, cost: Callable[[_Item], float] = lambda i: i.size
) -> list[list[_Item]]:
    """Consecutive items in tasks of at most ``SMALL_TASK_FILES`` files, each stopping once its items'
    ``cost`` reaches ``budget``; an item that alone reaches it is a task of its own."""
    tasks: list[list[_Item]] = []
    bundle: list[_Item] = []
    size = 0.0
    for it in items:
        c = cost(it)
        if c >= budget:
            tasks.append([it])
            continue
        bundle.append(it)
        size += c
        if len(bundle) >= SMALL_TASK_FILES or size >= budget:
            tasks.append(bundle)
            bundle, size = [], 0
    if bundle:
        tasks.append(bundle)
    return tasks


# CPU per byte relative to a session ledger (~2.3 ns/B with the compiled scanner), measured per task on
# a synthetic home at 10x: checkpoints are mostly base64 measured at memchr speed (0.57 ns/B), store.db
# is read page by page (0.6 ns/B); JSONL sidecars, compiled reader and Parquet writing included, take
# ~4.5 ns/B, sandbox execution logs (short telemetry rows) ~5.4 ns/B
_COST_PER_BYTE = {LEDGER_KIND: 1.0, "checkpoints": 0.25, "store_db": 0.25, "sandbox_executions": 2.3}
_COST_PER_BYTE_DEFAULT = 2.0
# and per file, in ledger bytes: opening it, its anchor, its result (a 1,300-file folder of small
# delivery jobs costs ~0.085 ms a file, about half of it whatever the file's size)
_COST_PER_FILE = 16 << 10


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
            _rewrite_part(path, lambda t, kept=kept: _keep_rows(t, kept))
    if not sweep:
        return
    for name in all_tables():
        folder = out / name
        if folder.is_dir():
            for path in folder.glob("*.parquet"):
                if path.name not in MERGED_PARTS and f"{name}/{path.name}" not in referenced:
                    path.unlink()


def _rewrite_part(path: Path, select: Callable[[pa.Table], pa.Table]) -> int:
    """Rewrite a part to the rows ``select`` keeps of it, a bounded slice at a time; the rows kept.

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
            for batch in pf.iter_batches(batch_size=ENTRIES_GROUP_ROWS):
                t = select(pa.Table.from_batches([batch]))
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
    if not path.is_file():
        return schema.empty_table()
    t = pq.read_table(path)
    return t.cast(schema) if t.schema != schema else t


def _keep_rows(table: pa.Table, keep: set[str]) -> pa.Table:
    if not table.num_rows:
        return table
    import pyarrow.compute as pc

    mask = pc.is_in(table["rel_path"], value_set=pa.array(sorted(keep), pa.string()))
    return table.filter(mask)


def _drop_rows(table: pa.Table, drop: set[str]) -> pa.Table:
    if not table.num_rows:
        return table
    import pyarrow.compute as pc

    mask = pc.is_in(table["rel_path"], value_set=pa.array(sorted(drop), pa.string()))
    return table.filter(pc.invert(mask))


def scan_home(
    home: str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    progress: Callable[[ScanProgress], None] | None = None,
    *,
    full: bool = False,
    keys: KeyRing | None = None,
) -> ScanResult:
    """Scan ``home`` (default ``$VAK_HOME``, else the platform data home) into Parquet tables in ``out``.

    A second scan into the same ``out`` is incremental unless ``full``. ``jobs``: worker processes
    (default: CPU count). ``progress`` is called after each finished task. ``keys`` unlocks a 7.0
    home's sealed objects (never written to any output).
    """
    from vakaudit import __version__

    t0 = time.perf_counter()
    home_p = resolve_home(home)
    out_p = check_output(out, home_p, folder=True) if out is not None else default_out(home_p)
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {jobs}")
    manifest = _load_manifest(out_p, home_p, full=full)
    if manifest is None and out_p.exists():
        for child in out_p.iterdir():  # stale scan by another vakaudit version: start over
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    out_p.mkdir(parents=True, exist_ok=True)
    prev_files: dict[str, dict[str, Any]] = (manifest or {}).get("files", {})
    gen = int((manifest or {}).get("generation", 0)) + 1

    g3 = has_tenants_tree(home_p)
    files = list(iter_home_files(home_p, layout="g3" if g3 else None))
    layout = "g3" if g3 else detect_layout(home_p, files)
    items, states, plan_findings = _plan(files, prev_files, layout, full)
    scan_findings: list[Finding] = list(plan_findings)
    if layout == "g3":
        scan_findings.append(
            Finding(
                FindingCode.TENANT_STORE_HOME,
                Severity.INFO,
                "tenants",
                "7.0 data-baseline home (layout g3): every file is classified by the 7.0 REGISTRY and sized; "
                "its session ledgers' frames are read into entries, its record chains into their kind tables "
                "(or chain_records) and its tenant stores into objects, refs and documents",
            )
        )

    # parts of files read from scratch (or gone) are dropped before any worker writes
    (out_p / "entries").mkdir(exist_ok=True)
    current = {hf.rel_path: hf for hf in files}
    keep_rels = {rel for rel in prev_files if rel in current and states.get(rel) in ("unchanged", "append")}
    _prune_parts(out_p, prev_files, keep_rels)

    # turns and sessions: kept for ledgers unchanged since the last scan, derived for the others
    prev_counts: dict[str, int] = (manifest or {}).get("tables", {})
    derived_before = (
        manifest is not None
        and "turns" in prev_counts
        and "sessions" in prev_counts
        and (out_p / "turns" / "all.parquet").is_file()
        and (out_p / "sessions" / "all.parquet").is_file()
    )
    # (plan, shard results) of a derivation run in the pool once the ledgers were read
    early_derive: tuple[DerivePlan, list[dict[str, int]]] | None = None

    # read
    results: list[_ItemResult] = []
    work_bytes = sum(i.size for i in items)
    n_jobs = jobs or os.cpu_count() or 1
    inline = n_jobs == 1 or work_bytes < INLINE_BYTES
    tasks = _group(items, 1 if inline else n_jobs)
    files_total = len(items)
    done_files = done_bytes = 0
    if inline or len(tasks) <= 1:
        for task_id, task in enumerate(tasks):
            res = _run_task(str(home_p), str(out_p), gen, task_id, task)
            results.extend(res)
            done_files += len(task)
            done_bytes += sum(i.size for i in task)
            if progress:
                progress(ScanProgress(done_files, files_total, done_bytes, work_bytes))
    else:
        import multiprocessing as mp

        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
        # forked workers share the parent's heap copy-on-write; frozen objects are never visited
        # by the children's garbage collector, so those pages stay shared instead of being copied
        gc.freeze()
        workers = min(n_jobs, len(tasks))
        # ledger tasks first: once they are done, turns and sessions are derived in the pool while the
        # side files are still being read. Tasks are handed out a few at a time, so the derivation
        # does not wait behind every queued side task
        queue = [t for t in enumerate(tasks) if t[1][0].kind == LEDGER_KIND]
        ledgers_left = len(queue)
        queue += [t for t in enumerate(tasks) if t[1][0].kind != LEDGER_KIND]
        queue.reverse()
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            running: dict[Any, list[_Item] | None] = {}

            def hand_out(n: int) -> None:
                while queue and len(running) < n:
                    task_id, task = queue.pop()
                    running[pool.submit(_run_task, str(home_p), str(out_p), gen, task_id, task)] = task

            hand_out(workers + 1)
            gc.unfreeze()
            while running:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in finished:
                    task = running.pop(fut)
                    if task is None:  # a share of the derivation
                        early_derive[1].append(fut.result())
                        continue
                    results.extend(fut.result())
                    done_files += len(task)
                    done_bytes += sum(i.size for i in task)
                    if progress:
                        progress(ScanProgress(done_files, files_total, done_bytes, work_bytes))
                    if task[0].kind == LEDGER_KIND:
                        ledgers_left -= 1
                        if ledgers_left == 0:
                            plan = _early_derive_plan(
                                files, results, states, prev_files, derived_before, current, n_jobs
                            )
                            if plan is not None:
                                early_derive = (plan, [])
                                groups, _, apart = plan
                                for i in range(max(apart, 1)):
                                    running[pool.submit(_derive_shard, out_p, groups, i, max(apart, 1))] = None
                hand_out(len([t for t in running.values() if t is None]) + workers + 1)
    results.sort(key=lambda r: r.rel_path)
    by_rel = {r.rel_path: r for r in results}
    rewritten = {r.rel_path for r in results if states.get(r.rel_path) == "append" and r.mode != "append"}
    if rewritten:  # an append the worker found to be a rewrite: its old rows go
        _prune_parts(
            out_p, {k: v for k, v in prev_files.items() if k in keep_rels}, keep_rels - rewritten, sweep=False
        )

    # which rows of the previous scan survive: files unchanged or only appended to
    kept = {rel for rel, st in states.items() if st == "unchanged"}
    kept |= {r.rel_path for r in results if r.mode == "append"}
    # a ledger read again gets its whole verdict again: none of its earlier findings survive
    reclassified = {r.rel_path for r in results if "ledger" in r.state}
    changed_any = bool(results) or set(prev_files) != set(current)

    # rows in per-file parts (entries, large side files), per table, after this scan
    own_part_rows: dict[str, int] = {}
    for hf in files:
        r = by_rel.get(hf.rel_path)
        prev = prev_files.get(hf.rel_path, {})
        if r is not None:
            n = (prev.get("part_rows", 0) if r.mode == "append" else 0) + (r.rows if r.part else 0)
        elif states.get(hf.rel_path) == "unchanged":
            n = prev.get("part_rows", 0)
        else:
            continue
        table_name = "entries" if hf.kind.name == LEDGER_KIND else hf.kind.name
        own_part_rows[table_name] = own_part_rows.get(table_name, 0) + n

    # per-kind tables: parts only (written by the workers); counts from the per-file rows
    tables = all_tables()
    counts: dict[str, int] = {}
    for name in tables:
        if name not in CORE_TABLES:
            counts[name] = own_part_rows.get(name, 0)
            stale = out_p / name / "all.parquet"  # written by older scans of this format
            stale.unlink(missing_ok=True)

    fields_path = out_p / "entry_fields" / "all.parquet"
    if changed_any or not fields_path.is_file():
        old = _keep_rows(_read_part(fields_path, ENTRY_FIELDS_SCHEMA), kept)
        new = [r.fields for r in results if r.fields is not None]
        t = pa.concat_tables([old, *new]) if new else old
        if new and by_rel:
            t = (
                t.group_by(["rel_path", "session_id", "kind", "field"], use_threads=False)
                .aggregate([("entry_count", "sum"), ("size_bytes", "sum")])
                .rename_columns(["rel_path", "session_id", "kind", "field", "entry_count", "size_bytes"])
                .select(ENTRY_FIELDS_SCHEMA.names)
                .cast(ENTRY_FIELDS_SCHEMA)
                .sort_by([("rel_path", "ascending"), ("kind", "ascending"), ("field", "ascending")])
            )
        _write_table(out_p, "entry_fields", t)
        counts["entry_fields"] = t.num_rows
    else:
        counts["entry_fields"] = prev_counts.get("entry_fields", 0)

    # a 7.0 home's tenant stores: read again on every scan (cheap next to the segment directories)
    for name in STORE_TABLES:
        (out_p / name / "all.parquet").unlink(missing_ok=True)
    frame_rows = 0
    if layout != "g3":
        (out_p / "entries" / FRAMES_PART).unlink(missing_ok=True)
    seg_states: dict[str, tuple[str, int, dict]] = {}  # 7.0 segment files: scan state, bytes read, manifest state
    if layout == "g3":
        store = read_store_tables(home_p, keys)
        scan_findings.extend(store.findings)
        for name, table in store.tables.items():
            _write_table(out_p, name, table)
            counts[name] = table.num_rows
        scan_findings.extend(segment_changes(files, prev_files))
        # the ledgers' frames: what the last scan verified and 7.0 keeps immutable is not read again
        frames = read_frame_entries(home_p, files, keys, prev_files={} if full else prev_files,
                                    prev_part=out_p / "entries" / FRAMES_PART)
        scan_findings.extend(frames.findings)
        seg_states = frames.segments
        if frames.table.num_rows:
            _write_table(out_p, "entries", frames.table, FRAMES_PART)
        else:
            (out_p / "entries" / FRAMES_PART).unlink(missing_ok=True)
        frame_rows = frames.table.num_rows
    for name in tables:  # a 7.0 home's record chains, into their kind tables or chain_records
        (out_p / name / CHAINS_PART).unlink(missing_ok=True)
    if layout == "g3":
        chains = read_chain_tables(home_p, files, keys)
        scan_findings.extend(chains.findings)
        for name, table in chains.tables.items():
            _write_table(out_p, name, table, CHAINS_PART)
            counts[name] = counts.get(name, 0) + table.num_rows

    # findings: the walk's are recomputed each scan; readers' survive for kept files
    walk_findings = [f for hf in files for f in hf.findings] + scan_findings
    _write_table(out_p, "findings", _findings_table(walk_findings), "walk.parquet")
    files_path = out_p / "findings" / "files.parquet"
    if changed_any or not files_path.is_file() or manifest is None:
        old = _keep_rows(_read_part(files_path, FINDINGS_SCHEMA), kept - reclassified)
        if old.num_rows:  # a "still being written" note only describes the scan that made it
            import pyarrow.compute as pc

            old = old.filter(pc.not_equal(old["code"], str(FindingCode.LEDGER_GROWING)))
        new_f = [f for r in results for f in r.findings]
        reader_findings = pa.concat_tables([old, _findings_table(new_f)])
        _write_table(out_p, "findings", reader_findings, "files.parquet")
        n_reader_findings = reader_findings.num_rows
    else:
        n_reader_findings = int((manifest or {}).get("reader_findings", 0))
    counts["findings"] = len(walk_findings) + n_reader_findings

    # files table
    stats = ScanStats(files=len(files), home_bytes=sum(hf.size_bytes for hf in files))
    file_rows = []
    for hf in files:
        st = states.get(hf.rel_path, "not_read")
        r = by_rel.get(hf.rel_path)
        if hf.rel_path in seg_states:
            st, n_read, _facts = seg_states[hf.rel_path]
            stats.bytes_read += n_read
        if r is not None:
            st = "appended" if r.mode == "append" else "full"
            stats.bytes_scanned += r.bytes_scanned
            stats.bytes_read += r.bytes_read
        stats.files_full += st == "full"
        stats.files_appended += st == "appended"
        stats.files_unchanged += st == "unchanged"
        stats.files_not_read += st == "not_read"
        file_rows.append(
            {
                "rel_path": hf.rel_path,
                "kind": hf.kind.name,
                "file_type": hf.file_type,
                "size_bytes": hf.size_bytes,
                "allocated_bytes": hf.allocated_bytes,
                "mtime": hf.mtime_ns // 1000,
                "mtime_ns": hf.mtime_ns,
                "inode": hf.inode,
                "home_scope": hf.home_scope,
                "session_id": hf.session_id,
                "readable": hf.readable,
                "scan_state": st,
                "scanned_bytes": 0 if r is None else r.bytes_scanned,
            }
        )
    ftab = pa.Table.from_pylist(file_rows, schema=FILES_SCHEMA) if file_rows else FILES_SCHEMA.empty_table()
    _write_table(out_p, "files", ftab)
    counts["files"] = ftab.num_rows

    # manifest
    new_files = {
        hf.rel_path: _manifest_entry(hf, by_rel.get(hf.rel_path), prev_files.get(hf.rel_path, {}), states)
        for hf in files
    }
    for rel, (_st, _n, facts) in seg_states.items():  # what the next scan may trust of a 7.0 segment
        if rel in new_files:
            new_files[rel]["state"] = {"frames7": facts}

    # turns and sessions
    ledgers = {rel: e for rel, e in new_files.items() if e["kind"] == LEDGER_KIND and e.get("parts")}
    plan = _derive_plan(ledgers, states, prev_files, derived_before, current, n_jobs)
    if plan is None:
        counts["turns"] = prev_counts["turns"]
        counts["sessions"] = prev_counts["sessions"]
    elif early_derive is not None and early_derive[0] == plan and len(early_derive[1]) == max(plan[2], 1):
        counts.update(_merge_derived(out_p, early_derive[1], plan[1]))
    else:
        groups, carry, apart = plan
        counts.update(_derive_turns_sessions(out_p, groups, carry, apart))

    counts["entries"] = own_part_rows.get("entries", 0) + frame_rows
    counts = {name: counts.get(name, 0) for name in tables}
    stats.elapsed_s = round(time.perf_counter() - t0, 3)
    scanned_at = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    doc = {
        "format": MANIFEST_FORMAT,
        "tool_version": __version__,
        "home": str(home_p),
        "layout": layout,
        "scanned_at": scanned_at,
        "generation": gen,
        "stats": stats.to_dict(),
        "tables": counts,
        "reader_findings": n_reader_findings,
        "files": new_files,
    }
    tmp = out_p / f".{MANIFEST}.tmp"
    tmp.write_bytes(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2))
    os.replace(tmp, out_p / MANIFEST)
    from vakaudit.scan.result import ScanResult

    return ScanResult(home_p, out_p, layout, scanned_at, __version__, stats, counts)


def _findings_table(findings: Iterable[Finding]) -> pa.Table:
    """Findings as rows, graded by the one severity policy ``verify`` grades by (its default)."""
    rows = [regrade(f).to_dict() for f in findings]
    return pa.Table.from_pylist(rows, schema=FINDINGS_SCHEMA) if rows else FINDINGS_SCHEMA.empty_table()


_TURNS_SQL = """
SELECT rel_path, any_value(session_id) AS session_id, any_value(agent_id) AS agent_id,
       any_value(workspace_key) AS workspace_key, turn_no,
       max(CASE WHEN is_directive THEN id END) AS turn_id,
       min(CASE WHEN is_directive THEN ts_at END) AS started_at, max(ts_at) AS ended_at,
       count(*) AS entry_count, sum(size_bytes) AS size_bytes,
       coalesce(sum(CASE WHEN kind = 'turn_capabilities_bound' THEN size_bytes END), 0) AS binding_bytes,
       count(*) FILTER (WHERE kind = 'turn_capabilities_bound') AS binding_count,
       count(*) FILTER (WHERE kind = 'message') AS message_count,
       count(*) FILTER (WHERE role = 'assistant') AS assistant_count,
       count(*) FILTER (WHERE control IS NOT NULL) AS control_count,
       count(*) FILTER (WHERE kind = 'receipt') AS receipt_count,
       count(*) FILTER (WHERE kind = 'activity') AS activity_count,
       coalesce(sum(tool_use_count), 0) AS tool_use_count,
       coalesce(sum(tool_result_count), 0) AS tool_result_count,
       coalesce(sum(tool_result_bytes), 0) AS tool_result_bytes,
       coalesce(sum(input_tokens), 0) AS input_tokens,
       coalesce(sum(output_tokens), 0) AS output_tokens,
       coalesce(sum(cache_read_input_tokens), 0) AS cache_read_input_tokens,
       coalesce(sum(cache_creation_input_tokens), 0) AS cache_creation_input_tokens,
       arg_max(model, line_no) FILTER (WHERE role = 'assistant') AS model,
       count(*) FILTER (WHERE chain_ok = false) AS chain_broken_count
FROM entries WHERE turn_no IS NOT NULL {slice}
GROUP BY rel_path, turn_no ORDER BY rel_path, turn_no
"""

# every DERIVE_TURN_SLICE-th (rel_path, turn_no) key in order: the upper bounds of the turns slices
_TURN_BOUNDS_SQL = """
SELECT rel_path, turn_no FROM (SELECT DISTINCT rel_path, turn_no FROM entries WHERE turn_no IS NOT NULL)
QUALIFY row_number() OVER (ORDER BY rel_path, turn_no) % $slice = 0 ORDER BY rel_path, turn_no
"""
_AFTER = "(rel_path > ${0}r OR (rel_path = ${0}r AND turn_no > ${0}t))"
_UP_TO = "(rel_path < ${0}r OR (rel_path = ${0}r AND turn_no <= ${0}t))"


def _turn_slices(con: Any) -> list[tuple[str, dict[str, Any]]]:
    """The turns query of the current ``entries`` view in slices of at most ``DERIVE_TURN_SLICE``
    turns, in (rel_path, turn_no) order: (SQL, its parameters) each."""
    bounds = con.execute(_TURN_BOUNDS_SQL, {"slice": DERIVE_TURN_SLICE}).fetchall()
    out = []
    for lo, hi in zip([None, *bounds], [*bounds, None], strict=True):
        cond, params = [], {}
        if lo is not None:
            cond.append(_AFTER.format("lo"))
            params.update(lor=lo[0], lot=lo[1])
        if hi is not None:
            cond.append(_UP_TO.format("hi"))
            params.update(hir=hi[0], hit=hi[1])
        out.append((_TURNS_SQL.format(slice="".join(" AND " + c for c in cond)), params))
    return out


_SESSIONS_SQL = """
SELECT rel_path, any_value(session_id) AS session_id, any_value(agent_id) AS agent_id,
       any_value(workspace_key) AS workspace_key,
       arg_min(app_version, line_no) FILTER (WHERE kind = 'header') AS app_version,
       arg_min(provider, line_no) FILTER (WHERE kind = 'header') AS provider,
       arg_min(model, line_no) FILTER (WHERE kind = 'header') AS model,
       min(ts_at) AS first_at, max(ts_at) AS last_at,
       count(*) AS entry_count, coalesce(max(turn_no) FILTER (WHERE is_directive), 0) AS turn_count,
       sum(size_bytes) AS size_bytes,
       coalesce(sum(CASE WHEN kind = 'turn_capabilities_bound' THEN size_bytes END), 0) AS binding_bytes,
       count(*) FILTER (WHERE chain_status = 'unparseable') AS unparseable_count,
       count(*) FILTER (WHERE chain_status = 'broken') AS chain_broken_count,
       count(*) FILTER (WHERE chain_status = 'unchained') AS unchained_count,
       count(*) FILTER (WHERE chain_status IN ('broken', 'unparseable')) = 0 AS chain_ok,
       coalesce(sum(input_tokens), 0) AS input_tokens,
       coalesce(sum(output_tokens), 0) AS output_tokens,
       coalesce(sum(cache_read_input_tokens), 0) AS cache_read_input_tokens,
       coalesce(sum(cache_creation_input_tokens), 0) AS cache_creation_input_tokens
FROM entries GROUP BY rel_path ORDER BY rel_path
"""


def _derive_groups(
    derive: dict[str, list[str]], rows: dict[str, int], ledgers: dict[str, dict[str, Any]]
) -> list[tuple[list[str], list[str] | None]]:
    """The DuckDB queries deriving ``turns`` and ``sessions`` of the ledgers in ``derive`` (rel_path ->
    its parts): (parts to read, ledgers to keep of them, or None when the parts hold no other rows).

    Every part of a ledger is read by the query of that ledger, so its aggregates are final. Ledgers
    linked by a shared part go to the same query when they fit in ``DERIVE_GROUP_ROWS`` rows with
    the others of the query; a larger set linked that way is cut by ledger (its shared parts are
    then read by more than one query, each keeping its own ledgers' rows). ``ledgers`` is every
    ledger of the manifest, for which other files a part holds.
    """
    root = {rel: rel for rel in derive}

    def find(rel: str) -> str:
        while root[rel] != rel:
            root[rel] = root[root[rel]]
            rel = root[rel]
        return rel

    first: dict[str, str] = {}
    for rel in sorted(derive):
        for part in derive[rel]:
            a, b = find(rel), find(first.setdefault(part, rel))
            if a != b:
                root[max(a, b)] = min(a, b)
    linked: dict[str, list[str]] = {}
    for rel in sorted(derive):
        linked.setdefault(find(rel), []).append(rel)

    chunks: list[list[str]] = []
    cur: list[str] = []
    cur_rows = 0
    for comp in linked.values():
        if sum(rows[rel] for rel in comp) > DERIVE_GROUP_ROWS:
            # too many rows for one query: cut by ledger, the ledgers of a part side by side
            pieces = [[rel] for rel in sorted(comp, key=lambda rel: (derive[rel], rel))]
        else:
            pieces = [comp]
        for piece in pieces:
            n = sum(rows[rel] for rel in piece)
            if cur and cur_rows + n > DERIVE_GROUP_ROWS:
                chunks.append(cur)
                cur, cur_rows = [], 0
            cur.extend(piece)
            cur_rows += n
    if cur:
        chunks.append(cur)

    holders: dict[str, set[str]] = {}
    for rel, e in ledgers.items():
        for part in e.get("parts", []):
            holders.setdefault(part, set()).add(rel)
    groups: list[tuple[list[str], list[str] | None]] = []
    for chunk in chunks:
        parts = sorted({part for rel in chunk for part in derive[rel]})
        own = set(chunk)
        mixed = any(holders.get(part, set()) - own for part in parts)
        groups.append((parts, sorted(chunk) if mixed else None))
    return groups


def _manifest_entry(
    hf: HomeFile, r: _ItemResult | None, prev: dict[str, Any], states: dict[str, str]
) -> dict[str, Any]:
    """A file's manifest entry after this scan: identity, reader state, parts and their rows."""
    entry: dict[str, Any] = {
        "kind": hf.kind.name,
        "inode": hf.inode,
        "device": hf.device,
        "size": hf.size_bytes,
        "mtime_ns": hf.mtime_ns,
    }
    if r is not None and r.state:
        entry["state"] = r.state
        parts = list(prev.get("parts", [])) if r.mode == "append" else []
        if r.part:
            parts.append(r.part)
        entry["parts"] = parts
        entry["part_rows"] = (prev.get("part_rows", 0) if r.mode == "append" else 0) + (r.rows if r.part else 0)
        if r.state.get("ledger", {}).get("offset") is not None and r.state["ledger"]["offset"] != hf.size_bytes:
            # a write in flight: the next scan must look again even if size/mtime stay the same
            entry["size"] = r.state["ledger"]["offset"]
    elif states.get(hf.rel_path) == "unchanged":
        entry["state"] = prev.get("state", {})
        entry["parts"] = prev.get("parts", [])
        entry["part_rows"] = prev.get("part_rows", 0)
    return entry


# (groups, carry, apart) of a turns/sessions derivation: see _derive_plan
DerivePlan = tuple[list[tuple[list[str], list[str] | None]], set[str], int]


def _derive_plan(
    ledgers: dict[str, dict[str, Any]],
    states: dict[str, str],
    prev_files: dict[str, dict[str, Any]],
    derived_before: bool,
    current: dict[str, HomeFile],
    n_jobs: int,
) -> DerivePlan | None:
    """``(groups, carry, apart)`` of the turns/sessions derivation over the manifest entries of the
    ledgers that have parts, or None when the previous tables stand as they are: the rows of the
    ledgers in ``carry`` (unchanged since a scan that derived them) are kept, the others derived by
    ``groups`` (:func:`_derive_groups`), in ``apart`` processes (0: here)."""
    carry = {rel for rel in ledgers if states.get(rel) == "unchanged"} if derived_before else set()
    derive = {rel: e["parts"] for rel, e in ledgers.items() if rel not in carry}
    before = {rel for rel, e in prev_files.items() if e.get("kind") == LEDGER_KIND and e.get("parts")}
    if derived_before and not derive and carry == before:
        return None
    groups = _derive_groups(derive, {rel: ledgers[rel]["part_rows"] for rel in derive}, ledgers)
    derive_bytes = sum(current[rel].size_bytes for rel in derive)
    # DuckDB's working memory goes to fresh processes, not to the parent's high-water mark
    apart = min(n_jobs, 4, len(groups)) if n_jobs > 1 and derive_bytes >= DERIVE_APART_BYTES else 0
    return groups, carry, apart


def _early_derive_plan(
    files: list[HomeFile],
    results: list[_ItemResult],
    states: dict[str, str],
    prev_files: dict[str, dict[str, Any]],
    derived_before: bool,
    current: dict[str, HomeFile],
    n_jobs: int,
) -> DerivePlan | None:
    """The derivation plan once every ledger was read (side files may still be read), or None when
    there is nothing to derive or it must wait: a ledger found rewritten has old rows still to prune."""
    by_rel = {r.rel_path: r for r in results}
    if any(r.mode != "append" and states.get(r.rel_path) == "append" for r in results):
        return None
    ledgers = {}
    for hf in files:
        if hf.kind.name == LEDGER_KIND:
            e = _manifest_entry(hf, by_rel.get(hf.rel_path), prev_files.get(hf.rel_path, {}), states)
            if e.get("parts"):
                ledgers[hf.rel_path] = e
    return _derive_plan(ledgers, states, prev_files, derived_before, current, n_jobs)


def _derive_turns_sessions(
    out: Path, groups: list[tuple[list[str], list[str] | None]], carry: set[str], jobs: int = 0
) -> dict[str, int]:
    """``turns`` and ``sessions``: the previous rows of the ledgers in ``carry``, then those derived
    by ``groups`` (see :func:`_derive_groups`); in ``jobs`` fresh processes if any (each over a
    contiguous share of the groups, concatenated in order: the rows of one sequential pass), else here."""
    if jobs:
        import multiprocessing as mp

        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futs = [pool.submit(_derive_shard, out, groups, i, jobs) for i in range(jobs)]
            results = [f.result() for f in futs]
    else:
        results = [_derive_shard(out, groups, 0, 1)]
    return _merge_derived(out, results, carry)


def _merge_derived(out: Path, results: list[dict[str, int]], carry: set[str]) -> dict[str, int]:
    """The final ``turns`` and ``sessions`` tables: the carried rows, then each shard's ``.derive-<i>.tmp``."""
    counts = {name: sum(r[name] for r in results) for name in ("turns", "sessions")}
    for name, schema in (("turns", TURNS_SCHEMA), ("sessions", SESSIONS_SCHEMA)):
        final = out / name / "all.parquet"
        tmp = [out / name / f".derive-{i}.tmp" for i in range(len(results))]
        if len(tmp) == 1 and not carry:
            os.replace(tmp[0], final)
            continue
        with pq.ParquetWriter(out / name / ".all.parquet.tmp", schema, compression=PARQUET_COMPRESSION) as w:
            if carry:
                pf = pq.ParquetFile(final)
                for batch in pf.iter_batches(batch_size=ENTRIES_GROUP_ROWS):
                    t = _keep_rows(pa.Table.from_batches([batch]), carry).cast(schema)
                    w.write_table(t)
                    counts[name] += t.num_rows
                pf.close()
            for path in tmp:
                w.write_table(pq.read_table(path, schema=schema))
        for path in tmp:
            path.unlink()
        os.replace(out / name / ".all.parquet.tmp", final)
    return counts


def _derive_shard(
    out: Path, groups: list[tuple[list[str], list[str] | None]], shard: int, shards: int
) -> dict[str, int]:
    """Share ``shard`` of ``shards`` (contiguous) of the derivation ``groups``, written to
    ``<table>/.derive-<shard>.tmp``."""
    import duckdb

    groups = groups[len(groups) * shard // shards : len(groups) * (shard + 1) // shards]
    specs = (("turns", _TURNS_SQL, TURNS_SCHEMA), ("sessions", _SESSIONS_SQL, SESSIONS_SCHEMA))
    counts = {name: 0 for name, _, _ in specs}
    writers = {}
    for name, _, schema in specs:
        (out / name).mkdir(parents=True, exist_ok=True)
        writers[name] = pq.ParquetWriter(
            out / name / f".derive-{shard}.tmp", schema, compression=PARQUET_COMPRESSION
        )
    spill = tempfile.mkdtemp(prefix="vakaudit-derive-")  # outside the home: DuckDB may spill sorts here
    con = duckdb.connect(
        config={"threads": 1, "memory_limit": "96MB", "preserve_insertion_order": False, "temp_directory": spill}
    )
    try:
        for parts, only in groups:
            paths = [out / p for p in parts if (out / p).is_file()]  # (a part deleted by hand: rows gone)
            if not paths:
                continue
            files = ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths)
            view = f"CREATE OR REPLACE VIEW entries AS SELECT * FROM read_parquet([{files}])"
            if only is not None:  # the parts hold other ledgers' rows too
                con.register("derive_rel_paths", pa.table({"rel_path": pa.array(only, pa.string())}))
                view += " WHERE rel_path IN (SELECT rel_path FROM derive_rel_paths)"
            con.execute(view)
            for name, sql, schema in specs:
                queries = _turn_slices(con) if name == "turns" else [(sql, {})]
                for query, params in queries:
                    t = con.sql(query, params=params or None).to_arrow_table().select(schema.names).cast(schema)
                    writers[name].write_table(t)
                    counts[name] += t.num_rows
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)
        for w in writers.values():
            w.close()
    return counts
