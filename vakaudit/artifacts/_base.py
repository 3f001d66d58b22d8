"""The artifact-kind contract: what one module of ``vakaudit.artifacts`` declares.

Each artifact kind of a vak home (home.md) is one module in this package defining a module-level
``KIND: ArtifactKind``. The package discovers the modules; a name registered twice fails loudly.
This module does no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from vakaudit.artifacts._declare import DSchema, arrow
from vakaudit.findings import Finding

if TYPE_CHECKING:
    import pyarrow as pa



class WriteGroup(StrEnum):
    """Write-map groups, as the reference capacity report groups its cards."""

    LEDGER = "ledger"            # the session ledgers: the one rich original
    CHECKPOINT = "checkpoint"    # workspace snapshots
    SANDBOX = "sandbox"          # sandbox execution logs and records
    EVIDENCE = "evidence"        # append-only evidence/accounting sidecars
    SERVER = "server"            # incidents, actions, outbox jobs, flow runs, inbox
    MEMORY = "memory"            # human-editable memory, entities, skills
    DERIVED = "derived"          # store.db and other rebuildable caches
    FEEDS = "feeds"              # the Python feed pipeline
    CONFIG = "config"            # settings, schedules, bindings, trust markers
    SECRET = "secret"            # sized, never opened
    OTHER = "other"              # locks, sockets, logs, unclassified


class RegistryClass(StrEnum):
    """vak REGISTRY classification (G1/G2 ``kind`` plus the G3 class names)."""

    LEDGER = "Ledger"
    CONFIG = "Config"
    SECRET = "Secret"
    DERIVED = "Derived"
    DOCUMENT = "Document"
    RECORD = "Record"
    TELEMETRY = "Telemetry"
    EPHEMERAL = "Ephemeral"
    UNDECLARED = "Undeclared"   # real files vak writes but its REGISTRY does not declare (home.md D10)


class Discipline(StrEnum):
    """How vak writes a kind's files (the card's ``discipline`` text says it in full)."""

    APPEND = "append"                  # lines appended, never rewritten
    APPEND_COMPACT = "append_compact"  # lines appended; rewritten (tmp + rename) past a bound
    RECORD_CHAIN = "record_chain"      # 7.0 frames appended to a segment set, sealed segments
    REPLACE = "replace"                # whole file written aside and renamed or linked into place
    REWRITE = "rewrite"                # whole file rewritten in place
    DATABASE = "database"              # SQLite or DuckDB transactions
    FILES = "files"                    # plain file writes (workspaces, skills, runtime files)
    EPHEMERAL = "ephemeral"            # lock files and sockets
    DERIVED = "derived"                # rebuildable data, deleted at will
    UNKNOWN = "unknown"                # not confirmed from vak's code


@dataclass(frozen=True, slots=True)
class Bound:
    """A size bound vak's code enforces on a kind (None where it sets none): a compaction threshold in
    bytes, the rows it keeps, the days it keeps."""

    bytes: int | None = None
    rows: int | None = None
    days: int | None = None


@dataclass(frozen=True, slots=True)
class WriteCard:
    """The write-map card of the reference report for one artifact kind.

    Besides the report's text: ``style``, the :class:`Discipline` of its writes; ``limits``, the bound as numbers (what the growth projection
    applies); ``write_unit``, the SQL aggregate over the kind's table that counts its writes
    (``count(*)``: a row is a write; None: a file is a write); ``time_column``, the column of its
    table holding a row's time (what the one-turn timeline places rows by), None when it has none;
    ``time_rank``, where its rows sort among other kinds' rows of the same instant on that timeline
    (the order a turn writes them); ``relaxed_rows``, for a 7.0 record chain, the SQL predicate over
    its table that is true for a row appended without a sync of its own (``append_relaxed``:
    telemetry rows; ``"true"``: every row), None when every row is a commit point; ``levers``, the
    keys of the reference report's growth levers that act on this kind's writes (the report's as-is
    → to-be section takes a lever's kinds from here).
    """

    writer: str               # e.g. "SessionLog::append — vak-session"
    trigger: str              # when it is written
    discipline: str           # how it is written (append / tmp+rename / rewrite ...)
    barriers_per_write: float  # fsync/fdatasync calls one write costs (0 when none)
    read: str                 # read pattern, which decides how it scales
    bound: str                # what bounds its size ("none" when nothing does)
    group: WriteGroup
    read_class: str = "flat"  # flat | session | home: what its turn-path read scales with
    style: Discipline = Discipline.UNKNOWN
    limits: Bound = Bound()
    write_unit: str | None = "count(*)"
    time_column: str | None = None
    time_rank: int = 0
    relaxed_rows: str | None = None  # record chains: SQL predicate over its table, rows appended without a sync
    levers: tuple[str, ...] = ()  # the reference report's growth levers that act on these writes


#: The session ledger kind's name. What sets it apart from the side files is declared by its kind (its
#: ``table``, ``entries``; its ``resumable`` reader; its ``read_cost``); modules that need the kind
#: itself (its 7.0 conversation directories, the report's ledger figures) name it through this.
LEDGER_KIND = "session_ledger"


#: The on-disk layouts (home.md §0.1): G1 and G2 are the JSONL-era homes, G3 the 7.0 data baseline.
JSONL_LAYOUTS: tuple[str, ...] = ("g1", "g2")
V7_LAYOUTS: tuple[str, ...] = ("g3",)
ALL_LAYOUTS = (*JSONL_LAYOUTS, *V7_LAYOUTS)


@dataclass(frozen=True, slots=True)
class Baseline7:
    """Where a kind sits in vak's 7.0 REGISTRY (baseline7.md §2.6).

    ``patterns`` are the kind's paths in a 7.0 home, in the globs of :class:`ArtifactKind`
    (``ArtifactKind.patterns`` are its JSONL-era paths). ``entries`` are the row numbers of the
    REGISTRY table those paths fall under (one entry may be split over several kinds, e.g. entry 2
    ``tenants/{tenant}/store``). ``card`` is the 7.0 write-map card when it differs from the kind's
    JSONL-era card (a side ledger that became a record chain), else None.
    """

    patterns: tuple[str, ...]
    entries: tuple[int, ...]
    vak_class: str            # the 7.0 REGISTRY class: Record, Object, Document, Desired, Secret, ...
    owner: str                # the writing crate the REGISTRY names
    card: WriteCard | None = None


@dataclass(frozen=True, slots=True)
class ReadContext:
    """What a reader gets for one file. Readers must only read through ``open()``."""

    home: Path                # the home root (absolute)
    rel_path: str             # POSIX path relative to the home, as rows show it (vakaudit.names.shown)
    home_scope: str           # directory holding the file, relative to the home ("" or "agents/vak")
    session_id: str | None    # when the path names one
    start_offset: int = 0     # incremental rescans: byte offset already scanned
    emit: Callable[[Finding], None] = field(default=lambda f: None)
    start_line: int | None = None  # lines before start_offset, when the last scan recorded them
    fs_rel_path: str | None = None  # the walk's name when it is not UTF-8 (rel_path is then escaped)

    @property
    def path(self) -> Path:
        return self.home / (self.fs_rel_path or self.rel_path)

    def open(self) -> IO[bytes]:
        """Open the file read-only (never follows a symlink out of the home: the walk checked it)."""
        return open(self.path, "rb", buffering=0)  # noqa: SIM115 - caller closes


class Reader(Protocol):
    """Turns one file into record batches of the kind's schema.

    A reader may carry a ``findings`` attribute: a function of a :class:`ReadContext` that reads the
    file for the findings the reader emits, and builds no rows (no pyarrow); ``verify`` uses it for a
    file whose rows no cross check reads. An ``accepts`` attribute (a function of the relative path,
    or None for every file) names the files of the kind it reads at all: the others give no row and
    no finding (a JSONL kind's lock files). (``bundle``: see :class:`~vakaudit.artifacts._rowspec.Bundled`.)
    """

    def __call__(self, ctx: ReadContext) -> Iterator[pa.RecordBatch]: ...


class ResumeState(Protocol):
    """Where a read of one file stopped: enough to go on from ``offset`` as a read from byte 0 would,
    and the anchors a rescan checks first (the digest of the first bytes, the last line read)."""

    offset: int
    head_sha256: str | None  # of the first min(offset, HEAD_ANCHOR_BYTES) bytes
    last_line_offset: int
    last_line_sha256: str | None
    torn: bool  # the bytes read end in a line without terminator: never resumed

    def to_dict(self) -> dict[str, Any]: ...


class StreamScanner(Protocol):
    """One file's rows from its record stream, from ``state.offset`` on (the lines before it are read
    for what the rows depend on): ``reader`` opens the stream, every item goes to ``take`` (a batch
    when the shared buffer is full), ``finish`` yields the rest and settles ``state``."""

    rel_path: str
    state: ResumeState
    rows: int
    line_count: int

    def reader(self, read: Callable[[int], bytes], end: int, *, still_growing: Callable[[], bool],
               tail_grew: Callable[[], bool]) -> Iterable[Any]: ...
    def take(self, item: Any) -> pa.RecordBatch | None: ...
    def finish(self) -> Iterator[pa.RecordBatch]: ...


class StreamVerdict(Protocol):
    """The findings of one whole file, from the same record stream (``finish(...).findings``)."""

    def take(self, item: Any) -> None: ...
    def finish(self, line_count: int) -> Any: ...


@dataclass(frozen=True, slots=True)
class ResumableReader:
    """How a scan reads a kind's files on from where the last scan stopped (the session ledger's).

    Each file is read once: every item of its scanner's record stream goes to the scanner (its rows,
    into ``buffer``, which the kind's files of a scan task share) and to its verdict (the findings
    of the whole file, given again at every read: an appended line can settle an earlier one). The
    scanner's state is kept in the manifest under ``state_key``; the next scan resumes from it when
    the file only grew and its anchors are intact, else reads it from byte 0 and reports an
    ``append_only_violation``. ``fields`` gives the ``entry_fields`` rows of a task's scanners.
    """

    state_key: str
    state: Callable[[dict[str, Any]], ResumeState]  # from its manifest form ({}: a read from byte 0)
    scanner: Callable[..., StreamScanner]  # (rel_path, state, emit, *, session_id, buffer, batch_rows)
    verdict: Callable[[str], StreamVerdict]  # (rel_path)
    buffer: Callable[[], Any]
    fields: Callable[[list[Any]], pa.Table] | None = None


@dataclass(frozen=True, slots=True)
class ArtifactKind:
    """One kind of file in a vak home.

    ``patterns`` are globs over the path relative to the home, POSIX separators. ``**/`` matches any
    number of leading directories (zero included), so ``**/cost-log.jsonl`` finds the data-root
    file, ``agents/vak/cost-log.jsonl`` and the nested-home defect ``agents/vak/agents/vak/…``.
    ``*`` never crosses a ``/``.
    """

    name: str                       # snake_case; also the table, Parquet folder and SQL view name
    title: str
    patterns: tuple[str, ...]
    card: WriteCard
    registry_class: RegistryClass
    description: str                # what it is, where it lives, who writes it (the module docstring)
    # rows table (declared: built on first use of :attr:`schema`); None when the kind only contributes
    # to `files`
    declared_schema: DSchema | pa.Schema | None = None
    reader: Reader | None = None
    append_only: bool = False       # seal / verify --since treat it as append-only
    secret: bool = False            # sized, never opened
    priority: int = 0               # higher wins when several kinds match one path
    # which session a file belongs to, from its path alone (e.g. :func:`stem_session_id`); None = none
    session_id_of: Callable[[str], str | None] | None = None
    # its place in the 7.0 REGISTRY and its 7.0 paths; None for a kind of JSONL-era homes only
    v7: Baseline7 | None = None
    # the table its rows go to when it is not the one named after the kind (see :attr:`table_name`)
    table: str | None = None
    # how a scan reads its files on from where the last scan stopped; None: ``reader`` reads a file
    # (from the offset a side file's anchor gives, when ``append_only``)
    resumable: ResumableReader | None = None
    # a scan's CPU per byte of its files relative to a session ledger's (~2.3 ns/B with the compiled
    # scanner), measured per task on a synthetic home at 10x: what scan tasks are bundled and ordered
    # by. JSONL sidecars, compiled reader and Parquet writing included, take ~4.5 ns/B: the default
    read_cost: float = 2.0

    @property
    def table_name(self) -> str:
        """The table its rows go to: :attr:`table`, else the one named after the kind."""
        return self.table or self.name

    @property
    def schema(self) -> pa.Schema | None:
        """The rows table's schema (pyarrow is imported on the first use)."""
        return arrow(self.declared_schema)

    @property
    def all_patterns(self) -> tuple[str, ...]:
        """The JSONL-era patterns, then the 7.0 ones: what classification matches against."""
        return self.patterns if self.v7 is None else (*self.patterns, *self.v7.patterns)

    @property
    def layouts(self) -> tuple[str, ...]:
        """The layouts (home.md §0.1) this kind occurs in: g1/g2 with JSONL-era patterns, g3 with 7.0 ones."""
        jsonl = JSONL_LAYOUTS if self.patterns or self.v7 is None else ()
        return (*jsonl, *(V7_LAYOUTS if self.v7 is not None and self.v7.patterns else ()))

    def matches(self, rel_path: str) -> bool:
        return any(_compile(p).fullmatch(rel_path) for p in self.all_patterns)

    def reads(self, rel_path: str) -> bool:
        """True when :attr:`reader` is for this path: one of the kind's JSONL-era files.

        The readers read the JSONL-era forms; a file only the 7.0 patterns match (a record chain's
        segment, a ledger directory's ``KEY``) is never handed to them.
        """
        if self.reader is None or self.secret:
            return False
        return self.v7 is None or any(_compile(p).fullmatch(rel_path) for p in self.patterns)


