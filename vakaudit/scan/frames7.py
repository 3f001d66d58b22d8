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
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pyarrow as pa

from vakaudit.artifacts import LEDGER_KIND
from vakaudit.artifacts.session_ledger import (
    BLANK_FIELD,
    ENTRIES_SCHEMA,
    ENTRY_FIELDS_SCHEMA,
    ENVELOPE_FIELD,
    UNPARSED_FIELD,
    LedgerScanner,
    path_facts,
)
from vakaudit.findings import Finding, FindingCode, Severity
from vakaudit.ledger.vocab import at_turn_attribution
from vakaudit.scan.parts import _as_table, _read_part, _rows_where
from vakaudit.storage import KeyRing, TenantKeys, iter_segments
from vakaudit.storage.commit import commit_point, is_commit_point
from vakaudit.storage.frames import HASH_LEN

#: the entry_fields pseudo-fields that hold a line's terminator (exactly one per line)
_LINE_FIELDS = (ENVELOPE_FIELD, UNPARSED_FIELD, BLANK_FIELD)
#: an ObjectRef inside an entry's JSON (baseline7.md §4: ``{"id": <64 hex>, "len": <u64>}``, e.g. a
#: binding's ``interface``, an evidence body's ``body``, a sealed field's ``object``), in the field
#: order vak writes or the other one, with or without spaces (the order is serde's; other writers'
#: unconfirmed)
_OBJECT_REF = re.compile(
    rb'\{\s*"id"\s*:\s*"([0-9a-f]{64})"\s*,\s*"len"\s*:\s*\d+\s*\}'
    rb'|\{\s*"len"\s*:\s*\d+\s*,\s*"id"\s*:\s*"([0-9a-f]{64})"\s*\}'
)


def object_refs(entry: bytes) -> list[str]:
    """The object ids an entry's JSON refers to through ObjectRefs, in order of appearance."""
    return [(m.group(1) or m.group(2)).decode("ascii") for m in _OBJECT_REF.finditer(entry)]


@dataclass(slots=True)
class FrameEntries:
    """Every frame of a 7.0 home's session ledgers as ``entries`` rows, and the segment findings.

    ``segments``: per segment file read or trusted, ``(scan_state, bytes_read, manifest state)``:
    ``full`` (read whole), ``appended`` (an open ``.log`` read on from its last verified frame) or
    ``unchanged`` (trusted from the last scan, not opened); the manifest state is what the next
    scan trusts (never key material)."""

    table: pa.Table
    findings: list[Finding] = field(default_factory=list)
    segments: dict[str, tuple[str, int, dict]] = field(default_factory=dict)
    #: the ``entry_fields`` rows of the readable entries: ``rel_path`` is the conversation directory,
    #: sizes are of the entry's JSON (a frame has no line feed: the envelope counts none)
    fields: pa.Table = field(default_factory=ENTRY_FIELDS_SCHEMA.empty_table)
    #: object id -> ``entry:<segment rel_path>#<frame_index>`` (its ``entries`` row) of each readable
    #: entry naming it
    #: (frames are read whole when unlocked, so this is complete whenever entries are readable)
    referenced: dict[str, list[str]] = field(default_factory=dict)
    #: how many ``entries`` rows were read (in ``table``, or handed to the sink)
    rows: int = 0


