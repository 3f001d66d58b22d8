"""The scan engine: walk a home, read every file with its kind's reader, write Parquet + manifest.

Read-only, incremental, parallel, bounded:

- nothing in the home is written, locked, truncated or repaired; files are opened read-only
  (``O_NOFOLLOW``, ``O_NOATIME`` when allowed) and the output directory may not lie inside the home;
- a second scan into the same output directory re-reads only what changed: an unchanged file
  (inode, size, mtime) is not reopened; an append-only file that grew is read from where the last
  scan stopped, after checking its head (first 4 KiB) and its last scanned line are unchanged; a
  file that shrank or whose scanned prefix changed is fully rescanned and reported
  (``append_only_violation``);
- files are spread over a process pool; each session ledger streams record batches into its own
  Parquet part files, so memory stays flat as the home grows. One ledger is one task: the chain
  needs the previous line's digest, so a single ledger is not split across processes;
- side-ledger rows (small) travel back to the parent and are written as one Parquet file per kind.
"""

from __future__ import annotations

import gc
import hashlib
import io
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from vakaudit.artifacts import get_kind
from vakaudit.artifacts._base import ReadContext
from vakaudit.artifacts.session_ledger import (
    ENTRY_FIELDS_SCHEMA,
    HEAD_ANCHOR_BYTES,
    LedgerScanner,
    LedgerState,
)
from vakaudit.errors import ScanError, UsageError
from vakaudit.findings import FINDINGS_SCHEMA, Finding, FindingCode, Severity
from vakaudit.scan.tables import (
    CORE_TABLES,
    FILES_SCHEMA,
    LEDGER_KIND,
    SESSIONS_SCHEMA,
    TURNS_SCHEMA,
    all_tables,
)
from vakaudit.scan.walk import HomeFile, detect_layout, iter_home_files, open_read_only, resolve_home

if TYPE_CHECKING:  # pragma: no cover
    from vakaudit.scan.result import ScanResult

MANIFEST = "manifest.json"
MANIFEST_FORMAT = 2
SIDE_PART_BYTES = 1 << 20  # side files whose rows take this many Arrow bytes stream into their own part
# side tables are small and varied: zstd alone compresses them smaller than dictionary pages, ~20 % faster
SIDE_DICTIONARY = False
MERGED_PARTS = frozenset({"all.parquet", "walk.parquet", "files.parquet"})
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
SMALL_TASK_FILES = 256
SMALL_TASK_BYTES = 16 << 20
INLINE_BYTES = 8 << 20
DERIVE_APART_BYTES = 256 << 20  # from this much ledger data, turns/sessions are derived in a child
DERIVE_GROUP_FILES = 200  # ledgers aggregated per DuckDB query when deriving turns and sessions  # below this much work, no process pool is started


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
    fields: pa.Table | None = None
    table: pa.Table | None = None


class _CountingRaw(io.RawIOBase):
    """A read-only file that counts the bytes it hands out."""

    def __init__(self, fd: int, counter: list[int]) -> None:
        self._f = io.FileIO(fd, "rb", closefd=True)
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
    counter: list[int] = field(default_factory=lambda: [0])

    def open(self) -> _CountingRaw:  # type: ignore[override]
        return _CountingRaw(open_read_only(self.path), self.counter)


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


def _scan_ledger(home: str, out: str, gen: int, it: _Item) -> _ItemResult:
    findings: list[Finding] = []
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
        scanner = LedgerScanner(it.rel_path, state, findings.append, session_id=it.session_id)
        part = None
        writer = None
        try:
            for batch in scanner.scan(f, end, still_growing=lambda: os.fstat(fd).st_size > end):
                if writer is None:
                    part = f"entries/{_file_key(it.rel_path)}-{gen}.parquet"
                    writer = pq.ParquetWriter(
                        os.path.join(out, part),
                        batch.schema,
                        compression=PARQUET_COMPRESSION,
                        use_dictionary=ENTRIES_DICTIONARY_COLUMNS,
                    )
                writer.write_batch(batch)
        finally:
            if writer is not None:
                writer.close()
        return _ItemResult(
            it.rel_path,
            mode,
            {"ledger": scanner.state.to_dict()},
            part=part,
            rows=scanner.rows,
            bytes_scanned=scanner.state.offset - start,
            bytes_read=counter[0],
            findings=findings,
            fields=scanner.fields_table(),
        )
    finally:
        f.close()