_CACHE: dict[str, re.Pattern[str]] = {}


def _compile(pattern: str) -> re.Pattern[str]:
    rx = _CACHE.get(pattern)
    if rx is None:
        parts: list[str] = []
        i = 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                parts.append("(?:.*/)?")
                i += 3
            elif pattern.startswith("**", i):
                parts.append(".*")
                i += 2
            elif pattern[i] == "*":
                parts.append("[^/]*")
                i += 1
            elif pattern[i] == "?":
                parts.append("[^/]")
                i += 1
            else:
                parts.append(re.escape(pattern[i]))
                i += 1
        rx = re.compile("".join(parts))
        _CACHE[pattern] = rx
    return rx


def repeated(values: list[object], counts: list[int], type_: pa.DataType) -> pa.Array:
    """A column holding ``values[i]`` on ``counts[i]`` consecutive rows (a file's fixed values over its
    rows, for a batch of several files), built without Arrow's compute kernels."""
    import pyarrow as pa

    parts = [pa.repeat(pa.scalar(v, type_), n) for v, n in zip(values, counts, strict=True)]
    if len(parts) == 1:
        return parts[0]
    return pa.concat_arrays(parts) if parts else pa.array([], type_)


def one_row_reader(row_of: Callable[[ReadContext], dict[str, Any] | None], schema: DSchema, doc: str) -> Reader:
    """The reader of a kind whose file gives one row: ``row_of(ctx)`` reads the file, emits its
    findings through ``ctx`` and returns the row (None: a file of the kind that gives none). The
    reader carries ``findings`` (``row_of`` with its row dropped: no pyarrow, see :class:`Reader`)."""

    def reader(ctx: ReadContext) -> Iterator[pa.RecordBatch]:
        row = row_of(ctx)
        if row is not None:
            import pyarrow as pa

            yield pa.RecordBatch.from_pylist([row], schema=schema.arrow())

    def findings(ctx: ReadContext) -> None:
        row_of(ctx)

    reader.__doc__ = doc
    reader.findings = findings  # type: ignore[attr-defined]
    return reader