def read_frame_entries(root: Path, files: list, keys: KeyRing | None = None, *,
                       prev_files: dict | None = None, prev_part: Path | None = None,
                       prev_fields: Path | None = None,
                       prev_referenced: dict[str, list[str]] | None = None,
                       sink: Callable[[pa.Table], None] | None = None) -> FrameEntries:
    """The ``entries`` rows of every conversation directory of the 7.0 home ``root``.

    With ``sink``, each conversation's rows go to it as they are read (the scan writes them to
    Parquet: memory stays that of one conversation whatever the home's size) and
    ``FrameEntries.table`` stays empty; without it they are gathered in ``table``.
    ``FrameEntries.rows`` counts them either way.

    With the previous scan's manifest ``prev_files`` and its frame rows ``prev_part``, a rescan
    trusts what 7.0 guarantees (baseline7.md §3.6): a sealed segment whose size, mtime and
    ``seals.log`` entry are as recorded is not opened, and an open ``.log`` that only grew is read
    from its last verified frame once its anchors (first and last recorded frame hashes) are
    still in place. A changed sealed segment, a ``.log`` that shrank or whose anchors moved is an
    ``append_only_violation`` (:func:`segment_changes`, :func:`anchor_changes`) and is read whole.
    Readable entries' rows depend on the entries before them (turns), so a conversation whose
    frames are readable keeps its rows only when none of its segments changed; its
    ``entry_fields`` rows (from ``prev_fields``) and the objects its entries name
    (``prev_referenced``: object id -> ``entry:`` references, the last scan's ``objects``) are then
    kept too.
    """
    from vakaudit.scan.store7 import chain_key

    tenants = tenant_keys(root, keys)
    prev_files = prev_files or {}
    prev_rows = prev_field_rows = None
    if prev_files and prev_part is not None and prev_part.is_file():
        prev_rows = RowsByPath.of_file(prev_part)
        if keys is not None and prev_fields is not None and prev_fields.is_file():
            prev_field_rows = _read_part(prev_fields, ENTRY_FIELDS_SCHEMA)
    refs_by_dir: dict[str, list[tuple[str, str]]] = {}
    for oid, refs in (prev_referenced or {}).items():
        for ref in refs:
            if ref.startswith("entry:") and "/" in ref:
                refs_by_dir.setdefault(ref[len("entry:"):].rsplit("#", 1)[0].rsplit("/", 1)[0], []).append((oid, ref))
    out = FrameEntries(ENTRIES_SCHEMA.empty_table())
    tables = []
    fields: dict[str, dict] = {}
    kept_fields: list[pa.Table] = []
    by_dir: dict[str, list] = {}
    for hf in files:
        if "/" in hf.rel_path:
            by_dir.setdefault(hf.rel_path.rsplit("/", 1)[0], []).append(hf)
    for rel_dir in ledger_dirs(files):
        key = chain_key(root / rel_dir, rel_dir, tenants)
        resume, kept = {}, {}
        if prev_rows is not None and key is None:
            resume, kept = _trusted(root, by_dir.get(rel_dir, []), prev_files, prev_rows, out.findings)
        elif prev_rows is not None and prev_field_rows is not None:
            resume, kept = _trusted_unlocked(root, by_dir.get(rel_dir, []), prev_files, prev_rows, out.findings)
        acc: dict = {}
        t, f, segs = frame_entries(root, rel_dir, key, resume=resume, kept=kept, referenced=out.referenced,
                                   fields=acc)
        if kept and key is not None:  # an unchanged unlocked conversation: what its entries gave
            kept_fields.append(_rows_where(prev_field_rows, "rel_path", {rel_dir}, keep=True))
            for oid, ref in refs_by_dir.get(rel_dir, ()):
                out.referenced.setdefault(oid, []).append(ref)
        # a directory with readable entries is otherwise read whole (see _trusted), so its fields
        # are counted afresh; a resumed locked one has none
        if acc:
            fields[rel_dir] = acc
        out.rows += t.num_rows
        if sink is not None:
            sink(t)
        else:
            tables.append(t)
        out.findings += f
        out.segments.update(segs)
    for _t, tk in tenants:
        out.findings += tk.findings
    if tables:
        out.table = pa.concat_tables(tables)
    out.fields = _fields_table(fields)
    if kept_fields:
        out.fields = pa.concat_tables([*kept_fields, out.fields])
    return out


