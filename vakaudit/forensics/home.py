"""Verify a whole home: every file walked, every ledger verified, sidecars compared with the ledgers.

:func:`verify_home` is ``vakaudit verify`` without the printing: one walk of the home
(:func:`vakaudit.scan.iter_home_files`, which classifies every file and reports undeclared files,
symlinks out of the home, unreadable files and nested homes), :func:`verify_ledger` on every session
ledger, every other file through its kind's reader (the findings the scan reports for it: bad sidecar
rows, config files, checkpoints, deep documents) with the sidecar rows the cross checks need
(:mod:`vakaudit.forensics.crosscheck`), and, given a
seal, the append-only proof (:func:`vakaudit.forensics.seal.verify_since`). All findings are graded by
one policy (:mod:`vakaudit.ledger.policy`). Nothing in the home is written, locked or repaired.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vakaudit.artifacts import LEDGER_KIND, ReadContext
from vakaudit.findings import Finding, FindingCode, FindingFold, Severity, folded_count
from vakaudit.ledger.policy import TornPolicy, regrade, severity_of
from vakaudit.names import shown
from vakaudit.scan import detect_layout, iter_home_files, resolve_home

if TYPE_CHECKING:
    from vakaudit.forensics.crosscheck import CrossCollector
    from vakaudit.ledger.verdict import LedgerReport
    from vakaudit.storage import KeyRing

__all__ = ["HomeReport", "verify_home", "PARALLEL_MIN_BYTES"]

#: Below this many bytes of session ledgers, :func:`verify_home` verifies them in this process.
PARALLEL_MIN_BYTES = 32 << 20

_CHECKPOINT_MANIFEST = re.compile(r"(?:^|/)checkpoints/[^/]+/\d+\.json$")

_ROW_COLUMNS = ("line_no", "provider", "model", "outcome", "latency_ms", "ts", "input_tokens", "output_tokens",
                "session_id", "file_job_id", "schema_version", "job_id", "state", "attempts", "updated_at_ms",
                "event_id", "commitment_id", "kind", "episode_id")  # fmt: skip


@dataclass(slots=True)
class HomeReport:
    """Everything :func:`verify_home` found. ``findings`` includes every ledger's findings."""

    layout: str
    torn: TornPolicy
    file_count: int = 0
    ledger_count: int = 0
    bytes_verified: int = 0
    segment_dirs: int = 0  # 7.0 homes: session ledger and record chain directories verified
    frames: int = 0  # 7.0 homes: frames verified in them
    ledgers: list[LedgerReport] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    cross_checks: list[str] = field(default_factory=list)  # the cross checks that had both sides

    def counts(self) -> dict[str, int]:
        """Number of findings per severity, every severity listed (a fold counts what it folded)."""
        out = {s.value: 0 for s in Severity}
        for f in self.findings:
            out[f.severity.value] += f.count
        return out

    def at_or_above(self, threshold: Severity) -> list[Finding]:
        return [f for f in self.findings if f.severity.rank >= threshold.rank]

    def to_dict(self) -> dict[str, Any]:
        return {
            "layout": self.layout,
            "torn": self.torn.value,
            "file_count": self.file_count,
            "ledger_count": self.ledger_count,
            "bytes_verified": self.bytes_verified,
            "segment_dirs": self.segment_dirs,
            "frames": self.frames,
            "counts": self.counts(),
            "folded": folded_count(self.findings),
            "cross_checks": self.cross_checks,
            "ledgers": [{k: v for k, v in r.to_dict().items() if k != "findings"} for r in self.ledgers],
            "findings": [f.to_dict() for f in self.findings],
        }


@dataclass(frozen=True, slots=True)
class VerifyProgress:
    """What :func:`verify_home`'s progress callback receives: the files verified so far of those it
    reads (session ledgers, files a kind's reader reads, 7.0 segment directories), their bytes, and
    the file just verified (escaped by :func:`vakaudit.names.shown`; None before the first)."""

    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int
    rel_path: str | None = None


