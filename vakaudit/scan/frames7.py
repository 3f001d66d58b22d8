"""A 7.0 session ledger's frames as ``entries`` rows (baseline7.md §3, §5, §8).

One row per frame of each segment of a conversation directory, in chain order: ``segment``,
``frame_index``, ``offset_bytes`` (the frame's offset in its segment file), ``stored_bytes`` and
``size_bytes`` (the frame on disk), ``plain_bytes`` (the entry's JSON; null when sealed and locked),
``sealed``. The plaintext columns come from the JSONL path itself: the readable entries are handed,
one per line, to :class:`~vakaudit.artifacts.session_ledger.LedgerScanner`, so a 7.0 entry and a
JSONL line become a row through the same code. A frame whose entry is not readable keeps its
plaintext columns null. ``chain_ok`` / ``chain_status`` are the frame chain's: the segment reader
verified every frame it yields (a break is one of its findings).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from vakaudit.artifacts.session_ledger import ENTRIES_SCHEMA, LedgerScanner, path_facts
from vakaudit.findings import Finding
from vakaudit.storage import KeyRing, TenantKeys, iter_segments

#: a conversation directory holds its ledger's segments (baseline7.md §8)
LEDGER_SEGMENT_KIND = "session_ledger"
#: the ``entries`` part holding every frame row of a 7.0 home (rewritten on every scan)
FRAMES_PART = "frames7.parquet"


@dataclass(slots=True)
class FrameEntries:
    """Every frame of a 7.0 home's session ledgers as ``entries`` rows, and the segment findings."""

    table: pa.Table
    findings: list[Finding] = field(default_factory=list)


def read_frame_entries(root: Path, files: list, keys: KeyRing | None = None) -> FrameEntries:
    """The ``entries`` rows of every conversation directory of the 7.0 home ``root``."""
    from vakaudit.scan.store7 import chain_key

    tenants = tenant_keys(root, keys)
    tables, findings = [], []
    for rel_dir in ledger_dirs(files):
        t, f = frame_entries(root, rel_dir, chain_key(root / rel_dir, rel_dir, tenants))
        tables.append(t)
        findings += f
    for _t, tk in tenants:
        findings += tk.findings
    table = pa.concat_tables(tables) if tables else ENTRIES_SCHEMA.empty_table()
    return FrameEntries(table, findings)


def ledger_dirs(files: list) -> list[str]:
    """Directories (relative to the home) of the session ledger kind's segment files, sorted."""
    dirs = set()
    for hf in files:
        if hf.kind.name == LEDGER_SEGMENT_KIND and hf.file_type == "file" and "/" in hf.rel_path:
            parent, name = hf.rel_path.rsplit("/", 1)
            if name.startswith("seg-"):
                dirs.add(parent)
    return sorted(dirs)


def tenant_keys(root: Path, keys: KeyRing | None) -> list[tuple[Path, TenantKeys]]:
    """Each tenant directory of the home with its key reader."""
    from vakaudit.scan.store7 import tenant_dirs

    return [(t, TenantKeys(t / "keys", keys, rel_dir=f"{t.relative_to(root).as_posix()}/keys"))
            for t in tenant_dirs(root)]


def frame_entries(root: Path, rel_dir: str, key: bytes | None) -> tuple[pa.Table, list[Finding]]:
    """The ``entries`` rows of the conversation directory ``rel_dir``, and the segment findings."""
    walk = iter_segments(root / rel_dir, key, rel_dir=rel_dir)
    meta: list[tuple[str, int, object]] = []  # (segment rel_path, segment number, frame)
    for segment, frames in walk:
        rel = f"{rel_dir}/{segment.rel_path.rsplit('/', 1)[-1]}" if segment.rel_path else rel_dir
        meta += [(rel, segment.number, f) for f in frames]
    session_id = rel_dir.rsplit("/", 1)[-1]
    plain = _plaintext_rows(rel_dir, session_id, [f.entry for _r, _n, f in meta])
    take = []
    k = 0
    for _rel, _n, f in meta:
        if f.entry is not None and plain is not None:
            take.append(k)
            k += 1
        else:
            take.append(None)
    base = plain if plain is not None else ENTRIES_SCHEMA.empty_table()
    t = base.take(pa.array(take, pa.int64())) if meta else ENTRIES_SCHEMA.empty_table()
    _sid, agent, wskey = path_facts(rel_dir + "/ledger.jsonl")
    n = len(meta)
    cols = {
        "rel_path": [r for r, _n, _f in meta],
        "session_id": [session_id] * n,
        "agent_id": [agent] * n,
        "workspace_key": [wskey] * n,
        "line_no": [f.index + 1 for _r, _n, f in meta],
        "offset_bytes": [f.offset for _r, _n, f in meta],
        "size_bytes": [f.size_bytes for _r, _n, f in meta],
        "chain_ok": [True] * n,
        "chain_status": ["chain_ok"] * n,
        "segment": [num for _r, num, _f in meta],
        "frame_index": [f.index for _r, _n, f in meta],
        "stored_bytes": [f.size_bytes for _r, _n, f in meta],
        "plain_bytes": [f.plain_bytes for _r, _n, f in meta],
        "sealed": [f.sealed for _r, _n, f in meta],
    }
    for name, values in cols.items():
        i = ENTRIES_SCHEMA.get_field_index(name)
        t = t.set_column(i, ENTRIES_SCHEMA.field(name), pa.array(values, ENTRIES_SCHEMA.field(name).type))
    return t.cast(ENTRIES_SCHEMA), list(walk.findings)


def _plaintext_rows(rel_dir: str, session_id: str, entries: list[bytes | None]) -> pa.Table | None:
    """The plaintext columns of the readable entries, one row each, through the JSONL line reader;
    None when an entry holds a raw line feed (it would not be one line: no plaintext columns)."""
    readable = [e for e in entries if e is not None]
    if any(b"\n" in e for e in readable):
        return None
    data = b"".join(e + b"\n" for e in readable)
    scanner = LedgerScanner(f"{rel_dir}/ledger.jsonl", session_id=session_id)
    batches = list(scanner.scan(io.BytesIO(data), len(data)))
    t = pa.Table.from_batches(batches, schema=ENTRIES_SCHEMA) if batches else ENTRIES_SCHEMA.empty_table()
    return t if t.num_rows == len(readable) else None


def segment_changes(files: list, prev_files: dict) -> list[Finding]:
    """What breaks 7.0's guarantees between two scans (baseline7.md §5): a ``.sealed`` segment whose
    size or mtime changed (sealed segments are immutable) and a ``.log`` segment that shrank (frames
    are only appended), each an ``append_only_violation``."""
    from vakaudit.findings import FindingCode, Severity

    out = []
    for hf in files:
        prev = prev_files.get(hf.rel_path)
        name = hf.rel_path.rsplit("/", 1)[-1]
        if prev is None or not name.startswith("seg-") or hf.kind.v7 is None:
            continue
        if name.endswith(".sealed") and (prev.get("size") != hf.size_bytes or prev.get("mtime_ns") != hf.mtime_ns):
            why = f"sealed segment changed since the last scan (size {prev.get('size')} -> {hf.size_bytes})"
        elif name.endswith(".log") and hf.size_bytes < prev.get("size", 0):
            why = f"open segment shrank since the last scan ({prev.get('size')} -> {hf.size_bytes} bytes)"
        else:
            continue
        out.append(Finding(FindingCode.APPEND_ONLY_VIOLATION, Severity.ERROR, hf.rel_path,
                           f"{why}; 7.0 frames are append-only and sealed segments immutable"))
    return out