def _fields_table(fields: dict[str, dict]) -> pa.Table:
    cols: dict[str, list] = {n: [] for n in ENTRY_FIELDS_SCHEMA.names}
    for rel_dir in sorted(fields):
        session_id = rel_dir.rsplit("/", 1)[-1]
        for (kind, name), (count, size) in sorted(fields[rel_dir].items(), key=lambda kv: (kv[0][0] or "", kv[0][1])):
            for col, v in zip(cols, (rel_dir, session_id, kind, name, count, size), strict=True):
                cols[col].append(v)
    return pa.table(cols, schema=ENTRY_FIELDS_SCHEMA)


def _trusted(root: Path, dir_files: list, prev_files: dict, prev_rows: RowsByPath,
             findings: list[Finding]) -> tuple[dict, dict]:
    """``(resume, kept rows)`` of one conversation directory's segment files: what the last scan
    verified and this one may trust (see :func:`read_frame_entries`)."""
    resume, kept, readable, grew = trusted_segments(
        root, dir_files, prev_files, findings, state_key="frames7", unlocked=False,
        rows_for=lambda rel, _st: prev_rows.rows(rel))
    segs = [hf for hf in dir_files if _is_segment(hf.rel_path)]
    if readable and (grew or len(resume) < len(segs)):
        # plaintext rows depend on the entries before them (turns): read the directory whole
        return {}, {}
    return resume, kept


def _trusted_unlocked(root: Path, dir_files: list, prev_files: dict, prev_rows: RowsByPath,
                      findings: list[Finding]) -> tuple[dict, dict]:
    """``(resume, kept rows)`` of an unlocked conversation directory: every segment, when none
    changed since the last unlocked scan (its rows, turns included, are then what a read would
    give), else nothing."""
    resume, kept, _readable, grew = trusted_segments(
        root, dir_files, prev_files, findings, state_key="frames7", unlocked=True,
        rows_for=lambda rel, _st: prev_rows.rows(rel))
    segs = [hf for hf in dir_files if _is_segment(hf.rel_path)]
    if grew or len(resume) < len(segs):
        return {}, {}
    return resume, kept


class RowsByPath:
    """A table's rows by their ``rel_path``, grouped in one pass (a rescan asks for every segment's).

    The table is in memory (``RowsByPath(table)``) or the last scan's Parquet part
    (:meth:`of_file`): then only its ``rel_path`` column is read, a row group at a time, and the rows
    asked for come from the row groups that hold them, one row group held at a time. A scan writes
    a file's rows together, so a path's rows are one run, a slice; rows of a path in several runs
    are the slices of its runs, in table order. The index holds each path's runs, not its rows, so
    a rescan's memory grows with the home's paths, not with its frames."""

    def __init__(self, table: pa.Table) -> None:
        self.table: pa.Table | None = table
        self.schema = table.schema
        self._file = None
        self._path: Path | None = None
        self._at: dict[str, list[list[int]]] | None = None  # path -> its runs [first row, rows]
        self._group: tuple[int, pa.Table] | None = None  # the row group read last: (index, rows)
        self._starts: list[int] = []  # first row of each row group

    @classmethod
    def of_file(cls, path: Path) -> RowsByPath:
        import pyarrow.parquet as pq

        f = pq.ParquetFile(path)
        self = cls(f.schema_arrow.empty_table())
        self.table, self._file, self._path = None, f, path
        start = 0
        for i in range(f.metadata.num_row_groups):
            self._starts.append(start)
            start += f.metadata.row_group(i).num_rows
        return self

    def rows(self, rel: str) -> pa.Table:
        if self._at is None:
            self._at = self._index()
        runs = self._at.get(rel)
        if not runs:
            return self.schema.empty_table()
        parts = [self._slice(first, n) for first, n in runs]
        return parts[0] if len(parts) == 1 else pa.concat_tables(parts)

    def _index(self) -> dict[str, list[list[int]]]:
        at: dict[str, list[list[int]]] = {}
        last: list[int] | None = None  # the open run
        last_path: object = None
        row = 0
        for values in self._paths():
            for path in values:
                if last is not None and path == last_path:
                    last[1] += 1
                else:
                    last, last_path = [row, 1], path
                    at.setdefault(path, []).append(last)
                row += 1
        return at

    def _paths(self) -> Iterator[list]:
        """The ``rel_path`` values in table order, a chunk at a time."""
        if self._file is None:
            yield from (chunk.to_pylist() for chunk in self.table["rel_path"].chunks)
            return
        # a row group at a time, as its dictionary (a few hundred strings) and codes: a dense read
        # of the column cost a 600-conversation rescan ~100 MB of peak memory
        import pyarrow.parquet as pq

        f = pq.ParquetFile(self._path, read_dictionary=["rel_path"])
        for g in range(f.metadata.num_row_groups):
            for chunk in f.read_row_group(g, columns=["rel_path"])["rel_path"].chunks:
                if pa.types.is_dictionary(chunk.type):
                    names = chunk.dictionary.to_pylist()
                    yield [names[c] for c in chunk.indices.to_pylist()]
                else:
                    yield chunk.to_pylist()

    def _slice(self, start: int, n: int) -> pa.Table:
        if self._file is None:
            return self.table.slice(start, n)
        import bisect

        parts = []
        while n:
            g = bisect.bisect_right(self._starts, start) - 1
            if self._group is None or self._group[0] != g:
                self._group = (g, self._file.read_row_group(g))
            rows = self._group[1]
            k = min(n, self._starts[g] + rows.num_rows - start)
            parts.append(rows.slice(start - self._starts[g], k))
            start, n = start + k, n - k
        return parts[0] if len(parts) == 1 else pa.concat_tables(parts)