class _Ticker:
    """Counts what :func:`verify_home` verified and reports it as :class:`VerifyProgress`."""

    def __init__(self, progress: Callable[[VerifyProgress], None] | None, files: list[Any], layout: str) -> None:
        self.progress = progress
        self.files_done = self.bytes_done = 0
        if progress is None:
            self.files_total = self.bytes_total = 0
            return
        read = [hf for hf in files if hf.should_read and (hf.kind.name == LEDGER_KIND or hf.kind.reader is not None)]
        self.files_total = len(read)
        self.bytes_total = sum(hf.size_bytes for hf in read)
        self._dir_bytes: dict[str, int] = {}
        if layout == "g3":
            from vakaudit.forensics.home7 import segment_dirs

            dirs = set(segment_dirs(files))
            for hf in files:
                parent = hf.rel_path.rpartition("/")[0]
                if parent in dirs:
                    self._dir_bytes[parent] = self._dir_bytes.get(parent, 0) + hf.size_bytes
            self.files_total += len(dirs)
            self.bytes_total += sum(self._dir_bytes.values())
        self._emit(None)

    def file(self, hf: Any) -> None:
        if self.progress is not None:
            self.files_done += 1
            self.bytes_done += hf.size_bytes
            self._emit(hf.rel_path)

    def segment_dir(self, rel_dir: str, _size: int) -> None:
        self.files_done += 1
        self.bytes_done += self._dir_bytes.get(rel_dir, 0)
        self._emit(rel_dir)

    def _emit(self, rel_path: str | None) -> None:
        assert self.progress is not None
        done = min(self.files_done, self.files_total)
        self.progress(VerifyProgress(done, self.files_total, min(self.bytes_done, self.bytes_total),
                                     self.bytes_total, None if rel_path is None else shown(rel_path)))  # fmt: skip


