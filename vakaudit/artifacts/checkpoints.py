"""Checkpoints: a workspace snapshot before a turn that may have an effect (vak-core ``checkpoints.rs``).

Lives at ``<sessions_home>/checkpoints/<session_id>/NNNN.json`` (``NNNN`` = seq, at least 4 digits),
with the temporary ``.NNNN.tmp`` beside it and, in an intermediate build, a content-addressed
``checkpoints/blobs/`` store (naming unconfirmed). All of these belong to this kind. Written by
``checkpoints::capture`` then ``store`` on a session's first turn and on any turn that
``expects_effect``: compact JSON into the ``.tmp`` file, then rename; no fsync; the directory is then
pruned to the 20 newest by seq (never for ended sessions, D1). Limits: 8 MiB per file, 64 MiB per
walk. Read only on rewind or for a delta summary (home.md §5).

Rows: one per ``files[]`` entry of a snapshot, with its size, never its content; a snapshot with no
entries gives one row with ``entry_index`` null. The document is scanned as a stream (multi-MB base64
strings are measured, not loaded). ``format``: ``base64`` (G1, ``files[].content``), ``hashed``
(later, ``files[].hash`` + ``size``), ``blob`` (a file of ``checkpoints/blobs/``, sized by stat),
null when no entry says. ``.tmp`` files give no rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import (
    ArtifactKind,
    Baseline7,
    Discipline,
    ReadContext,
    RegistryClass,
    WriteCard,
    WriteGroup,
    repeated,
)
from vakaudit.artifacts._columns import BATCH_ROWS
from vakaudit.artifacts._rowspec import Bundled
from vakaudit.artifacts._timestamps import TIMESTAMP, timestamp
from vakaudit.findings import Finding, FindingCode, Severity

if TYPE_CHECKING:
    from types import ModuleType

    import pyarrow as pa

    from vakaudit.artifacts._jsonstream import JsonStreamError, LongString

_SCHEMA = decl.schema(
    [
        decl.field("rel_path", decl.string(), nullable=False),
        decl.field("home_scope", decl.string(), nullable=False),
        decl.field("session_id", decl.string()),
        decl.field("seq", decl.int64()),
        decl.field("created_at", TIMESTAMP),
        decl.field("format", decl.string()),  # base64 | hashed | blob
        decl.field("label_bytes", decl.int64()),  # the prompt text is user content: only its size is kept
        decl.field("files_count", decl.int64()),
        decl.field("observed_count", decl.int64()),
        decl.field("snapshot_content_bytes", decl.int64()),  # sum of content_bytes over the snapshot
        decl.field("entry_index", decl.int64()),  # position in files[]
        decl.field("file_rel_path", decl.string()),  # workspace-relative path of the snapshotted file
        decl.field("content_bytes", decl.int64()),  # decoded size (base64) / declared size (hashed)
        decl.field("encoded_bytes", decl.int64()),  # bytes the entry's content string takes in the file
        decl.field("hash", decl.string()),
        decl.field("mtime_ns", decl.int64()),
    ]
)

_SNAPSHOT = re.compile(r"\d{4,}\.json")
_ENTRY_KEYS = ("file_rel_path", "content_bytes", "encoded_bytes", "hash", "mtime_ns")


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _scanner() -> ModuleType:
    """The streaming JSON scanner (:mod:`vakaudit.artifacts._jsonstream`), imported on the first
    snapshot read: the registry imports every kind's module, and a home without checkpoints (a 7.0
    home of segments) would pay for the scanner's module and dataclass for nothing."""
    from vakaudit.artifacts import _jsonstream

    return _jsonstream