def _is_segment(rel_path: str) -> bool:
    return rel_path.rsplit("/", 1)[-1].startswith("seg-") and rel_path.endswith((".log", ".sealed"))


def trusted_segments(root: Path, dir_files: list, prev_files: dict, findings: list[Finding], *,
                     state_key: str, unlocked: bool, rows_for) -> tuple[dict, dict, bool, bool]:  # noqa: ANN001
    """What the last scan verified of one chain directory's segment files and this one may trust
    (baseline7.md §3.6: a sealed segment is immutable, an open ``.log`` only grows): per segment
    rel_path its :class:`~vakaudit.storage.segments.Resume` and ``(rows, state)``, where ``rows``
    are the last scan's rows of it (``rows_for(rel_path, state)``, None: none kept), plus whether
    a trusted segment had readable entries and whether an open one grew.

    A segment is trusted when the last scan read it clean with the same key state (``unlocked``),
    a sealed one still has its size, mtime and ``seals.log`` entry, an open one is no shorter and
    its anchors (first and last recorded frame hashes) are in place (else an
    ``append_only_violation``), and the kept rows are one per recorded frame."""
    from vakaudit.storage.segments import Resume, read_seals

    seals = None
    resume: dict[str, Resume] = {}
    kept: dict[str, tuple[pa.Table, dict]] = {}
    readable = grew = False
    for hf in dir_files:
        if not _is_segment(hf.rel_path):
            continue
        prev = prev_files.get(hf.rel_path, {})
        st = prev.get("state", {}).get(state_key)
        if not st or not st.get("clean") or bool(st.get("unlocked")) != unlocked:
            continue
        sealed = hf.rel_path.endswith(".sealed")
        if sealed:
            if prev.get("size") != hf.size_bytes or prev.get("mtime_ns") != hf.mtime_ns:
                continue  # segment_changes reports it
            if seals is None:
                seals = {e.segment: e for e in read_seals(root / hf.rel_path.rsplit("/", 1)[0])[0]}
            number = int(hf.rel_path.rsplit("/", 1)[-1][4:12])
            entry = seals.get(number)
            if entry is None or entry.head.hex() != st["head"] or entry.entries != st["entries"]:
                continue
        else:
            if hf.size_bytes < st["valid_len"]:
                continue  # segment_changes reports it
            why = _anchor_moved(root / hf.rel_path, st)
            if why is not None:
                findings.append(Finding(FindingCode.APPEND_ONLY_VIOLATION, Severity.ERROR, hf.rel_path,
                                        f"open segment changed since the last scan ({why}); read again from "
                                        "byte 0; 7.0 frames are append-only"))
                continue
        rows = rows_for(hf.rel_path, st)
        if rows is None or rows.num_rows != st["entries"]:
            continue
        readable = readable or st.get("readable", 0) > 0
        grew = grew or (not sealed and (hf.size_bytes != st["valid_len"] or hf.mtime_ns != prev.get("mtime_ns")))
        resume[hf.rel_path] = Resume(bytes.fromhex(st["start"]), bytes.fromhex(st["head"]), st["valid_len"],
                                     st["entries"], st["encrypted"], sealed, st.get("compressed", False))
        kept[hf.rel_path] = (rows, st)
    return resume, kept, readable, grew


