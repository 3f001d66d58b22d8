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
- ``turns`` and ``sessions`` are kept for ledgers unchanged since the last scan and derived for
  the others, over the parts their rows live in (DuckDB's queries; a group of a few thousand rows
  aggregated in Python, :mod:`~vakaudit.scan.aggregate`). With a process pool the ledger tasks
  are handed out first and the derivation joins the pool as soon as they are done, while side
  files are still read (unless a ledger was found rewritten: its old rows are pruned first).

This module is the orchestration; the jobs live beside it: :mod:`~vakaudit.scan.plan` (what to
read, each file's :class:`~vakaudit.scan.manifest.ScanState`, the tasks), :mod:`~vakaudit.scan.worker`
(reading one task's items), :mod:`~vakaudit.scan.parts` (Parquet parts and their rewrites),
:mod:`~vakaudit.scan.manifest` (the typed :class:`~vakaudit.scan.manifest.Manifest`) and
:mod:`~vakaudit.scan.derive` (``turns`` and ``sessions`` from ``turns.sql`` and ``sessions.sql``).
"""

from __future__ import annotations

import gc
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from vakaudit.artifacts.session_ledger import ENTRY_FIELDS_SCHEMA
from vakaudit.errors import UsageError
from vakaudit.findings import FINDINGS_SCHEMA, Finding, FindingCode, Severity
from vakaudit.names import raw_bytes, shown
from vakaudit.outputs import check_output
from vakaudit.scan.derive import (
    SOURCE_TABLE,
    DerivePlan,
    _derive_plan,
    _derive_shard,
    _derive_turns_sessions,
    _early_derive_plan,
    _merge_derived,
    derive_frame_ledgers,
    feeds_turns,
)
from vakaudit.scan.manifest import (
    INCOMPLETE,
    MANIFEST_FORMAT,
    Manifest,
    ScanState,
    ScanStats,
    _ItemResult,
    _manifest_entry,
)
from vakaudit.scan.parts import (
    FRAMES_GROUP_BYTES,
    _compute_pays,
    _EntriesPart,
    _findings_table,
    _keep_rows,
    _prune_parts,
    _read_part,
    _rows_where,
    _write_table,
)
from vakaudit.scan.plan import _group, _Item, _load_manifest, _plan, default_out
from vakaudit.scan.result import ScanResult
from vakaudit.scan.tables import CORE_TABLES, FILES_SCHEMA, all_tables
from vakaudit.scan.tables7 import CHAIN_STATE_KEY, CHAINS_PART, FRAMES_PART, STORE_TABLES
from vakaudit.scan.walk import detect_layout, has_tenants_tree, iter_home_files, resolve_home
from vakaudit.scan.worker import _named, _run_task

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    from vakaudit.storage import KeyRing

__all__ = ["ScanProgress", "ScanStats", "default_out", "scan_home"]

INLINE_BYTES = 8 << 20  # below this much work, no process pool is started


@dataclass(frozen=True, slots=True)
class ScanProgress:
    """What a progress callback receives after each finished task."""

    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int


def _entry_references(out: Path) -> dict[str, list[str]]:
    """The last scan's ``objects``: object id -> the ``entry:`` references of ledger entries naming it."""
    path = out / "objects" / "all.parquet"
    if not path.is_file():
        return {}
    import pyarrow.parquet as pq

    try:  # ParquetFile, not pq.read_table: no import of Arrow's dataset layer
        pf = pq.ParquetFile(path)
        try:
            t = pf.read(columns=["object_id", "referenced_by"])
        finally:
            pf.close()
    except (OSError, pa.ArrowException):
        return {}
    out_refs: dict[str, list[str]] = {}
    for oid, refs in zip(t["object_id"].to_pylist(), t["referenced_by"].to_pylist(), strict=True):
        entry = [r for r in refs or () if r.startswith("entry:")]
        if oid and entry:
            out_refs[oid] = entry
    return out_refs


def _frames_unchanged(full: bool, states: dict, prev_files: dict, prev_counts: dict, out: Path) -> bool:
    """Whether a 7.0 home's session ledgers are as the last scan left them: every ledger segment
    trusted unchanged, none added or gone, and that scan's ``turns`` and ``sessions`` still there."""
    if full or not states or "turns" not in prev_counts or "sessions" not in prev_counts:
        return False
    if any(st != "unchanged" for st, _n, _facts in states.values()):
        return False
    before = {rel for rel, e in prev_files.items() if "frames7" in (e.get("state") or {})}
    return before == set(states) and all((out / name / "all.parquet").is_file() for name in ("turns", "sessions"))


def _summed_fields(t: pa.Table) -> pa.Table:
    """``entry_fields`` rows summed per (rel_path, session_id, kind, field), sorted by rel_path,
    kind, field (nulls last, as Arrow sorts). A home has a few thousand of these rows, so plain
    Python, which spares a scan the import of Arrow's compute and query engine (~60 ms)."""
    cols = t.to_pydict()
    sums: dict[tuple, list[int]] = {}
    for key, n, size in zip(
        zip(cols["rel_path"], cols["session_id"], cols["kind"], cols["field"], strict=True),
        cols["entry_count"],
        cols["size_bytes"],
        strict=True,
    ):
        acc = sums.get(key)
        if acc is None:
            sums[key] = [n, size]
        else:
            acc[0] += n
            acc[1] += size

    def order(key: tuple) -> tuple:
        rel, sid, kind, field = key
        return (rel is None, rel or "", kind is None, kind or "", field is None, field or "", sid is None, sid or "")

    keys = sorted(sums, key=order)
    out = {name: [k[i] for k in keys] for i, name in enumerate(("rel_path", "session_id", "kind", "field"))}
    out["entry_count"] = [sums[k][0] for k in keys]
    out["size_bytes"] = [sums[k][1] for k in keys]
    return pa.table(out, schema=ENTRY_FIELDS_SCHEMA)


def _locked(table: pa.Table) -> int:
    """Rows of a 7.0 frame table (``entries`` frames, ``chain_records``) with no ``plain_bytes``:
    sealed frames that could not be opened."""
    if "sealed" not in table.column_names or "plain_bytes" not in table.column_names:
        return 0
    if _compute_pays(table.num_rows):
        import pyarrow.compute as pc

        return int(pc.sum(pc.and_(table["sealed"], pc.is_null(table["plain_bytes"]))).as_py() or 0)
    sealed, plain = table["sealed"].to_pylist(), table["plain_bytes"].to_pylist()
    return sum(s is True and p is None for s, p in zip(sealed, plain, strict=True))


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
    (out_p / INCOMPLETE).touch()  # removed once the new manifest is in place
    prev_files: dict[str, dict[str, Any]] = manifest.files if manifest is not None else {}
    gen = (manifest.generation if manifest is not None else 0) + 1

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
    keep_rels = {
        rel
        for rel in prev_files
        if rel in current and states.get(rel) in (ScanState.UNCHANGED, ScanState.APPEND)
    }
    _prune_parts(out_p, prev_files, keep_rels)

    # turns and sessions: kept for ledgers unchanged since the last scan, derived for the others
    prev_counts: dict[str, int] = manifest.tables if manifest is not None else {}
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
    else:  # (the process pool's modules are imported only here: ~12 ms a scan without one spares)
        import multiprocessing as mp
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
        # forked workers share the parent's heap copy-on-write; frozen objects are never visited
        # by the children's garbage collector, so those pages stay shared instead of being copied
        gc.freeze()
        workers = min(n_jobs, len(tasks))
        # ledger tasks (those of files whose turns are derived) first: once they are done, turns and
        # sessions are derived in the pool while the side files are still being read. Tasks are
        # handed out a few at a time, so the derivation does not wait behind every queued side task
        def ledger_task(task: list[_Item]) -> bool:
            return any(feeds_turns(it.kind) for it in task)

        queue = [t for t in enumerate(tasks) if ledger_task(t[1])]
        ledgers_left = len(queue)
        queue += [t for t in enumerate(tasks) if not ledger_task(t[1])]
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
                    if ledger_task(task):
                        ledgers_left -= 1
                        if ledgers_left == 0:
                            plan = _early_derive_plan(
                                files, results, states, prev_files, derived_before, current, n_jobs
                            )
                            if plan is not None:
                                early_derive = (plan, [])
                                groups, _, apart = plan
                                for i in range(max(apart, 1)):
                                    running[pool.submit(_derive_shard, out_p, groups, i, max(apart, 1))] = (
                                        None
                                    )
                hand_out(len([t for t in running.values() if t is None]) + workers + 1)
    results.sort(key=lambda r: r.rel_path)
    by_rel = {r.rel_path: r for r in results}
    rewritten = {
        r.rel_path
        for r in results
        if states.get(r.rel_path) == ScanState.APPEND and r.mode != ScanState.APPEND
    }
    if rewritten:  # an append the worker found to be a rewrite: its old rows go
        _prune_parts(
            out_p, {k: v for k, v in prev_files.items() if k in keep_rels}, keep_rels - rewritten, sweep=False
        )

    # which rows of the previous scan survive: files unchanged or only appended to
    kept = {rel for rel, st in states.items() if st == ScanState.UNCHANGED}
    kept |= {r.rel_path for r in results if r.mode == ScanState.APPEND}
    # a file of a resumable kind (a ledger) read again gets its whole verdict again: none of its earlier
    # findings survive
    reclassified = {r.rel_path for r in results if current[r.rel_path].kind.resumable is not None}
    changed_any = bool(results) or set(prev_files) != set(current)

    # rows in per-file parts (entries, large side files), per table, after this scan
    own_part_rows: dict[str, int] = {}
    for hf in files:
        r = by_rel.get(hf.rel_path)
        prev = prev_files.get(hf.rel_path, {})
        if r is not None:
            n = (prev.get("part_rows", 0) if r.mode == ScanState.APPEND else 0) + (r.rows if r.part else 0)
        elif states.get(hf.rel_path) == ScanState.UNCHANGED:
            n = prev.get("part_rows", 0)
        else:
            continue
        own_part_rows[hf.kind.table_name] = own_part_rows.get(hf.kind.table_name, 0) + n

    # the ledger entries each object was named by (a 7.0 home's last scan), kept with the entries
    # an unlocked rescan keeps; read before the stale all.parquet files below go
    prev_referenced = _entry_references(out_p) if layout == "g3" and not full else {}

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
        # a file read again (every file, in a full scan) has none of its old rows kept: the last
        # scan's part is read only when some file's rows survive
        old = ENTRY_FIELDS_SCHEMA.empty_table()
        if kept:
            old = _keep_rows(_read_part(fields_path, ENTRY_FIELDS_SCHEMA), kept)
        new = [r.fields for r in results if r.fields is not None]
        t = pa.concat_tables([old, *new]) if new else old
        if new and by_rel:
            t = _summed_fields(t)
        _write_table(out_p, "entry_fields", t)
        counts["entry_fields"] = t.num_rows
    else:  # the JSONL ledgers' part is kept as it is (a 7.0 home's frame part is counted below)
        import pyarrow.parquet as pq

        counts["entry_fields"] = pq.ParquetFile(fields_path).metadata.num_rows

    # a 7.0 home's tenant stores: read again on every scan (cheap next to the segment directories)
    for name in STORE_TABLES:
        (out_p / name / "all.parquet").unlink(missing_ok=True)
    frame_rows = 0
    locked_frames = 0  # 7.0 frames read without their plaintext (sealed, no key for them)
    if layout != "g3":
        (out_p / "entries" / FRAMES_PART).unlink(missing_ok=True)
        (out_p / "entry_fields" / FRAMES_PART).unlink(missing_ok=True)
    seg_states: dict[str, tuple[str, int, dict]] = {}  # 7.0 segment files: scan state, bytes read, manifest state
    frame_states: dict[str, tuple[str, int, dict]] = {}
    if layout == "g3":  # (the 7.0 readers are imported only here: a JSONL-era scan spares ~13 ms)
        from vakaudit.scan.chains7 import read_chain_tables
        from vakaudit.scan.frames7 import read_frame_entries, segment_changes
        from vakaudit.scan.store7 import read_store_tables, with_entry_references

        store = read_store_tables(home_p, keys, files)
        scan_findings.extend(store.findings)
        scan_findings.extend(segment_changes(files, prev_files))
        # the ledgers' frames: what the last scan verified and 7.0 keeps immutable is not read again
        # each conversation's rows stream into the part as they are read (the last scan's part is
        # read first, for what it may keep, and replaced once the new one is complete)
        frame_part = _EntriesPart(str(out_p / "entries"), f".{FRAMES_PART}.tmp", FRAMES_GROUP_BYTES)
        locked = [0]

        def to_part(t: pa.Table) -> None:
            locked[0] += _locked(t)
            for b in t.to_batches():
                frame_part.add(b)

        (out_p / "entries").mkdir(parents=True, exist_ok=True)
        frames = read_frame_entries(home_p, files, keys, prev_files={} if full else prev_files,
                                    prev_part=out_p / "entries" / FRAMES_PART,
                                    prev_fields=out_p / "entry_fields" / FRAMES_PART,
                                    prev_referenced=prev_referenced, sink=to_part)
        scan_findings.extend(frames.findings)
        store.tables["objects"] = with_entry_references(store.tables["objects"], frames.referenced)
        for name, table in store.tables.items():
            _write_table(out_p, name, table)
            counts[name] = table.num_rows
        seg_states = frames.segments
        frame_states = dict(frames.segments)  # the ledgers' segments alone (chains join seg_states below)
        if frame_part.close():
            os.replace(out_p / "entries" / f".{FRAMES_PART}.tmp", out_p / "entries" / FRAMES_PART)
        else:
            (out_p / "entries" / FRAMES_PART).unlink(missing_ok=True)
        frame_rows = frames.rows
        if frames.fields.num_rows:
            _write_table(out_p, "entry_fields", frames.fields, FRAMES_PART)
            counts["entry_fields"] = counts.get("entry_fields", 0) + frames.fields.num_rows
        else:
            (out_p / "entry_fields" / FRAMES_PART).unlink(missing_ok=True)
        locked_frames += locked[0]
    chains = None
    if layout == "g3":  # a 7.0 home's record chains, into their kind tables or chain_records
        # what the last scan verified and 7.0 keeps immutable is not read again (its rows are kept)
        chains = read_chain_tables(home_p, files, keys, prev_files={} if full else prev_files, prev_dir=out_p)
    for name in tables:
        (out_p / name / CHAINS_PART).unlink(missing_ok=True)
    if chains is not None:
        seg_states.update(chains.segments)
        scan_findings.extend(chains.findings)
        for name, table in chains.tables.items():
            if name == "chain_records":
                locked_frames += _locked(table)
            _write_table(out_p, name, table, CHAINS_PART)
            counts[name] = counts.get(name, 0) + table.num_rows

    # findings: the walk's are recomputed each scan; readers' survive for kept files
    walk_findings = [f for hf in files for f in hf.findings] + scan_findings
    _write_table(out_p, "findings", _findings_table(walk_findings), "walk.parquet")
    files_path = out_p / "findings" / "files.parquet"
    if changed_any or not files_path.is_file() or manifest is None:
        survive = kept - reclassified  # none in a full scan: the last scan's part is not read
        old = FINDINGS_SCHEMA.empty_table()
        if survive:
            old = _keep_rows(_read_part(files_path, FINDINGS_SCHEMA), survive)
        if old.num_rows:  # a "still being written" note only describes the scan that made it
            old = _rows_where(old, "code", {str(FindingCode.LEDGER_GROWING)}, keep=False)
        new_f = [_named(f, r.rel_path) for r in results for f in r.findings]
        reader_findings = pa.concat_tables([old, _findings_table(new_f)])
        _write_table(out_p, "findings", reader_findings, "files.parquet")
        n_reader_findings = reader_findings.num_rows
    else:
        n_reader_findings = manifest.reader_findings if manifest is not None else 0
    counts["findings"] = len(walk_findings) + n_reader_findings

    # files table
    stats = ScanStats(files=len(files), home_bytes=sum(hf.size_bytes for hf in files), locked_frames=locked_frames)
    file_rows = []
    for hf in files:
        st = states.get(hf.rel_path, ScanState.NOT_READ)
        r = by_rel.get(hf.rel_path)
        if hf.rel_path in seg_states:
            st, n_read, _facts = seg_states[hf.rel_path]
            st = ScanState(st)
            stats.bytes_read += n_read
        if r is not None:
            st = ScanState.APPENDED if r.mode == ScanState.APPEND else ScanState.FULL
            stats.bytes_scanned += r.bytes_scanned
            stats.bytes_read += r.bytes_read
        stats.files_full += st == ScanState.FULL
        stats.files_appended += st == ScanState.APPENDED
        stats.files_unchanged += st == ScanState.UNCHANGED
        stats.files_not_read += st == ScanState.NOT_READ
        file_rows.append(
            {
                "rel_path": shown(hf.rel_path),
                "rel_path_raw": raw_bytes(hf.rel_path),
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
                "scan_state": str(st),
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
            new_files[rel]["state"] = {CHAIN_STATE_KEY if "table" in facts else "frames7": facts}

    # turns and sessions
    ledgers = {hf.rel_path: new_files[hf.rel_path] for hf in files
               if hf.kind.table_name == SOURCE_TABLE and new_files[hf.rel_path].get("parts")}
    plan = _derive_plan(ledgers, states, prev_files, derived_before, current, n_jobs)
    if layout == "g3" and _frames_unchanged(full, frame_states, prev_files, prev_counts, out_p):
        # no ledger segment changed, came or went since the last scan: its turns and sessions stand
        counts["turns"] = prev_counts["turns"]
        counts["sessions"] = prev_counts["sessions"]
    elif layout == "g3":  # a 7.0 home's ledgers are its frames, derived whole from their part
        counts.update(derive_frame_ledgers(out_p, out_p / "entries" / FRAMES_PART if frame_rows else None))
    elif plan is None:
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
    Manifest(
        home=str(home_p),
        layout=layout,
        scanned_at=scanned_at,
        generation=gen,
        tool_version=__version__,
        format=MANIFEST_FORMAT,
        stats=stats.to_dict(),
        tables=counts,
        reader_findings=n_reader_findings,
        files=new_files,
    ).write(out_p)
    (out_p / INCOMPLETE).unlink()
    # the memory Arrow's allocator still holds for this scan's batches goes back to the system: a
    # caller that goes on in this process (a report analysing the scan) does not carry it
    pa.default_memory_pool().release_unused()
    return ScanResult(home_p, out_p, layout, scanned_at, __version__, stats, counts)