def stem_session_id(rel_path: str) -> str | None:
    """The file name without its last extension names the session (``<session_id>.jsonl``)."""
    name = rel_path.rsplit("/", 1)[-1]
    stem = name.rsplit(".", 1)[0] if "." in name else name
    return stem or None


def parent_session_id(rel_path: str) -> str | None:
    """The directory holding the file names the session (``checkpoints/<session_id>/NNNN.json``)."""
    parts = rel_path.split("/")
    return parts[-2] if len(parts) >= 2 and parts[-2] else None


def ledger_session_id(rel_path: str) -> str | None:
    """The session of a per-session file: ``<id>.jsonl`` in the JSONL era, its directory in 7.0."""
    if rel_path.endswith(".jsonl"):
        return stem_session_id(rel_path)
    return parent_session_id(rel_path)


def glob_matches(pattern: str, rel_path: str) -> bool:
    """True when ``rel_path`` matches ``pattern`` under the rules of :class:`ArtifactKind`."""
    return _compile(pattern).fullmatch(rel_path) is not None


__all__ = [
    "ALL_LAYOUTS",
    "JSONL_LAYOUTS",
    "V7_LAYOUTS",
    "ArtifactKind",
    "Baseline7",
    "ReadContext",
    "Reader",
    "RegistryClass",
    "ResumableReader",
    "ResumeState",
    "StreamScanner",
    "StreamVerdict",
    "WriteCard",
    "WriteGroup",
    "glob_matches",
    "ledger_session_id",
    "parent_session_id",
    "stem_session_id",
]