class _Fold:
    """What the rows of a snapshot need from its document, gathered scalar by scalar or from a tree."""

    def __init__(self) -> None:
        self.js = _scanner()
        self.head: dict[str, Any] = {"label_bytes": None, "seq": None, "session_id": None, "created_at": None}
        self.entries: dict[int, dict[str, Any]] = {}
        self.observed = 0
        self.fmt: str | None = None

    def event(self, path: tuple[str | int, ...], value: Any) -> None:
        """One ``(path, scalar)`` of :func:`iter_scalars` (the reference)."""
        top = path[0] if path else None
        if top == "files" and len(path) == 3 and isinstance(path[1], int):
            self.entry(path[1], path[2], value)
        elif top == "observed" and len(path) == 2:
            self.observed += 1
        elif len(path) == 1:
            self.top(top, value)

    def entry(self, index: int, key: str | int, value: Any) -> None:
        entry = self.entries.setdefault(index, dict.fromkeys(_ENTRY_KEYS))
        if key == "rel_path":
            entry["file_rel_path"] = value if isinstance(value, str) else None
        elif key == "content":
            self.fmt = self.fmt or "base64"
            entry["encoded_bytes"] = self.js.string_len(value)
            entry["content_bytes"] = self.js.base64_decoded_len(value)
        elif key == "hash":
            self.fmt = "hashed"
            entry["hash"] = value if isinstance(value, str) else None
        elif key == "size":
            entry["content_bytes"] = _int(value)
        elif key == "mtime_ns":
            entry["mtime_ns"] = _int(value)

    def top(self, key: Any, value: Any) -> None:
        head = self.head
        if key == "label":
            head["label_bytes"] = self.js.string_len(value)
        elif key == "seq":
            head["seq"] = _int(value)
        elif key == "session_id" and isinstance(value, str):
            head["session_id"] = value
        elif key == "created_at":
            head["created_at"] = timestamp(value)

    def tree(self, doc: Any, longs: list[LongString]) -> None:
        """The same as feeding :meth:`event` every scalar of ``doc`` (a :func:`scan_document` tree):
        only scalars (and empty containers, which iter_scalars yields too) at the paths read above
        count, and none of what is gathered depends on their order (no key repeats in such a tree)."""
        if type(doc) is not dict:
            return
        for key, value in doc.items():
            if key == "files":
                if type(value) is list:
                    self._items(value, longs)
            elif key == "observed":
                if type(value) is list:
                    self.observed += sum(map(_leaf, value))
                elif type(value) is dict:
                    self.observed += sum(map(_leaf, value.values()))
            elif _leaf(value):
                self.top(key, self.js.long_value(value, longs))

    def _items(self, items: list[Any], longs: list[LongString]) -> None:
        """:meth:`entry` for every scalar member of every ``files[]`` item, inlined (a snapshot has
        about a hundred items, each a few members)."""
        entries = self.entries
        js = self.js
        mark, string_len, base64_decoded_len, long_value = js._MARK, js.string_len, js.base64_decoded_len, js.long_value
        has_content = has_hash = False
        for i, item in enumerate(items):
            t = type(item)
            if t is dict:
                entry = None
                for k, v in item.items():
                    if v and type(v) in _CONTAINERS:  # not a scalar: iter_scalars goes inside
                        continue
                    if entry is None:
                        entry = entries.get(i)
                        if entry is None:
                            entry = entries[i] = dict.fromkeys(_ENTRY_KEYS)
                    if k == "content":
                        if type(v) is str and v.startswith(mark):
                            v = longs[int(v[1:])]
                        has_content = True
                        entry["encoded_bytes"] = string_len(v)
                        entry["content_bytes"] = base64_decoded_len(v)
                    elif k == "rel_path":
                        # a path longer than the cap is a placeholder (a LongString): not a str
                        entry["file_rel_path"] = v if type(v) is str and not v.startswith(mark) else None
                    elif k == "hash":
                        has_hash = True
                        v = long_value(v, longs)
                        entry["hash"] = v if isinstance(v, str) else None
                    elif k == "size":
                        entry["content_bytes"] = _int(v)
                    elif k == "mtime_ns":
                        entry["mtime_ns"] = _int(v)
            elif t is list and any(_leaf(v) for v in item):
                entries.setdefault(i, dict.fromkeys(_ENTRY_KEYS))
        # the format does not depend on the order: any hash makes it hashed, else any content base64
        if has_hash:
            self.fmt = "hashed"
        elif has_content:
            self.fmt = self.fmt or "base64"


_CONTAINERS = (dict, list)


def _leaf(value: Any) -> bool:
    """A value iter_scalars yields as such: a scalar or an empty container."""
    return not value or type(value) not in (dict, list)


