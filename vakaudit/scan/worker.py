"""Reading the items of one task (in a pool worker, or in the scanning process).

A file of a kind with a resumable reader (a session ledger) streams its rows into the task's one
part of its kind's table (``entries``) and gets its findings from the kind's verdict, in one pass; a
side file is read by its kind's reader, into its kind's bundle or alone; every file is opened once,
read-only, and its anchor for the next incremental scan taken from the same descriptor.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from vakaudit.artifacts import get_kind
from vakaudit.artifacts._base import ReadContext, ResumableReader, ResumeState, StreamScanner
from vakaudit.artifacts._rowspec import Bundle, Bundled
from vakaudit.artifacts.session_ledger import BATCH_ROWS, HEAD_ANCHOR_BYTES
from vakaudit.findings import Finding, FindingCode, FindingFold, Severity
from vakaudit.ledger.records import grew_past
from vakaudit.names import shown
from vakaudit.scan.manifest import ScanState, _ItemResult
from vakaudit.scan.parts import PARQUET_COMPRESSION, SIDE_DICTIONARY, _EntriesPart
from vakaudit.scan.plan import _file_key, _Item, _violation
from vakaudit.scan.walk import open_read_only

SIDE_PART_BYTES = 1 << 20  # side files whose rows take this many Arrow bytes stream into their own part
# a task's entries part: rows become Arrow batches of ENTRIES_BATCH_ROWS, written as a row group once
# they reach ENTRIES_GROUP_ROWS rows or ENTRIES_GROUP_BYTES Arrow bytes (what a worker holds at most)
ENTRIES_BATCH_ROWS = BATCH_ROWS


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


def _anchor_ok(f: _CountingRaw, st: ResumeState) -> str | None:
    """None when the previously scanned prefix is intact, else why not."""
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


def _scan_resumable(
    home: str, it: _Item, spec: ResumableReader, sink: _EntriesPart, scanned: list[StreamScanner]
) -> _ItemResult:
    writes_before = sink.writes
    try:
        return _scan_resumable_into(home, it, spec, sink, scanned)
    except BaseException:  # its rows so far leave the shared part: no row of a file without a result
        sink.drop(it.rel_path, writes_before)
        raise


def _scan_resumable_into(
    home: str, it: _Item, spec: ResumableReader, sink: _EntriesPart, scanned: list[StreamScanner]
) -> _ItemResult:
    findings = FindingFold()  # bounded: repeats of a code in one file are counted
    counter = [0]
    path = os.path.join(home, it.rel_path)
    f = _CountingRaw(open_read_only(path), counter)
    try:
        fd = f.fileno()
        end = os.fstat(fd).st_size
        mode = it.mode
        state = spec.state({})
        if mode == ScanState.APPEND and it.prev is not None:
            prev_state = spec.state(it.prev.get(spec.state_key) or {})
            why = None if end >= prev_state.offset else f"it shrank from {prev_state.offset} to {end} bytes"
            if why is None:
                why = _anchor_ok(f, prev_state)
            if why is None:
                state = prev_state
            else:
                findings.append(_violation(it.rel_path, why))
                mode = ScanState.FULL
        start = state.offset
        scanner = spec.scanner(
            shown(it.rel_path),
            state,
            findings.append,
            session_id=it.session_id,
            buffer=sink.buffer,
            batch_rows=ENTRIES_BATCH_ROWS,
        )
        # one pass: the same records make the rows (from the resume offset on) and the verdict on the
        # whole file (an appended ledger line can settle an earlier one: it attests its predecessor's
        # bytes, ends an abandoned branch, names a parent)
        verdict = spec.verdict(it.rel_path)

        def read(n: int) -> bytes:
            data = os.read(fd, n)
            counter[0] += len(data)
            return data

        os.lseek(fd, 0, os.SEEK_SET)
        reader = scanner.reader(read, end, still_growing=lambda: os.fstat(fd).st_size > end,
                                tail_grew=lambda: grew_past(fd, end))  # fmt: skip
        for item in reader:
            verdict.take(item)
            batch = scanner.take(item)
            if batch is not None:
                sink.add(batch)
        for batch in scanner.finish():
            sink.add(batch)
        scanned.append(scanner)
        findings.extend(verdict.finish(scanner.line_count).findings)
        return _ItemResult(
            it.rel_path,
            mode,
            {spec.state_key: scanner.state.to_dict()},
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


def _side_start(it: _Item, fd: int, counter: list[int], findings: FindingFold) -> tuple[str, int, int | None]:
    """``(mode, start offset, lines before it when known)`` of a side file's read: an append resumes
    where the last scan stopped (line numbers go on from the count it recorded, so the old bytes are
    not read again to count them) unless the file shrank or its first bytes changed (then it is an
    append-only violation, read from byte 0)."""
    if it.mode != ScanState.APPEND or it.prev is None:
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
        return ScanState.FULL, 0, None
    lines = it.prev.get("lines")
    return ScanState.APPEND, start, lines if isinstance(lines, int) else None


def _scan_bundled(home: Path, it: _Item, bundle: Bundle) -> _ItemResult:
    """Read one small side file into its task's bundle of the kind (its rows become Arrow later,
    together with other files', and land in the task's shared part)."""
    fd = open_read_only(os.path.join(home, it.rel_path))
    try:
        findings = FindingFold()  # bounded: repeats of a code in one file are counted
        counter = [0]
        mode, start, start_line = _side_start(it, fd, counter, findings)
        ctx = _CountingContext(
            home, shown(it.rel_path), it.home_scope, it.session_id, start, findings.append, start_line,
            it.rel_path, counter, fd,
        )
        end: int | None
        try:
            rows, end = bundle.add(ctx)
        except OSError:
            raise
        except Exception as exc:  # a reader bug must not stop the scan of a whole home
            findings.append(_reader_failed(it.rel_path, it.kind, exc))
            rows, mode, start, end = 0, ScanState.FULL, 0, None
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


def _named(f: Finding, rel_path: str) -> Finding:
    """A reader's finding on ``rel_path`` under the walk's name (readers see its escaped form), so
    the findings table keeps the bytes of a name that is not UTF-8."""
    if f.rel_path != rel_path and f.rel_path == shown(rel_path):
        return dataclasses.replace(f, rel_path=rel_path)
    return f


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
        home, shown(it.rel_path), it.home_scope, it.session_id, start, findings.append, start_line,
        it.rel_path, counter, fd,
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
                part = f"{kind.table_name}/{_file_key(it.rel_path)}-{gen}.parquet"
                os.makedirs(os.path.join(out, kind.table_name), exist_ok=True)
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
        mode, start, lines = ScanState.FULL, 0, None
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
    sinks: dict[str, _EntriesPart] = {}  # per table, the part its resumable kinds' rows stream into
    scanned: dict[str, list[StreamScanner]] = {}  # per resumable kind, the files it read
    side = _SideRows(home, out, gen)
    for it in items:
        kind = get_kind(it.kind)
        try:
            if kind.resumable is None:
                side.scan(it, out_results)
                continue
            sink = sinks.get(kind.table_name)
            if sink is None:
                name = f"{kind.table_name}/t{gen}-{task_id}.parquet"
                sink = sinks[kind.table_name] = _EntriesPart(out, name, schema=kind.schema,
                                                             buffer=kind.resumable.buffer())
            out_results.append(_scan_resumable(home, it, kind.resumable, sink, scanned.setdefault(kind.name, [])))
        except OSError as exc:  # vanished or became unreadable between the walk and the read
            out_results.append(_unreadable(it, exc))
    side.finish(out_results)
    shared = side.tables
    for sink in sinks.values():
        if not sink.close():  # every row was dropped again (a file that failed half-way was the only one)
            for r in out_results:
                if r.part == sink.name:
                    r.part, r.rows = None, 0
    for name, scanners in scanned.items():  # one entry_fields table for the task, not one per file
        fields = get_kind(name).resumable.fields
        if scanners and fields is not None:
            first = next(r for r in out_results if shown(r.rel_path) == scanners[0].rel_path)
            first.fields = fields(scanners)
    table_of = {it.rel_path: get_kind(it.kind).table_name for it in items}
    for k, tables in shared.items():
        part = f"{k}/b{gen}-{task_id}.parquet"
        table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
        os.makedirs(os.path.join(out, k), exist_ok=True)
        pq.write_table(
            table, os.path.join(out, part), compression=PARQUET_COMPRESSION, use_dictionary=SIDE_DICTIONARY
        )
        for r in out_results:
            if r.part is None and r.rows and table_of[r.rel_path] == k:
                r.part = part
    # a worker runs many tasks: hand freed Arrow buffers back so its memory does not ratchet up
    pa.default_memory_pool().release_unused()
    return out_results


def _unreadable(it: _Item, exc: OSError) -> _ItemResult:
    why = f"cannot read: {exc.strerror or exc}"
    return _ItemResult(
        it.rel_path,
        ScanState.FULL,
        {},
        findings=[Finding(FindingCode.UNREADABLE_FILE, Severity.ERROR, it.rel_path, why)],
    )


class _SideRows:
    """The side files of a task: read alone or into their kind's bundle, their rows gathered for the
    task's shared part of each table (in file order) unless a file streamed into its own part."""

    def __init__(self, home: str, out: str, gen: int) -> None:
        self.home, self.out, self.gen = home, out, gen
        self.home_path = Path(home)
        self.tables: dict[str, list[pa.Table]] = {}  # per table, the rows of its shared part
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
            self.tables.setdefault(get_kind(it.kind).table_name, []).append(r.table)
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
            self.tables.setdefault(get_kind(kind).table_name, []).append(
                pa.Table.from_batches(batches, schema=bundle.schema)
            )
