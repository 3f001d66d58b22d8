"""The scan folder's ``manifest.json``: its name, its typed form, the one reader and writer of it.

A scan folder is vakaudit's own output; a manifest that cannot be read is a caller problem (a
folder damaged or edited by hand), raised as :class:`ScanError` naming the file and what to do.
:class:`Manifest` is what a scan writes (per file: identity, reader state, the parts holding its
rows), :class:`ScanState` a file's mode in one scan, :class:`ScanStats` the scan's counters.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from vakaudit.errors import ScanError
from vakaudit.findings import Finding
from vakaudit.names import raw_bytes, shown

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

    from vakaudit.scan.walk import HomeFile


__all__ = [
    "MANIFEST",
    "MANIFEST_FORMAT",
    "Manifest",
    "ScanState",
    "ScanStats",
    "INCOMPLETE",
    "is_scan_dir",
    "read_manifest",
    "scan_unfinished",
]

#: the file that makes a folder a scan folder
MANIFEST = "manifest.json"
#: present while a scan writes into its folder: created before the first part changes, removed once
#: the new manifest is in place. A folder that still holds it after the scan ended holds a scan that
#: did not finish (killed, crashed, disk full): its parts and its manifest may disagree, so readers
#: refuse it and the next scan into it starts over
INCOMPLETE = ".scan-incomplete"


def is_scan_dir(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` holds a scan manifest (a scan folder, readable or not) or a scan that did
    not finish."""
    folder = Path(os.fspath(path)).expanduser()
    return (folder / MANIFEST).is_file() or (folder / INCOMPLETE).exists()


def scan_unfinished(path: str | os.PathLike[str]) -> bool:
    """True when a scan into ``path`` began and did not finish (or is still running)."""
    return (Path(os.fspath(path)).expanduser() / INCOMPLETE).exists()


def read_manifest(scan: str | os.PathLike[str], *, finished: bool = True) -> dict[str, Any]:
    """The manifest of the scan folder ``scan``; :class:`ScanError` when it is missing or unreadable,
    and (``finished``, for readers of the tables) when a scan into the folder did not finish."""
    folder = Path(os.path.abspath(Path(os.fspath(scan)).expanduser()))
    path = folder / MANIFEST
    if finished and scan_unfinished(folder):
        raise ScanError(
            f"the scan in {folder} did not finish (or is still running): its tables may be incomplete; "
            f"run `vakaudit scan HOME --out {folder}` again"
        )
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScanError(
            f"no vakaudit scan in {folder}: {MANIFEST} is missing; run `vakaudit scan HOME --out {folder}`"
        ) from None
    except (OSError, ValueError) as exc:
        raise ScanError(
            f"cannot read the scan manifest {path} ({type(exc).__name__}: {exc}); rescan with "
            f"`vakaudit scan HOME --out {folder} --full`, or delete {folder}"
        ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("home"), str):
        raise ScanError(
            f"{path} is not a vakaudit scan manifest (no 'home'); rescan with "
            f"`vakaudit scan HOME --out {folder} --full`, or delete {folder}"
        )
    return doc


class ScanState(StrEnum):
    """A file's mode in one scan: planned (``full``, ``append``, ``unchanged``, ``not_read``) and, in
    the ``files`` table's ``scan_state``, ``appended`` for a file read from where the last scan stopped."""

    FULL = "full"
    APPEND = "append"
    APPENDED = "appended"
    UNCHANGED = "unchanged"
    NOT_READ = "not_read"


MANIFEST_FORMAT = 3  # 3: findings rows have a count (folds of repeated findings)


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
    locked_frames: int = 0  # 7.0 frames whose plaintext the scan could not read (sealed, no key)

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


@dataclass(slots=True)
class _ItemResult:
    """What reading one file gave: its rows and findings, and the state the next scan resumes from."""

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
        parts = list(prev.get("parts", [])) if r.mode == ScanState.APPEND else []
        if r.part:
            parts.append(r.part)
        entry["parts"] = parts
        entry["part_rows"] = (prev.get("part_rows", 0) if r.mode == ScanState.APPEND else 0) + (
            r.rows if r.part else 0
        )
        resumed = (r.state.get(hf.kind.resumable.state_key) or {}) if hf.kind.resumable is not None else {}
        if resumed.get("offset") is not None and resumed["offset"] != hf.size_bytes:
            # a write in flight: the next scan must look again even if size/mtime stay the same
            entry["size"] = resumed["offset"]
    elif states.get(hf.rel_path) == ScanState.UNCHANGED:
        entry["state"] = prev.get("state", {})
        entry["parts"] = prev.get("parts", [])
        entry["part_rows"] = prev.get("part_rows", 0)
    return entry


def _files_out(files: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The manifest's ``files`` as JSON can hold them: a name that is not UTF-8 under its escaped
    form (:func:`~vakaudit.names.shown`), its bytes in hex under ``rel_path_raw``."""
    out: dict[str, dict[str, Any]] = {}
    for rel, e in files.items():
        raw = raw_bytes(rel)
        out[shown(rel)] = e if raw is None else {**e, "rel_path_raw": raw.hex()}
    return out


def _files_in(files: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The manifest's ``files`` keyed by the names the walk yields (:func:`_files_out` undone)."""
    if not any("rel_path_raw" in e for e in files.values()):
        return files
    out: dict[str, dict[str, Any]] = {}
    for rel, e in files.items():
        raw = e.get("rel_path_raw")
        if isinstance(raw, str):
            try:
                rel = os.fsdecode(bytes.fromhex(raw))
            except ValueError:
                pass
            e = {k: v for k, v in e.items() if k != "rel_path_raw"}
        out[rel] = e
    return out


@dataclass(slots=True)
class Manifest:
    """A scan folder's ``manifest.json``: which scan wrote it, its counters and table row counts, and
    per file (rel_path) its identity, reader state and the parts holding its rows."""

    home: str
    layout: str | None = None
    scanned_at: str | None = None
    generation: int = 0
    tool_version: str | None = None
    format: int | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, int] = field(default_factory=dict)
    reader_findings: int = 0
    files: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Manifest:
        return cls(
            home=doc["home"],
            layout=doc.get("layout"),
            scanned_at=doc.get("scanned_at"),
            generation=int(doc.get("generation", 0)),
            tool_version=doc.get("tool_version"),
            format=doc.get("format"),
            stats=doc.get("stats", {}),
            tables=doc.get("tables", {}),
            reader_findings=int(doc.get("reader_findings", 0)),
            files=_files_in(doc.get("files", {})),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "tool_version": self.tool_version,
            "home": self.home,
            "layout": self.layout,
            "scanned_at": self.scanned_at,
            "generation": self.generation,
            "stats": self.stats,
            "tables": self.tables,
            "reader_findings": self.reader_findings,
            "files": _files_out(self.files),
        }

    def write(self, out: Path) -> None:
        """Write ``out/manifest.json`` whole (a temporary file renamed over it)."""
        tmp = out / f".{MANIFEST}.tmp"
        tmp.write_bytes(orjson.dumps(self.to_dict(), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2))
        os.replace(tmp, out / MANIFEST)