_COMMON = tuple(f for f in _SCHEMA if f.name not in ("entry_index", *_ENTRY_KEYS))
_ENTRY_FIELDS = tuple(_SCHEMA.field(k) for k in _ENTRY_KEYS)


def _snapshot_rows(
    ctx: ReadContext, fast: bool = True
) -> tuple[dict[str, Any], list[int | None], list[dict]]:
    """The rows of one snapshot: the values common to them, the entry indexes and the entries."""
    fold = _Fold()
    js = fold.js
    fault: JsonStreamError | None = None
    with ctx.open() as f:
        doc = js.scan_document(f) if fast else None
        if doc is not None:
            fold.tree(*doc)
        else:  # not a plain document: the streaming scanner, from the start
            f.seek(0)
            try:
                for path, value in js.iter_scalars(f):
                    fold.event(path, value)
            except js.JsonStreamError as exc:
                fault = exc
    if fault is not None:
        ctx.emit(
            Finding(
                FindingCode.SIDECAR_UNPARSEABLE_ROW,
                Severity.WARNING,
                ctx.rel_path,
                f"checkpoint is not one valid JSON document ({fault}); the entries before the fault are kept",
                offset_bytes=fault.offset,
            )
        )
    head, entries = fold.head, fold.entries
    if head["session_id"] is None:
        parts = ctx.rel_path.split("/")
        head["session_id"] = ctx.session_id or (parts[-2] if len(parts) >= 2 else None)
    sizes = [e["content_bytes"] for e in entries.values() if e["content_bytes"] is not None]
    common = {
        "rel_path": ctx.rel_path,
        "home_scope": ctx.home_scope,
        **head,
        "format": fold.fmt,
        "files_count": len(entries),
        "observed_count": fold.observed,
        "snapshot_content_bytes": sum(sizes),
    }
    order: list[int | None] = sorted(entries) or [None]
    rows = [entries[i] for i in order] if entries else [dict.fromkeys(_ENTRY_KEYS)]
    return common, order, rows


def _blob_rows(ctx: ReadContext) -> tuple[dict[str, Any], list[int | None], list[dict]]:
    size = ctx.path.lstat().st_size  # metadata only: the blob's content is never read
    common = dict.fromkeys(f.name for f in _COMMON)
    common.update(rel_path=ctx.rel_path, home_scope=ctx.home_scope, format="blob")
    entry = dict.fromkeys(_ENTRY_KEYS)
    entry.update(hash=ctx.rel_path.rsplit("/", 1)[-1], content_bytes=size)
    return common, [None], [entry]


def _batch(files: list[tuple[dict[str, Any], list[int | None], list[dict]]]) -> pa.RecordBatch:
    """One batch of the rows of ``files``: the common columns are built once per column (one value
    per file, repeated over its rows), the entry columns from the entries of all files."""
    import pyarrow as pa

    counts = [len(rows) for _, _, rows in files]
    n = sum(counts)
    columns: dict[str, pa.Array] = {}
    if len(files) == 1:
        common = files[0][0]
        for f in (d.arrow() for d in _COMMON):
            columns[f.name] = pa.repeat(pa.scalar(common[f.name], f.type), n)
        order, rows = files[0][1], files[0][2]
    else:
        for f in (d.arrow() for d in _COMMON):
            columns[f.name] = repeated([common[f.name] for common, _, _ in files], counts, f.type)
        order = list(chain.from_iterable(o for _, o, _ in files))
        rows = list(chain.from_iterable(r for _, _, r in files))
    columns["entry_index"] = pa.array(order, pa.int64())
    for f in (d.arrow() for d in _ENTRY_FIELDS):
        columns[f.name] = pa.array(list(map(itemgetter(f.name), rows)), f.type)
    return pa.RecordBatch.from_arrays([columns[name] for name in _SCHEMA.arrow().names], schema=_SCHEMA.arrow())


def _snapshot(ctx: ReadContext, fast: bool = True) -> Iterator[pa.RecordBatch]:
    common, order, rows = _snapshot_rows(ctx, fast)
    for start in range(0, len(rows), BATCH_ROWS):
        yield _batch([(common, order[start : start + BATCH_ROWS], rows[start : start + BATCH_ROWS])])


def _blob(ctx: ReadContext) -> Iterator[pa.RecordBatch]:
    yield _batch([_blob_rows(ctx)])