def _anchor_moved(path: Path, st: dict) -> str | None:
    """None when an open segment's first and last recorded frames are where the last scan saw
    them (their stored hashes), else what moved."""
    try:
        with path.open("rb") as fh:
            if st.get("first_end"):
                fh.seek(st["first_end"] - HASH_LEN)
                if fh.read(HASH_LEN).hex() != st["first_hash"]:
                    return "its first frame changed"
            if st["valid_len"]:
                fh.seek(st["valid_len"] - HASH_LEN)
                if fh.read(HASH_LEN).hex() != st["head"]:
                    return f"the frame ending at byte {st['valid_len']} changed"
    except OSError as exc:
        return f"it cannot be read: {exc.strerror}"
    return None


def ledger_dirs(files: list) -> list[str]:
    """Directories (relative to the home) of the session ledger kind's segment files, sorted."""
    dirs = set()
    for hf in files:
        if hf.kind.name == LEDGER_KIND and hf.file_type == "file" and "/" in hf.rel_path:
            parent, name = hf.rel_path.rsplit("/", 1)
            if name.startswith("seg-"):
                dirs.add(parent)
    return sorted(dirs)


def tenant_keys(root: Path, keys: KeyRing | None) -> list[tuple[Path, TenantKeys]]:
    """Each tenant directory of the home with its key reader."""
    from vakaudit.scan.store7 import tenant_dirs

    return [(t, TenantKeys(t / "keys", keys, rel_dir=f"{t.relative_to(root).as_posix()}/keys"))
            for t in tenant_dirs(root)]


def frame_entries(root: Path, rel_dir: str, key: bytes | None, *, resume: dict | None = None,
                  kept: dict | None = None, referenced: dict[str, list[str]] | None = None,
                  fields: dict | None = None,
                  ) -> tuple[pa.Table, list[Finding], dict[str, tuple[str, int, dict]]]:
    """The ``entries`` rows of the conversation directory ``rel_dir``, the segment findings and
    each segment file's ``(scan_state, bytes_read, manifest state)`` (see :class:`FrameEntries`).

    ``resume``/``kept``: per segment rel_path, what the last scan verified and its rows (only
    frames after them are read and made into rows). ``fields``, when given, receives the
    ``entry_fields`` accounting ((kind, field) -> [entries, bytes]) of the entries read."""
    resume, kept = resume or {}, kept or {}
    walk = iter_segments(root / rel_dir, key, rel_dir=rel_dir, resume=resume)
    meta: list[tuple[str, int, object]] = []  # (segment rel_path, segment number, frame)
    order: list[str] = []
    firsts: dict[str, object] = {}
    readable: dict[str, int] = {}
    for segment, frames in walk:
        rel = f"{rel_dir}/{segment.rel_path.rsplit('/', 1)[-1]}" if segment.rel_path else rel_dir
        order.append(rel)
        for f in frames:
            meta.append((rel, segment.number, f))
            if f.index == 0:
                firsts[rel] = f
            if f.entry is not None:
                readable[rel] = readable.get(rel, 0) + 1
                if referenced is not None:
                    for oid in object_refs(f.entry):
                        referenced.setdefault(oid, []).append(f"entry:{rel}#{f.index}")
    t = _rows(rel_dir, meta, fields)
    segs = segment_states(root, walk, resume, kept, readable, firsts, unlocked=key is not None)
    # each segment's new rows are one run of t (meta is in walk order), after its kept ones
    runs: dict[str, list[int]] = {}
    for i, (rel, _n, _f) in enumerate(meta):
        runs.setdefault(rel, [i, 0])[1] += 1
    pieces = []
    for rel in order:
        if rel in kept and rel in walk.resumed:
            pieces.append(_as_table(kept[rel][0].select(ENTRIES_SCHEMA.names), ENTRIES_SCHEMA))
        if rel in runs:
            pieces.append(t.slice(*runs[rel]))
    table = pa.concat_tables(pieces) if pieces else ENTRIES_SCHEMA.empty_table()
    return table, list(walk.findings), segs