def verify_home(
    home: str | os.PathLike | None,
    *,
    torn: TornPolicy = TornPolicy.TOLERATE_TAIL,
    deep: bool = False,
    cross: bool = True,
    since: dict | None = None,
    progress: Callable[[VerifyProgress], None] | None = None,
    jobs: int | None = None,
    keys: KeyRing | None = None,
) -> HomeReport:
    """Verify every file of ``home`` (None: ``$VAK_HOME`` or the platform home).

    ``since``: a seal (:func:`vakaudit.forensics.seal.read_seal`) to prove append-only growth against.
    ``progress`` gets a :class:`VerifyProgress` once before the first file and after each file is
    verified (a session ledger verified by a worker process: when its result is taken, after the other
    files); 7.0 segment directories count as one file each. ``jobs``: worker processes
    for the session ledgers (default: one per idle core, :func:`idle_cores`, when the ledgers
    hold at least :data:`PARALLEL_MIN_BYTES`; fewer than 2: none); the report is the same whatever the
    number. ``keys`` unlocks a 7.0 home's sealed frames and objects (keyless otherwise). Raises
    :class:`~vakaudit.errors.HomeNotFoundError` when the home is not a directory.
    """
    root = resolve_home(home)
    files = list(iter_home_files(root))
    layout = detect_layout(root, files)
    report = HomeReport(layout=layout, torn=torn, file_count=len(files))
    tick = _Ticker(progress, files, layout)
    out = report.findings
    if layout == "g3":
        out.append(Finding(FindingCode.TENANT_STORE_HOME, severity_of(FindingCode.TENANT_STORE_HOME), "tenants",
                           "7.0 data-baseline home (layout g3): frame chains, segments, seals, scope keys, "
                           "object grants and doc refs verified" + (", frames and objects opened with the "
                           "keys given" if keys is not None else " keyless (--keys opens frames and objects)")))  # fmt: skip
        from vakaudit.forensics.home7 import verify_home7

        rep7 = verify_home7(root, files, keys=keys, progress=tick.segment_dir if progress is not None else None)
        report.segment_dirs, report.frames = rep7.segment_dirs, rep7.frames
        report.bytes_verified += rep7.bytes_verified
        out.extend(regrade(f, torn) for f in rep7.findings)
    collector: CrossCollector | None = None

    def collect() -> CrossCollector:
        # made on the first file a cross check may read (a ledger, a file its kind's reader reads, an
        # index, a checkpoint): a home of 7.0 segments alone never imports the checks (nor sqlite3)
        nonlocal collector
        if collector is None:
            from vakaudit.forensics.crosscheck import CrossCollector

            collector = CrossCollector()
        return collector

    def visit(hf: Any) -> None:
        out.extend(regrade(f, torn) for f in hf.findings)
        if not hf.should_read:  # 7.0 segments are not JSONL: their verification is the frame chain's
            return
        name = hf.kind.name
        if name == LEDGER_KIND:
            sid = hf.session_id or Path(hf.rel_path).stem
            done = _take(pending.pop(hf.rel_path, None))
            if done is not None:  # verified by a worker: replay its entries into the collector
                rep, calls = done
                if cross:
                    hook = collect().ledger_hook(hf.rel_path, sid)
                    for call in calls:
                        hook(*call)
            else:
                from vakaudit.ledger.verdict import verify_ledger  # a home of 7.0 segments needs none of it

                rep = verify_ledger(root / hf.rel_path, hf.rel_path, torn=torn, deep=deep,
                                    on_entry=collect().ledger_hook(hf.rel_path, sid) if cross else None)  # fmt: skip
            report.ledgers.append(rep)
            report.ledger_count += 1
            report.bytes_verified += rep.size_bytes
            out.extend(rep.findings)
            tick.file(hf)
            return
        if hf.kind.reader is not None:  # the kind's own reader: the findings the scan reports for it
            sink = collect().sink(name) if cross else None
            bundled = getattr(hf.kind.reader, "bundle", None)
            # no cross check reads this file's rows: read for its findings alone when the reader can
            # (no rows built, no pyarrow: vakaudit.artifacts._base.Reader)
            findings_only = getattr(hf.kind.reader, "findings", None) if sink is None else None
            accepts = getattr(hf.kind.reader, "accepts", None)
            if accepts is not None and not accepts(hf.rel_path):
                # a file of the kind its reader reads no rows of (a lock file): no finding, no row
                if sink is not None:
                    sink(hf.rel_path, [])
                tick.file(hf)
            elif findings_only is not None:
                out.extend(regrade(f, torn) for f in _findings_of(root, hf, findings_only))
                tick.file(hf)
            elif bundled is not None and hf.size_bytes < bundled.file_bytes:
                bundles.add(hf, bundled, sink)  # small files of a kind: read together, as the scan does
            else:
                bundles.take(name)  # the kind's bundled files so far come first: the sinks keep walk order
                rows, found = _read_rows(root, hf, keep_rows=sink is not None)
                if sink is not None:
                    sink(hf.rel_path, rows)
                out.extend(regrade(f, torn) for f in found)
                tick.file(hf)
        if cross and name == "store_db" and hf.rel_path.endswith("store.db"):
            collect().store_dbs.append((hf.rel_path, root / hf.rel_path))
        elif cross and name == "checkpoints" and _CHECKPOINT_MANIFEST.search(hf.rel_path):
            collect().add_checkpoint(hf.rel_path, root / hf.rel_path)

    bundles = _SmallFiles(root, lambda found: out.extend(regrade(f, torn) for f in found), tick.file)
    pool, pending = _start_workers(root, files, torn, deep, cross, jobs)
    try:
        # While the workers verify the ledgers, this process reads the other files; the ledgers are then
        # taken in walk order (the collector's ledger side and its sidecar side are independent, and
        # findings are sorted by file at the end, so the report is the same as in one pass).
        for hf in files:
            if hf.rel_path not in pending:
                visit(hf)
        bundles.take_all()
        for hf in files:
            if hf.rel_path in pending:
                visit(hf)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    if collector is not None:  # none made: no check had an input (what an empty one reports)
        out.extend(regrade(f, torn) for f in collector.findings())
        report.cross_checks = collector.ran()
    if since is not None:
        from vakaudit.forensics.seal import verify_since

        out.extend(regrade(f, torn) for f in verify_since(root, since))
    fold = FindingFold()  # the cross checks and the walk fold too: the first of a code per file in full
    fold.extend(out)
    report.findings = out = fold.findings()
    out.sort(key=lambda f: (f.rel_path or "", f.line_no if f.line_no is not None else 0, f.code))
    return report


