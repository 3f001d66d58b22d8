"""What a scan reads: the previous manifest, each file's mode, and the tasks the files are bundled into.

A file unchanged since the last scan (inode, size, mtime) is not read; an append-only file that grew
is read from where the last scan stopped (``append``); any other is read from byte 0 (``full``).
Tasks bundle small files (files of resumable kinds, the ledgers, together; side files together) by
expected CPU (each kind's ``read_cost``); a big file is a task of its own.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vakaudit.artifacts import get_kind
from vakaudit.errors import ScanError, UsageError
from vakaudit.findings import Finding, FindingCode, Severity
from vakaudit.outputs import check_output
from vakaudit.scan.manifest import (
    MANIFEST,
    MANIFEST_FORMAT,
    Manifest,
    ScanState,
    read_manifest,
    scan_unfinished,
)
from vakaudit.scan.walk import HomeFile

SMALL_TASK_FILES = 256  # files bundled into one task at most
# a side file costing this much (in ledger bytes, see _item_cost) is a task of its own; a bundle stops
# growing here: ~16 MB of JSONL sidecars, ~128 MB of checkpoints (each task writes a part per kind)
SIDE_TASK_COST = 32 << 20
# the same for ledgers: each task writes one entries part, and a Parquet row group costs ~5 ms of zstd
# set-up over the 42 columns whatever its rows, so ledger bundles are larger; on a small home they are
# cut so that every worker gets several
LEDGER_TASK_BYTES = 64 << 20
MIN_LEDGER_TASK_BYTES = 1 << 20


@dataclass(slots=True)
class _Item:
    rel_path: str
    kind: str
    home_scope: str
    session_id: str | None
    size: int
    mode: str  # full | append
    prev: dict[str, Any] | None = None


def _violation(rel_path: str, why: str) -> Finding:
    return Finding(
        FindingCode.APPEND_ONLY_VIOLATION,
        Severity.ERROR,
        rel_path,
        f"append-only file was rewritten since the last scan ({why}); rescanned from byte 0",
    )


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


def _load_manifest(out: Path, home: Path, *, full: bool = False) -> Manifest | None:
    """The previous scan's manifest in ``out`` (None: start over); with ``full`` an unreadable one
    is started over too."""
    from vakaudit import __version__

    path = out / MANIFEST
    if scan_unfinished(out):
        return None  # a scan into out did not finish: its parts cannot be trusted, start over
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
    return Manifest.from_dict(manifest)


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
        if layout == "g3" or not hf.should_read or kind.schema is None:
            states[rel] = ScanState.NOT_READ
            continue
        prev = None if full else prev_files.get(rel)
        if prev is not None and prev.get("kind") != kind.name:
            prev = None
        append_capable = kind.append_only
        resume_key = kind.resumable.state_key if kind.resumable is not None else None
        if prev is not None and "state" in prev:
            same_file = prev.get("inode") == hf.inode and prev.get("device") == hf.device
            if same_file and prev.get("size") == hf.size_bytes and prev.get("mtime_ns") == hf.mtime_ns:
                states[rel] = ScanState.UNCHANGED
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
                and not (pstate.get(resume_key) or {}).get("torn")
                and pstate.get("ends_with_lf", True)
            ):
                items.append(
                    _Item(
                        rel, kind.name, hf.home_scope, hf.session_id, hf.size_bytes, ScanState.APPEND, pstate
                    )
                )
                states[rel] = ScanState.APPEND
                continue
        items.append(_Item(rel, kind.name, hf.home_scope, hf.session_id, hf.size_bytes, ScanState.FULL))
        states[rel] = ScanState.FULL
    return items, states, findings


def _group(items: list[_Item], jobs: int = 1) -> list[list[_Item]]:
    """Tasks: small files bundled (files of resumable kinds, the ledgers, together; side files
    together), a big file alone; the costliest first.

    A bundle of ledgers writes one part of their table (``entries``), so such bundles are as large
    as ``LEDGER_TASK_BYTES`` allows, but cut so that each of ``jobs`` workers gets several of them.
    """
    by_path = sorted(items, key=lambda i: i.rel_path)
    ledgers = [i for i in by_path if get_kind(i.kind).resumable is not None]
    ledger_bytes = sum(i.size for i in ledgers)
    budget = max(MIN_LEDGER_TASK_BYTES, min(LEDGER_TASK_BYTES, ledger_bytes // (4 * jobs) + 1))
    tasks = _bundle(ledgers, budget)
    tasks += _bundle([i for i in by_path if get_kind(i.kind).resumable is None], SIDE_TASK_COST, _item_cost)
    # longest first, so the pool's last tasks are short and both workers finish together
    tasks.sort(key=lambda task: -_task_cost(task))
    return tasks


def _item_cost(it: _Item) -> float:
    """A file's expected CPU in ledger bytes: its kind's ``read_cost`` per byte and ``_COST_PER_FILE``."""
    return it.size * get_kind(it.kind).read_cost + _COST_PER_FILE


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


# a file's CPU besides its kind's read_cost per byte, in ledger bytes: opening it, its anchor, its
# result (a 1,300-file folder of small delivery jobs costs ~0.085 ms a file, about half of it whatever
# the file's size)
_COST_PER_FILE = 16 << 10