def segment_states(root: Path, walk, resume: dict, kept: dict, readable: dict[str, int],  # noqa: ANN001
                   firsts: dict, *, unlocked: bool) -> dict[str, tuple[str, int, dict]]:
    """Per segment file of a finished walk: its scan state (full, appended, unchanged), the bytes
    read and the facts the next scan may trust (:func:`trusted_segments`). ``readable``: per
    segment, the frames read with plaintext; ``firsts``: per segment, its frame 0 when read."""
    segs: dict[str, tuple[str, int, dict]] = {}
    dirty = {f.rel_path for f in walk.findings}
    for seg in walk.segments:
        rel = seg.rel_path
        res = resume.get(rel) if rel in walk.resumed else None
        c = seg.chain
        before = kept[rel][1] if res is not None and rel in kept else {}
        anchors = HASH_LEN * (1 + bool(before.get("first_end"))) if res is not None and not res.skip else 0
        if res is None:
            state, nbytes = "full", seg.size_bytes
        elif res.skip or (c.valid_len == res.valid_len and seg.size_bytes == res.valid_len):
            state, nbytes = "unchanged", anchors
        else:
            state, nbytes = "appended", anchors + seg.size_bytes - res.valid_len
        facts = {
            "form": seg.form, "start": seg.prev.hex(), "head": c.head.hex(), "valid_len": c.valid_len,
            "entries": c.entries, "encrypted": c.encrypted_frames,
            "readable": readable.get(rel, 0) + before.get("readable", 0),
            "clean": rel not in dirty and c.torn_tail is None and c.broken_at is None,
            "unlocked": unlocked,
            "compressed": res.compressed if res is not None and res.skip else _zstd_body(root / rel, seg.form),
        }
        first = firsts.get(rel)
        if first is not None:
            facts["first_hash"] = first.hash.hex()
            facts["first_end"] = first.offset + first.size_bytes
        elif before.get("first_end"):
            facts["first_hash"], facts["first_end"] = before["first_hash"], before["first_end"]
        segs[rel] = (state, nbytes, facts)
    return segs


def _zstd_body(path: Path, form: str) -> bool:
    if form != "sealed":
        return False
    from vakaudit.storage.segments import COMPRESSED, SEALED_MAGIC

    try:
        with path.open("rb") as fh:
            head = fh.read(len(SEALED_MAGIC) + 1)
    except OSError:
        return False
    return len(head) == len(SEALED_MAGIC) + 1 and head[-1] == COMPRESSED