def _start_workers(root, files, torn, deep, cross, jobs) -> tuple[Any, dict[str, Any]]:  # noqa: ANN001
    """Submit the session ledgers to worker processes, largest first: ``(pool, {rel_path: future})``.

    Each future gives ``(report, calls)``; ``calls`` are the ledger's ``on_entry`` calls in file order
    (line bytes only for :data:`~vakaudit.forensics.crosscheck.RAW_KINDS`), replayed into the collector
    in walk order, so the cross checks see exactly what a verification in this process would have fed
    them. ``(None, {})`` when the ledgers are verified in this process."""
    ledgers = [hf for hf in files if hf.should_read and hf.kind.name == LEDGER_KIND]
    if jobs is not None:
        n = jobs
    elif sum(hf.size_bytes for hf in ledgers) < PARALLEL_MIN_BYTES:
        n = 1
    else:  # one worker per idle core: on a busy machine more processes only add the hand-over's cost
        n = idle_cores()
    n = min(n, len(ledgers))
    if n < 2:
        return None, {}
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    pool = ProcessPoolExecutor(max_workers=n, mp_context=ctx)
    pending = {}
    for hf in sorted(ledgers, key=lambda hf: -hf.size_bytes):  # the largest first: none starts last
        args = (str(root / hf.rel_path), hf.rel_path, torn, deep, cross)
        pending[hf.rel_path] = pool.submit(_verify_one, *args)
    return pool, pending


def idle_cores() -> int:
    """The cores no other task is running on as verify starts: see :func:`idle_cores_of`."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        with open("/proc/loadavg", "rb") as fh:
            text: bytes | None = fh.read(256)
    except OSError:
        text = None
    return idle_cores_of(cpus, text, os.getloadavg()[0] if text is None and hasattr(os, "getloadavg") else 0.0)


def idle_cores_of(cpus: int, proc_loadavg: bytes | None, load_1min: float) -> int:
    """``cpus`` less the tasks running now besides this one: the fourth field of Linux's
    ``/proc/loadavg`` (``running/total``; this process is one of the running). The 1-min load average
    counted the benchmark's or the user's previous run of a second ago as load for a minute, which
    made back-to-back runs serial on an idle machine; it is used only where that file is missing
    (``proc_loadavg`` None), rounded."""
    if proc_loadavg is not None:
        try:
            running = int(proc_loadavg.split()[3].split(b"/")[0])
        except (IndexError, ValueError):
            running = 1
        return max(cpus - max(running - 1, 0), 0)
    return max(int(cpus - load_1min + 0.5), 0)


def _take(fut: Any) -> tuple | None:
    """A worker's result; None when there is none (then the ledger is verified in this process)."""
    if fut is None:
        return None
    try:
        return fut.result()
    except Exception:  # noqa: BLE001 - a lost worker: that ledger is verified in this process
        return None


def _verify_one(path: str, rel_path: str, torn: TornPolicy, deep: bool, cross: bool) -> tuple:
    """One ledger in a worker: its report and its ``on_entry`` calls."""
    calls: list[tuple] = []
    if cross:
        from vakaudit.forensics.crosscheck import RAW_KINDS

        add = calls.append

        def on_entry(line_no: int, entry_id: str, kind: str, parent_id: str | None, raw: bytes) -> None:
            add((line_no, entry_id, kind, parent_id, raw if kind in RAW_KINDS else b""))

    from vakaudit.ledger.verdict import verify_ledger

    rep = verify_ledger(path, rel_path, torn=torn, deep=deep, on_entry=on_entry if cross else None)
    return rep, calls