def _rows_of(ctx: ReadContext) -> tuple[dict[str, Any], list[int | None], list[dict]] | None:
    if "/checkpoints/blobs/" in f"/{ctx.rel_path}":
        return _blob_rows(ctx)
    if _SNAPSHOT.fullmatch(ctx.rel_path.rsplit("/", 1)[-1]):
        return _snapshot_rows(ctx)
    return None


class CheckpointBundle:
    """The rows of many checkpoint files, built into batches for many files at once (a snapshot has
    ~100 rows: building its 16 columns alone cost more than folding it)."""

    @property
    def schema(self) -> pa.Schema:
        return _SCHEMA.arrow()

    def __init__(self) -> None:
        self._files: list[tuple[dict[str, Any], list[int | None], list[dict]]] = []
        self._rows = 0

    def add(self, ctx: ReadContext) -> tuple[int, None]:
        """Read one file: ``(rows, None)`` (checkpoint rows have no byte spans)."""
        got = _rows_of(ctx)
        if got is None:
            return 0, None
        self._files.append(got)
        self._rows += len(got[2])
        return len(got[2]), None

    @property
    def full(self) -> bool:
        return self._rows >= BATCH_ROWS

    def batches(self) -> list[pa.RecordBatch]:
        """The batch of the files added since the last call (none when there is none)."""
        if not self._files:
            return []
        batch = _batch(self._files)
        self._files, self._rows = [], 0
        return [batch]


def session_of(rel_path: str) -> str | None:
    """``checkpoints/<session_id>/NNNN.json`` names its session; blobs belong to none."""
    parts = rel_path.split("/")
    if len(parts) >= 3 and parts[-3] == "checkpoints" and parts[-2] != "blobs":
        return parts[-2]
    return None


def reader(ctx: ReadContext) -> Iterator[pa.RecordBatch]:
    """Rows of one snapshot file, or the size row of one blob; temp files give none."""
    if "/checkpoints/blobs/" in f"/{ctx.rel_path}":
        return _blob(ctx)
    if _SNAPSHOT.fullmatch(ctx.rel_path.rsplit("/", 1)[-1]):
        return _snapshot(ctx)
    return iter(())


# any checkpoint file, whatever its size, joins its task's bundle: a snapshot gives one row per
# snapshotted file (a few per MB of document), which never needed a Parquet part of its own
reader.bundle = Bundled(CheckpointBundle, 1 << 62)  # type: ignore[attr-defined]


def _findings(ctx: ReadContext) -> None:
    _rows_of(ctx)


reader.findings = _findings  # type: ignore[attr-defined]  # (see vakaudit.artifacts._base.Reader)


KIND = ArtifactKind(
    name="checkpoints",
    title="Checkpoints",
    patterns=(
        "**/checkpoints/*/*.json",
        "**/checkpoints/*/.*.tmp",
        "**/checkpoints/blobs/**",
        "**/checkpoints/**",
    ),
    card=WriteCard(
        writer="checkpoints::store — vak-core",
        trigger="first turn of a session, and any turn where expects_effect",
        discipline="tmp + rename; no fsync; prunes to 20 newest per session",
        barriers_per_write=0,
        read="only on rewind / delta summary",
        bound="8 MB per file, 64 MB per snapshot, 20 per session; no dedupe between snapshots, no GC across sessions",
        group=WriteGroup.CHECKPOINT,
        read_class="flat",
        # a checkpoint write is one snapshot file (its table has a row per captured file)
        write_unit="count(DISTINCT rel_path) FILTER (WHERE format IS DISTINCT FROM 'blob')",
        style=Discipline.REPLACE,
    ),
    v7=Baseline7(('**/checkpoints/**',), (10, 44), vak_class='Record', owner='vak-core'),
    registry_class=RegistryClass.LEDGER,
    description=__doc__,
    declared_schema=_SCHEMA,
    reader=reader,
    priority=25,  # the whole tree is this kind's, whatever a file inside is called
    session_id_of=session_of,
    read_cost=0.25,  # mostly base64, measured at memchr speed (0.57 ns/B)
)

__getattr__ = decl.exports(__name__, SCHEMA=_SCHEMA)