def _rows(rel_dir: str, meta: list, fields: dict | None = None) -> pa.Table:
    """``entries`` rows of the frames ``meta`` of one conversation directory (their entry_fields
    accounting into ``fields``)."""
    session_id = rel_dir.rsplit("/", 1)[-1]
    plain = _plaintext_rows(rel_dir, session_id, [f.entry for _r, _n, f in meta], fields)
    t = _spread(plain, [f.entry is not None for _r, _n, f in meta])
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
        "commit_point": _commit_points(t, [f.entry for _r, _n, f in meta]),
    }
    # a 7.0 entry names its turn (at_turn, which the line reader put in turn_id): ledger.vocab
    cols["turn_no"] = at_turn_attribution(t["id"].to_pylist(), t["is_directive"].to_pylist(),
                                          t["turn_no"].to_pylist(), t["turn_id"].to_pylist())
    for name, values in cols.items():
        i = ENTRIES_SCHEMA.get_field_index(name)
        t = t.set_column(i, ENTRIES_SCHEMA.field(name), pa.array(values, ENTRIES_SCHEMA.field(name).type))
    return _as_table(t, ENTRIES_SCHEMA)


def _spread(plain: pa.Table | None, readable: list[bool]) -> pa.Table:
    """One row per frame: the next row of ``plain`` where ``readable`` says the frame was read, a
    null row where not (every row null when ``plain`` is None). Runs of rows are zero-copy slices:
    no Arrow compute (a ``take`` would import it, ~40 ms)."""
    pieces: list[pa.Table] = []
    k = 0  # the next row of plain
    for got, run in itertools.groupby(plain is not None and r for r in readable):
        n = sum(1 for _ in run)
        if got:
            pieces.append(plain.slice(k, n))
            k += n
        else:
            pieces.append(pa.table([pa.nulls(n, f.type) for f in ENTRIES_SCHEMA], schema=ENTRIES_SCHEMA))
    return pa.concat_tables(pieces) if pieces else ENTRIES_SCHEMA.empty_table()


def _commit_points(t: pa.Table, entries: list[bytes | None]) -> list[bool | None]:
    """Per frame, whether vak's group commit synced after it (:func:`vakaudit.storage.commit.commit_point`),
    from the row's kind, role and control and, for an activity, its ``data.request_id``; None for a
    frame that could not be read."""
    kinds = t["kind"].to_pylist()
    roles = t["role"].to_pylist()
    controls = t["control"].to_pylist()
    out: list[bool | None] = []
    for kind, role, control, entry in zip(kinds, roles, controls, entries, strict=True):
        if entry is None or kind is None:
            out.append(None)
            continue
        if kind == "activity" and b"request_id" in entry:
            # the columns do not keep data.request_id
            try:
                doc = orjson.loads(entry)
            except orjson.JSONDecodeError:
                doc = None
            out.append(is_commit_point(doc) if isinstance(doc, dict) else commit_point(kind, role, control, False))
        else:
            out.append(commit_point(kind, role, control, False))
    return out


def _plaintext_rows(rel_dir: str, session_id: str, entries: list[bytes | None],
                    fields: dict | None = None) -> pa.Table | None:
    """The plaintext columns of the readable entries, one row each, through the JSONL line reader;
    None when an entry holds a raw line feed (it would not be one line: no plaintext columns).
    ``fields`` receives the reader's entry_fields accounting, without the line feed each entry was
    given to be a line (the envelope of a frame's entry has none)."""
    readable = [e for e in entries if e is not None]
    if any(b"\n" in e for e in readable):
        return None
    data = b"".join(e + b"\n" for e in readable)
    scanner = LedgerScanner(f"{rel_dir}/ledger.jsonl", session_id=session_id)
    batches = list(scanner.scan(io.BytesIO(data), len(data)))
    t = pa.Table.from_batches(batches, schema=ENTRIES_SCHEMA) if batches else ENTRIES_SCHEMA.empty_table()
    if t.num_rows != len(readable):
        return None
    if fields is not None:
        for (kind, name), (count, size) in scanner.fields.items():
            a = fields.setdefault((kind, name), [0, 0])
            a[0] += count
            a[1] += size - (count if name in _LINE_FIELDS else 0)
    return t


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