class _SmallFiles:
    """The small files of the kinds whose readers can read many files together (the reader's
    ``bundle``, as the scan uses it): each file read, with its findings, into its kind's open bundle,
    whose rows are built for all of them at once (a file of a few rows then costs its reading, not an
    Arrow batch); each file's rows go to its cross-check sink, in walk order. Should building the
    rows fail, each of those files is read again alone (:func:`_read_rows`)."""

    def __init__(self, root: Path, report: Callable[[list[Finding]], None], done: Callable[[Any], None]) -> None:
        self.root, self.report, self.done = root, report, done
        # per kind: the bundle, and its files with their findings and sink
        self.open: dict[str, tuple[Any, list[tuple[Any, list[Finding], Any]]]] = {}

    def add(self, hf: Any, bundled: Any, sink: Any) -> None:
        bundle, files = self.open.get(hf.kind.name) or self.open.setdefault(hf.kind.name, (bundled.new(), []))
        found = FindingFold()
        ctx = _context(self.root, hf, found.append)
        try:
            bundle.add(ctx)
        except Exception as exc:  # noqa: BLE001 - a reader bug must not stop verification
            found.append(_reader_failed(hf, exc))
        files.append((hf, found.findings(), sink))
        if bundle.full:
            self.take(hf.kind.name)

    def take(self, kind: str) -> None:
        if kind not in self.open:
            return
        bundle, files = self.open.pop(kind)
        want = any(sink is not None for _hf, _found, sink in files)
        try:
            batches = bundle.batches()
        except Exception:  # noqa: BLE001 - a bug building many files' rows must not cost them
            for hf, _found, sink in files:
                rows, found = _read_rows(self.root, hf, keep_rows=sink is not None)
                if sink is not None:
                    sink(hf.rel_path, rows)
                self.report(found)
                self.done(hf)
            return
        by_file: dict[str, list[dict]] = {}
        if want:
            for batch in batches:
                for row in _rows_of(batch, ("rel_path",)):
                    by_file.setdefault(row.pop("rel_path", None), []).append(row)
        for hf, found, sink in files:
            if sink is not None:
                sink(hf.rel_path, by_file.get(shown(hf.rel_path), []))
            self.report(found)
            self.done(hf)

    def take_all(self) -> None:
        for kind in list(self.open):
            self.take(kind)


def _reader_failed(hf: Any, exc: Exception) -> Finding:
    return Finding(FindingCode.READER_FAILED, Severity.ERROR, hf.rel_path,
                   f"the {hf.kind.name} reader failed: {type(exc).__name__}: {exc}")  # fmt: skip


def _rows_of(batch: Any, extra: tuple[str, ...] = ()) -> Iterator[dict]:
    """The rows the cross checks read (and the ``extra`` columns), from one batch: null columns left
    out (the checks read with .get)."""
    part = batch.select([c for c in (*extra, *_ROW_COLUMNS) if c in batch.schema.names])
    for i in range(0, part.num_rows, 8192):
        yield from ({k: v for k, v in r.items() if v is not None} for r in part.slice(i, 8192).to_pylist())


def _context(root: Path, hf: Any, emit: Callable[[Finding], None]) -> ReadContext:
    """The context a kind's reader reads the walked file ``hf`` in, its findings going to ``emit``."""
    return ReadContext(root, shown(hf.rel_path), hf.home_scope, hf.session_id, emit=emit, fs_rel_path=hf.rel_path)


def _findings_of(root: Path, hf: Any, findings_only: Callable[[ReadContext], Any]) -> list[Finding]:
    """A file read by its kind's reader for the findings it makes, no rows built (the reader's
    ``findings``)."""
    found = FindingFold()
    ctx = _context(root, hf, found.append)
    try:
        findings_only(ctx)
    except Exception as exc:  # noqa: BLE001 - a reader bug must not stop verification
        found.append(_reader_failed(hf, exc))
    return found.findings()


def _read_rows(root: Path, hf: Any, *, keep_rows: bool) -> tuple[list[dict], list[Finding]]:
    """A file read by its kind's reader: (the rows the cross checks use when ``keep_rows``, findings)."""
    found = FindingFold()
    ctx = _context(root, hf, found.append)
    rows: list[dict] = []
    try:
        for batch in hf.kind.reader(ctx):
            if keep_rows:  # the checks read rows with .get: null columns are left out (bounded memory)
                rows.extend(_rows_of(batch))
    except Exception as exc:  # noqa: BLE001 - a reader bug must not stop verification
        found.append(_reader_failed(hf, exc))
    return rows, found.findings()