def _scan_sidecar(home: str, out: str, gen: int, it: _Item) -> _ItemResult:
    kind = get_kind(it.kind)
    findings: list[Finding] = []
    mode = it.mode
    start = 0
    counter = [0]
    path = os.path.join(home, it.rel_path)
    if mode == "append" and it.prev is not None:
        start = int(it.prev.get("offset", 0))
        fd = open_read_only(path)
        with _CountingRaw(fd, counter) as f:
            size = os.fstat(f.fileno()).st_size
            why = None if size >= start else f"it shrank from {start} to {size} bytes"
            if why is None and it.prev.get("head_sha256"):
                head = f.read(min(start, HEAD_ANCHOR_BYTES))
                if _sha(head) != it.prev["head_sha256"]:
                    why = "its first bytes changed"
        if why is not None:
            findings.append(_violation(it.rel_path, why))
            mode, start = "full", 0
    ctx = _CountingContext(
        home=Path(home),
        rel_path=it.rel_path,
        home_scope=it.home_scope,
        session_id=it.session_id,
        start_offset=start,
        emit=findings.append,
        counter=counter,
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
    has_spans = "offset_bytes" in schema.names and "size_bytes" in schema.names
    try:
        for batch in kind.reader(ctx):
            if not batch.num_rows:
                continue
            if batch.schema != schema:
                batch = pa.Table.from_batches([batch]).cast(schema).combine_chunks().to_batches()[0]
            rows += batch.num_rows
            if has_spans:
                import pyarrow.compute as pc

                hi = pc.max(pc.add(batch.column("offset_bytes"), batch.column("size_bytes"))).as_py()
                max_end = max(max_end, hi or 0)
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
        findings.append(
            Finding(
                FindingCode.READER_FAILED,
                Severity.ERROR,
                it.rel_path,
                f"the {kind.name} reader failed: {type(exc).__name__}: {exc}",
            )
        )
        batches, rows = [], 0
        mode, start = "full", 0
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
    end = max_end if (has_spans and rows) else os.stat(path, follow_symlinks=False).st_size
    state: dict[str, Any] = {"offset": end}
    # anchor for the next incremental scan; a file not ending in LF is always rescanned in full
    fd = open_read_only(path)
    with _CountingRaw(fd, counter) as f:
        head = f.read(min(end, HEAD_ANCHOR_BYTES))
        state["head_sha256"] = _sha(head)
        if end:
            f.seek(end - 1)
            state["ends_with_lf"] = f.read(1) == b"\n"
    return _ItemResult(
        it.rel_path,
        mode,
        state,
        part=part,
        rows=rows,
        bytes_scanned=end - start,
        bytes_read=counter[0],
        findings=findings,
        table=table,
    )


def _run_task(home: str, out: str, gen: int, task_id: int, items: list[_Item]) -> list[_ItemResult]:
    out_results = []
    for it in items:
        try:
            if it.kind == LEDGER_KIND:
                out_results.append(_scan_ledger(home, out, gen, it))
            else:
                out_results.append(_scan_sidecar(home, out, gen, it))
        except OSError as exc:  # vanished or became unreadable between the walk and the read
            out_results.append(
                _ItemResult(
                    it.rel_path,
                    "full",
                    {},
                    findings=[
                        Finding(
                            FindingCode.UNREADABLE_FILE,
                            Severity.ERROR,
                            it.rel_path,
                            f"cannot read: {exc.strerror or exc}",
                        )
                    ],
                )
            )
    # small side files: one Parquet part per kind per task, written here, so no rows travel back
    by_kind: dict[str, list[_ItemResult]] = {}
    kinds = {it.rel_path: it.kind for it in items}
    for r in out_results:
        if r.table is not None and r.table.num_rows:
            by_kind.setdefault(kinds[r.rel_path], []).append(r)
    for k, rs in by_kind.items():
        part = f"{k}/b{gen}-{task_id}.parquet"
        table = pa.concat_tables([r.table for r in rs if r.table is not None])
        os.makedirs(os.path.join(out, k), exist_ok=True)
        pq.write_table(
            table, os.path.join(out, part), compression=PARQUET_COMPRESSION, use_dictionary=SIDE_DICTIONARY
        )
        for r in rs:
            r.part = part
    for r in out_results:
        r.table = None
    # a worker runs many tasks: hand freed Arrow buffers back so its memory does not ratchet up
    pa.default_memory_pool().release_unused()
    return out_results


# --------------------------------------------------------------------------- parent side


def _file_key(rel_path: str) -> str:
    return hashlib.sha256(rel_path.encode("utf-8", "surrogateescape")).hexdigest()[:20]


def default_out(home: Path) -> Path:
    """Where a scan goes when no ``--out`` is given: a per-home folder in the user cache, never in the home."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    tag = hashlib.sha256(str(home).encode()).hexdigest()[:12]
    out = Path(cache) / "vakaudit" / "scans" / f"{home.name or 'home'}-{tag}"
    if _is_inside(out, home):
        import tempfile

        out = Path(tempfile.gettempdir()) / "vakaudit-scans" / f"{home.name or 'home'}-{tag}"
    return out


def _is_inside(path: Path, root: Path) -> bool:
    p = os.path.realpath(path)
    r = os.path.realpath(root)
    return p == r or p.startswith(r.rstrip("/") + "/")


def _load_manifest(out: Path, home: Path) -> dict[str, Any] | None:
    from vakaudit import __version__

    path = out / MANIFEST
    if not path.is_file():
        if out.exists() and any(out.iterdir()):
            raise ScanError(
                f"output directory {out} is not empty and holds no vakaudit scan; choose another --out"
            )
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ScanError(f"cannot read {path}: {exc}; delete the directory or choose another --out") from exc
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


def _group(items: list[_Item]) -> list[list[_Item]]:
    """Tasks: one per session ledger, small side files bundled; the costliest first."""
    ledgers = sorted((i for i in items if i.kind == LEDGER_KIND), key=lambda i: -i.size)
    tasks: list[list[_Item]] = [[i] for i in ledgers]
    bundle: list[_Item] = []
    size = 0
    for it in sorted((i for i in items if i.kind != LEDGER_KIND), key=lambda i: i.rel_path):
        if it.size >= SMALL_TASK_BYTES:
            tasks.append([it])
            continue
        bundle.append(it)
        size += it.size
        if len(bundle) >= SMALL_TASK_FILES or size >= SMALL_TASK_BYTES:
            tasks.append(bundle)
            bundle, size = [], 0
    if bundle:
        tasks.append(bundle)
    # longest first, so the pool's last tasks are short and both workers finish together
    tasks.sort(key=lambda task: -sum(i.size * _COST_PER_BYTE.get(i.kind, 2.0) for i in task))
    return tasks


# CPU per byte relative to a session ledger (measured on the synthetic homes): checkpoints are mostly
# base64 skipped at memchr speed, small-row JSONL sidecars cost a Python step per short row
_COST_PER_BYTE = {LEDGER_KIND: 1.0, "checkpoints": 0.2, "store_db": 0.3}


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
            t = pq.read_table(path)
            t = _keep_rows(t, kept)
            tmp = path.with_name(f".{path.name}.tmp")
            pq.write_table(t, tmp, compression=PARQUET_COMPRESSION)
            os.replace(tmp, path)
    if not sweep:
        return
    for name in all_tables():
        folder = out / name
        if folder.is_dir():
            for path in folder.glob("*.parquet"):
                if path.name not in MERGED_PARTS and f"{name}/{path.name}" not in referenced:
                    path.unlink()


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


def scan_home(
    home: str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    progress: Callable[[ScanProgress], None] | None = None,
    *,
    full: bool = False,
) -> ScanResult:
    """Scan ``home`` (default ``$VAK_HOME``, else the platform data home) into Parquet tables in ``out``.

    A second scan into the same ``out`` is incremental unless ``full``. ``jobs``: worker processes
    (default: CPU count). ``progress`` is called after each finished task.
    """
    from vakaudit import __version__

    t0 = time.perf_counter()
    home_p = resolve_home(home)
    out_p = Path(os.path.abspath(out)) if out is not None else default_out(home_p)
    if _is_inside(out_p, home_p):
        raise UsageError(f"--out {out_p} lies inside the home {home_p}; a scan never writes into the home")
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {jobs}")
    manifest = _load_manifest(out_p, home_p)
    if manifest is None and out_p.exists():
        for child in out_p.iterdir():  # stale scan by another vakaudit version: start over
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    out_p.mkdir(parents=True, exist_ok=True)
    prev_files: dict[str, dict[str, Any]] = (manifest or {}).get("files", {})
    gen = int((manifest or {}).get("generation", 0)) + 1

    g3 = (home_p / "tenants").is_dir() and not (home_p / "tenants").is_symlink()
    files = list(iter_home_files(home_p, layout="g3" if g3 else None))
    layout = "g3" if g3 else detect_layout(home_p, files)
    items, states, plan_findings = _plan(files, prev_files, layout, full)
    scan_findings: list[Finding] = list(plan_findings)
    if layout == "g3":
        scan_findings.append(
            Finding(
                FindingCode.TENANT_STORE_HOME,
                Severity.WARNING,
                "tenants",
                "G3 tenant-store home (5.0/7.0): sealed segment files under tenants/ need another reader; "
                "files are sized and classified but not read",
            )
        )

    # parts of files read from scratch (or gone) are dropped before any worker writes
    (out_p / "entries").mkdir(exist_ok=True)
    current = {hf.rel_path: hf for hf in files}
    keep_rels = {rel for rel in prev_files if rel in current and states.get(rel) in ("unchanged", "append")}
    _prune_parts(out_p, prev_files, keep_rels)

    # read
    results: list[_ItemResult] = []
    tasks = _group(items)
    work_bytes = sum(i.size for i in items)
    files_total = len(items)
    done_files = done_bytes = 0
    n_jobs = jobs or os.cpu_count() or 1
    if n_jobs == 1 or len(tasks) <= 1 or work_bytes < INLINE_BYTES:
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
        with ProcessPoolExecutor(max_workers=min(n_jobs, len(tasks)), mp_context=ctx) as pool:
            futs = {
                pool.submit(_run_task, str(home_p), str(out_p), gen, task_id, task): task
                for task_id, task in enumerate(tasks)
            }
            gc.unfreeze()
            for fut in as_completed(futs):
                task = futs[fut]
                results.extend(fut.result())
                done_files += len(task)
                done_bytes += sum(i.size for i in task)
                if progress:
                    progress(ScanProgress(done_files, files_total, done_bytes, work_bytes))
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
    prev_counts: dict[str, int] = (manifest or {}).get("tables", {})
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

    # findings: the walk's are recomputed each scan; readers' survive for kept files
    walk_findings = [f for hf in files for f in hf.findings] + scan_findings
    _write_table(out_p, "findings", _findings_table(walk_findings), "walk.parquet")
    files_path = out_p / "findings" / "files.parquet"
    if changed_any or not files_path.is_file() or manifest is None:
        old = _keep_rows(_read_part(files_path, FINDINGS_SCHEMA), kept)
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

    # turns and sessions, derived from entries
    ledger_changed = any(
        r.rel_path in current and current[r.rel_path].kind.name == LEDGER_KIND for r in results
    )
    ledger_changed |= {k for k, v in prev_files.items() if v.get("kind") == LEDGER_KIND} != {
        hf.rel_path for hf in files if hf.kind.name == LEDGER_KIND and states.get(hf.rel_path) != "not_read"
    }
    if ledger_changed or not (out_p / "turns" / "all.parquet").is_file() or "turns" not in prev_counts:
        ledger_bytes = sum(hf.size_bytes for hf in files if hf.kind.name == LEDGER_KIND)
        if n_jobs > 1 and ledger_bytes >= DERIVE_APART_BYTES:
            # DuckDB's working memory goes to fresh processes, not to the parent's high-water mark;
            # one per core, each over its share of the ledgers
            counts.update(_derive_apart(out_p, min(n_jobs, 4)))
        else:
            counts.update(_derive_turns_sessions(out_p, n_jobs))
    else:
        counts["turns"] = prev_counts["turns"]
        counts["sessions"] = prev_counts["sessions"]

    # manifest
    new_files: dict[str, dict[str, Any]] = {}
    for hf in files:
        rel = hf.rel_path
        entry: dict[str, Any] = {
            "kind": hf.kind.name,
            "inode": hf.inode,
            "device": hf.device,
            "size": hf.size_bytes,
            "mtime_ns": hf.mtime_ns,
        }
        r = by_rel.get(rel)
        prev = prev_files.get(rel, {})
        if r is not None and r.state:
            entry["state"] = r.state
            parts = list(prev.get("parts", [])) if r.mode == "append" else []
            if r.part:
                parts.append(r.part)
            entry["parts"] = parts
            entry["part_rows"] = (prev.get("part_rows", 0) if r.mode == "append" else 0) + (
                r.rows if r.part else 0
            )
            if (
                r.state.get("ledger", {}).get("offset") is not None
                and r.state["ledger"]["offset"] != hf.size_bytes
            ):
                # a write in flight: the next scan must look again even if size/mtime stay the same
                entry["size"] = r.state["ledger"]["offset"]
        elif states.get(rel) == "unchanged":
            entry["state"] = prev.get("state", {})
            entry["parts"] = prev.get("parts", [])
            entry["part_rows"] = prev.get("part_rows", 0)
        new_files[rel] = entry
    counts["entries"] = own_part_rows.get("entries", 0)
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
    rows = [f.to_dict() for f in findings]
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
FROM entries WHERE turn_no IS NOT NULL
GROUP BY rel_path, turn_no ORDER BY rel_path, turn_no
"""

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


def _derive_turns_sessions(out: Path, threads: int) -> dict[str, int]:
    """``turns`` and ``sessions`` from the ``entries`` parts, a bounded group of ledgers at a time.

    Every part of one ledger lands in the same group (parts are named ``<file key>-<generation>``),
    so each group's aggregates are final; memory depends on the group size, not on the home.
    """
    counts = _derive_shard(out, 0, 1)
    for name in ("turns", "sessions"):
        os.replace(out / name / ".derive-0.tmp", out / name / "all.parquet")
    return counts


def _derive_apart(out: Path, jobs: int) -> dict[str, int]:
    """:func:`_derive_turns_sessions` in ``jobs`` fresh processes, each over a contiguous share of the
    groups; the shares are concatenated in order, so the rows are those of one sequential pass."""
    import multiprocessing as mp

    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        futs = [pool.submit(_derive_shard, out, i, jobs) for i in range(jobs)]
        results = [f.result() for f in futs]
    counts = {name: sum(r[name] for r in results) for name in ("turns", "sessions")}
    for name, schema in (("turns", TURNS_SCHEMA), ("sessions", SESSIONS_SCHEMA)):
        tmp = [out / name / f".derive-{i}.tmp" for i in range(jobs)]
        with pq.ParquetWriter(out / name / ".all.parquet.tmp", schema, compression=PARQUET_COMPRESSION) as w:
            for path in tmp:
                w.write_table(pq.read_table(path, schema=schema))
        for path in tmp:
            path.unlink()
        os.replace(out / name / ".all.parquet.tmp", out / name / "all.parquet")
    return counts


def _derive_shard(out: Path, shard: int, shards: int) -> dict[str, int]:
    """Share ``shard`` of ``shards`` (contiguous, by ledger count) of the derivation, written to
    ``<table>/.derive-<shard>.tmp``."""
    import duckdb

    by_file: dict[str, list[Path]] = {}
    for part in sorted((out / "entries").glob("*.parquet")):
        by_file.setdefault(part.name.rsplit("-", 1)[0], []).append(part)
    groups: list[list[Path]] = []
    keys = sorted(by_file)
    keys = keys[len(keys) * shard // shards : len(keys) * (shard + 1) // shards]
    for key in keys:
        if not groups or len(groups[-1]) >= DERIVE_GROUP_FILES:
            groups.append([])
        groups[-1].extend(by_file[key])
    specs = (("turns", _TURNS_SQL, TURNS_SCHEMA), ("sessions", _SESSIONS_SQL, SESSIONS_SCHEMA))
    counts = {name: 0 for name, _, _ in specs}
    writers = {}
    for name, _, schema in specs:
        (out / name).mkdir(parents=True, exist_ok=True)
        writers[name] = pq.ParquetWriter(
            out / name / f".derive-{shard}.tmp", schema, compression=PARQUET_COMPRESSION
        )
    con = duckdb.connect(config={"threads": 1, "memory_limit": "96MB", "preserve_insertion_order": False})
    try:
        for group in groups:
            files = ", ".join("'" + str(p).replace("'", "''") + "'" for p in group)
            con.execute(f"CREATE OR REPLACE VIEW entries AS SELECT * FROM read_parquet([{files}])")
            for name, sql, schema in specs:
                t = con.sql(sql).to_arrow_table().select(schema.names).cast(schema)
                writers[name].write_table(t)
                counts[name] += t.num_rows
    finally:
        con.close()
        for w in writers.values():
            w.close()
    return counts
