"""Session ledger: the one rich original, one hash-chained JSONL file per session.

Lives at ``<sessions_home>/sessions/<wskey>/<session_id>.jsonl`` (``agents/<id>/`` from 3.2.0, the
data root before; the nested-home defect D2 puts it deeper). Written by vak-session
``SessionLog::append`` on every message, intent, receipt, activity, presentation, turn card, work
event and compaction: one ``writeln!`` + ``sync_data()`` per entry under an exclusive ``try_lock``
held for the handle's lifetime. Read whole on every open (full parse + hash verify), then scanned
O(entries) per request. No bound on disk (ledger.md §1-§6, write-paths-and-growth).

This module turns a ledger into the ``entries`` table (one row per physical line) plus the
``entry_fields`` byte accounting, streaming, resumable at a byte offset, and without ever writing.
It reads no bytes itself: its rows are built from the record stream of
:class:`vakaudit.ledger.records.LedgerReader` (framing, envelope, digest, chain verdict and turn
numbers come from there). The compiled kernel writes the rows of the lines it vouches for straight
into Arrow column buffers (``linescan.EntryCols``) in the same pass; every other line's row is built
here (:meth:`LedgerScanner._row`, the reference), into the same buffers in file order (Python lists
without the extension); both give the same rows. A ledger's findings are not decided here: they are
the verdict of :class:`vakaudit.ledger.verdict.LedgerVerdict` over the same records, the same
classification ``vakaudit verify`` reports, so a defect has one code, line and count in every
command. The scanner itself only notes a ledger still being written (``ledger_growing``).

In a 7.0 home (baseline7.md §1.4, §8) a session ledger is a directory
``agents/<a>/sessions/<space-key>/<session id>/`` of hash-chained zstd frames sealed under the
conversation's key (``seg-NNNNNNNN.log`` / ``.sealed``, ``seals.log``, ``LOCK``, ``KEY``), appended
with group commit: one frame per entry, ``fdatasync`` only after commit points.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

import orjson

from vakaudit._native import arrow_column, linescan
from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import (
    LEDGER_KIND,
    ArtifactKind,
    Baseline7,
    Discipline,
    ReadContext,
    RegistryClass,
    ResumableReader,
    WriteCard,
    WriteGroup,
    ledger_session_id,
    repeated,
    stem_session_id,
)
from vakaudit.artifacts._declare import arrow
from vakaudit.artifacts._entry_facts import payload_facts
from vakaudit.artifacts._entry_fields import field_sizes, kind_end
from vakaudit.artifacts._timestamps import TIMESTAMP, timestamps
from vakaudit.findings import Finding, FindingCode, Severity
from vakaudit.names import shown

if TYPE_CHECKING:
    import pyarrow as pa

    from vakaudit.ledger.records import LedgerReader, Record, RecordRun
    from vakaudit.ledger.verdict import LedgerVerdict

# The ledger machinery (reader, chain, verdict) is imported where a ledger is read: the kind registry
# loads this module to classify any home's files, a 7.0 home's among them.

BATCH_ROWS = 4_096  # rows per record batch: bounds a worker's memory on any ledger size
HEAD_ANCHOR_BYTES = 4096

_ENTRIES_SCHEMA = decl.schema(
    [
        decl.field("rel_path", decl.string(), nullable=False),
        decl.field("session_id", decl.string()),
        decl.field("agent_id", decl.string()),
        decl.field("workspace_key", decl.string()),
        decl.field("line_no", decl.int64(), nullable=False),
        decl.field("offset_bytes", decl.int64(), nullable=False),
        decl.field("size_bytes", decl.int64(), nullable=False),
        decl.field("kind", decl.string()),
        decl.field("id", decl.string()),
        decl.field("parent_id", decl.string()),
        decl.field("ts", decl.string()),
        decl.field("ts_at", TIMESTAMP),
        decl.field("prev_hash", decl.string()),
        decl.field("line_sha256", decl.string()),
        decl.field("chain_ok", decl.bool_()),
        decl.field("chain_status", decl.string()),
        decl.field("turn_no", decl.int64()),
        decl.field("turn_id", decl.string()),
        decl.field("role", decl.string()),
        decl.field("control", decl.string()),
        decl.field("is_directive", decl.bool_()),
        decl.field("model", decl.string()),
        decl.field("provider", decl.string()),
        decl.field("stop_reason", decl.string()),
        decl.field("input_tokens", decl.int64()),
        decl.field("output_tokens", decl.int64()),
        decl.field("cache_read_input_tokens", decl.int64()),
        decl.field("cache_creation_input_tokens", decl.int64()),
        decl.field("tool_use_count", decl.int64()),
        decl.field("tool_result_count", decl.int64()),
        decl.field("tool_result_bytes", decl.int64()),
        decl.field("activity_kind", decl.string()),
        decl.field("activity_label", decl.string()),
        decl.field("purpose", decl.string()),
        decl.field("attempt_count", decl.int64()),
        decl.field("prefix_digest", decl.string()),
        decl.field("prefix_tokens", decl.int64()),
        decl.field("epoch", decl.int64()),
        decl.field("app_version", decl.string()),
        # duplication accounting (analyze): SHA-256 of the payload bytes after the envelope's kind, and
        # of the system prompt (header contract / capability binding) with its serialized size
        decl.field("body_sha256", decl.string()),
        decl.field("system_prompt_sha256", decl.string()),
        decl.field("system_prompt_bytes", decl.int64()),
        # a 7.0 ledger's frame (baseline7.md §3, §5): null on JSONL rows
        decl.field("segment", decl.int64()),
        decl.field("frame_index", decl.int64()),
        decl.field("stored_bytes", decl.int64()),
        decl.field("plain_bytes", decl.int64()),
        decl.field("sealed", decl.bool_()),
        # whether vak's group commit syncs right after this frame (storage.commit; null when locked)
        decl.field("commit_point", decl.bool_()),
    ]
)

#: the ``entries`` columns only a 7.0 frame fills (:mod:`vakaudit.scan.frames7`)
FRAME_COLUMNS = ("segment", "frame_index", "stored_bytes", "plain_bytes", "sealed", "commit_point")

_ENTRY_FIELDS_SCHEMA = decl.schema(
    [
        decl.field("rel_path", decl.string(), nullable=False),
        decl.field("session_id", decl.string()),
        decl.field("kind", decl.string()),
        decl.field("field", decl.string(), nullable=False),
        decl.field("entry_count", decl.int64(), nullable=False),
        decl.field("size_bytes", decl.int64(), nullable=False),
    ]
)

#: pseudo-fields of ``entry_fields``: the envelope (with braces and the line terminator), unparsed lines
ENVELOPE_FIELD = "(envelope)"
UNPARSED_FIELD = "(unparsed)"
BLANK_FIELD = "(blank)"


@functools.cache
def _chain_ok_by_value() -> dict[str | None, bool]:
    """``chain_ok`` of a row by its line's chain status (null for the statuses with no link to judge)."""
    from vakaudit.ledger.chain import LineStatus

    return {LineStatus.CHAIN_OK.value: True, LineStatus.BROKEN.value: False}


# The Arrow column buffers the compiled kernel writes rows into (None without the compiled extension or
# with VAKAUDIT_NO_NATIVE=1: rows then collect in Python lists).
_EntryCols = linescan.EntryCols if linescan is not None else None
# the columns a row carries, in row order (the table's columns but the file facts and the derived ts_at)
_ROW_COLUMNS = (
    "offset_bytes", "line_no", "size_bytes", "kind", "id", "parent_id", "ts", "prev_hash", "line_sha256",
    "chain_status", "turn_no", "turn_id", "role", "control", "is_directive", "model", "provider", "stop_reason",
    "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
    "tool_use_count", "tool_result_count", "tool_result_bytes", "activity_kind", "activity_label", "purpose",
    "attempt_count", "prefix_digest", "prefix_tokens", "epoch", "app_version", "body_sha256",
    "system_prompt_sha256", "system_prompt_bytes",
)  # fmt: skip
_N_COLS = len(_ROW_COLUMNS)
# EntryCols.take gives these columns' buffers, then chain_ok's and ts_at's
_BUFFER_TYPES = tuple(_ENTRIES_SCHEMA.field(name).type for name in _ROW_COLUMNS) + (decl.bool_(), TIMESTAMP)

@dataclass(slots=True)
class LedgerState:
    """Where a scan of one ledger stopped; enough to resume at ``offset`` exactly as a full scan would."""

    offset: int = 0  # bytes consumed (always a line boundary)
    line_no: int = 0  # physical lines consumed
    expected: str | None = None  # chain expectation (digest of the last parsed line)
    turn_no: int = 0
    turn_id: str | None = None
    in_prep: bool = False
    last_line_offset: int = 0
    last_line_sha256: str | None = None  # SHA-256 of the last consumed line's bytes, terminator included
    head_sha256: str | None = None  # SHA-256 of the first min(offset, 4096) bytes
    torn: bool = False  # the consumed bytes end in a line without terminator

    def to_dict(self) -> dict[str, Any]:
        # every field is a scalar: no deep copy (dataclasses.asdict costs a ledger 0.2 ms)
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LedgerState:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


def path_facts(rel_path: str) -> tuple[str | None, str | None, str | None]:
    """(session_id, agent_id, workspace_key) from a ledger path ``…/sessions/<wskey>/<sid>.jsonl``.

    ``agent_id`` is the innermost ``agents/<id>`` before ``sessions/``; a data-root ``sessions/``
    (builds before 3.2.0) belongs to the built-in agent ``vak``.
    """
    parts = rel_path.split("/")
    session_id = stem_session_id(rel_path)
    wskey = parts[-2] if len(parts) >= 3 else None
    agent_id = "vak"
    prefix = parts[:-3]
    for i in range(len(prefix) - 1):
        if prefix[i] == "agents":
            agent_id = prefix[i + 1]
    return session_id, agent_id, wskey


class LedgerScanner:
    """One ledger file's ``entries`` rows, built from its record stream, resumable from a
    :class:`LedgerState`.

    :meth:`scan` reads the file (or: :meth:`reader` opens the record stream, every item goes to
    :meth:`take`, which returns a batch when one is full, and :meth:`finish` yields the rest, so a
    caller can hand the same items to a :class:`~vakaudit.ledger.verdict.LedgerVerdict`). Rows start
    at the line at ``state.offset``; the lines before it are read for the chain only. ``fields``
    accumulates the ``entry_fields`` byte accounting of the rows; ``emit`` receives findings;
    ``rows`` counts the rows produced. Rows collect in ``buffer`` and leave it as one batch of
    ``batch_rows``: a buffer of the scanner's own is emptied when the scan ends, a shared one (several
    small ledgers scanned one after the other) keeps the last rows for the next scanner, and its owner
    takes them.
    """

    def __init__(
        self,
        rel_path: str,
        state: LedgerState | None = None,
        emit: Callable[[Finding], None] | None = None,
        *,
        session_id: str | None = None,
        buffer: EntriesBuffer | None = None,
        batch_rows: int = BATCH_ROWS,
    ) -> None:
        sid, agent, wskey = path_facts(rel_path)
        self.rel_path = rel_path
        self.session_id = session_id or sid
        self.agent_id = agent
        self.workspace_key = wskey
        self.state = state or LedgerState()
        self.emit = emit or (lambda f: None)
        self.fields: dict[tuple[str | None, str], list[int]] = {}
        self.rows = 0
        self.growing = False
        self._shared = buffer is not None
        self._buf = buffer if buffer is not None else EntriesBuffer()
        self._batch_rows = batch_rows
        self._reader: LedgerReader | None = None
        self._run_type: type | None = None  # RecordRun, once a reader is made
        self._still_growing: Callable[[], bool] | None = None

    # -- fields accounting --------------------------------------------------------------------------

    def _account(self, kind: str | None, name: str, size: int) -> None:
        acc = self.fields.get((kind, name))
        if acc is None:
            self.fields[(kind, name)] = [1, size]
        else:
            acc[0] += 1
            acc[1] += size

    def fields_table(self) -> pa.Table:
        return fields_table([self])

    # -- reading ------------------------------------------------------------------------------------

    def reader(
        self,
        read: Callable[[int], bytes],
        end: int,
        *,
        still_growing: Callable[[], bool] | None = None,
        tail_grew: Callable[[], bool] | None = None,
        native: bool | None = None,
    ) -> LedgerReader:
        """The record stream of the file ``read`` returns from byte 0 up to byte ``end`` (the size seen
        when the scan began). An unterminated last line is a torn line (row + the verdict's finding)
        unless ``tail_grew()`` (default: ``still_growing()``) says the file grew meanwhile: then it is
        a write in flight, left unconsumed, with a note; ``still_growing()`` is asked again at the
        end (a note when the file grew while it was scanned)."""
        from vakaudit.ledger.records import LedgerReader, RecordRun, TurnState

        st = self.state
        if st.torn:
            raise ValueError("a ledger whose scanned prefix ends in a torn line must be rescanned from 0")
        cols = self._buf.native
        if cols is None:
            native = False  # rows in Python lists: the kernel has no buffers to write into
        self._still_growing = still_growing
        self._run_type = RecordRun
        self._reader = LedgerReader(
            read,
            end,
            native=native,
            rows=(cols, self.fields),
            rows_from=st.offset,
            turns=TurnState(st.turn_no, st.turn_id, st.in_prep),
            room=lambda: self._batch_rows - len(self._buf),
            grew=tail_grew if tail_grew is not None else still_growing,
        )
        return self._reader

    def scan(
        self,
        f: IO[bytes],
        end: int,
        *,
        still_growing: Callable[[], bool] | None = None,
        native: bool | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """Read ``f`` (from byte 0: the chain; rows from ``state.offset``) up to byte ``end``;
        ``native``: the compiled kernel (None: when available)."""
        f.seek(0)
        for item in self.reader(f.read, end, still_growing=still_growing, native=native):
            batch = self.take(item)
            if batch is not None:
                yield batch
        yield from self.finish()

    @property
    def line_count(self) -> int:
        """Physical lines of the file seen by the last :meth:`reader` (a line still being written
        counts)."""
        r = self._reader
        return 0 if r is None else r.line_count + r.growing

    def take(self, item: Record | RecordRun) -> pa.RecordBatch | None:
        """One item of the record stream; a full batch when the buffer filled, else None."""
        if type(item) is self._run_type:
            pass  # the kernel wrote its rows (when it is at or past state.offset), fields and turns
        elif item.offset_bytes >= self._reader.rows_from:
            self._row(item)
        if len(self._buf) >= self._batch_rows:
            return self._flush()
        return None

    def finish(self) -> Iterator[pa.RecordBatch]:
        """After the last item: the state to resume from, the growth note, the last rows."""
        reader = self._reader
        st = self.state
        if reader.growing:  # a line in flight at the end: left for the next scan
            note = (f"ledger is being appended to; scanned a consistent prefix of {reader.consumed} bytes and "
                    "left the line still being written for the next scan")  # fmt: skip
        elif self._still_growing is not None and self._still_growing():
            note = f"ledger grew while it was scanned; the scan covers its first {reader.consumed} bytes"
        else:
            note = None
        if note is not None:
            self.growing = True
            line_no = reader.line_count + 1 if reader.growing else None
            self.emit(Finding(FindingCode.LEDGER_GROWING, Severity.INFO, self.rel_path, note, line_no=line_no,
                              offset_bytes=reader.consumed))  # fmt: skip
        if reader.consumed >= st.offset:
            st.offset = reader.consumed
            st.line_no = reader.line_count
            st.expected = reader.chain.expected
            st.turn_no, st.turn_id, st.in_prep = reader.turns
            st.torn = not reader.ends_with_lf
            last = reader.last_line()
            if last is not None:
                st.last_line_offset, st.last_line_sha256 = last
            st.head_sha256 = hashlib.sha256(reader.head[: min(st.offset, HEAD_ANCHOR_BYTES)]).hexdigest()
        self.rows += self._buf.mark(self._facts())
        if len(self._buf) and not self._shared:
            yield self._buf.take()

    def _row(self, rec: Record) -> None:
        """The ``entries`` row of one line the kernel did not take (the reference of its rows)."""
        offset, line_no, size = rec.offset_bytes, rec.line_no, rec.size_bytes
        if rec.defect is not None:
            self._account(None, UNPARSED_FIELD, size)
            self._add(
                (offset, line_no, size, None, None, None, None, None, rec.digest if rec.defect[0] is not
                 FindingCode.LINE_TOO_LONG else None, "unparseable", None, None, None) + _NONE_TAIL
            )  # fmt: skip
            return
        env = rec.envelope
        if env is None:
            self._account(None, BLANK_FIELD, size)
            self._add((offset, line_no, size, None, None, None, None, None, None, "blank", None, None, None) + _NONE_TAIL)
            return
        ident, parent, ts, prev, _at, kind = env
        raw = rec.raw
        payload = rec.payload
        if payload is None:  # attested by the next line's prev_hash, yet not JSON: no payload facts
            payload = {}
        facts = payload_facts(kind, payload)

        # bytes per payload member
        cut = kind_end(raw, kind)
        sizes = field_sizes(raw, payload, cut, kind)
        fields = self.fields
        used = 0
        if sizes is not None:
            for name, n in sizes:
                acc = fields.get((kind, name))
                if acc is None:
                    fields[(kind, name)] = [1, n]
                else:
                    acc[0] += 1
                    acc[1] += n
                used += n
            self._account(kind, ENVELOPE_FIELD, size - used)
        else:
            self._account(kind, UNPARSED_FIELD, size)

        body_sha = hashlib.sha256(raw[cut:]).hexdigest() if cut >= 0 else None
        sp_sha = sp_bytes = None
        sp = (payload.get("contract") or {}) if kind == "header" else payload
        if (
            kind in ("header", "turn_capabilities_bound")
            and type(sp) is dict
            and type(sp.get("system_prompt")) is str
        ):
            sp_raw = orjson.dumps(sp["system_prompt"])
            sp_sha, sp_bytes = hashlib.sha256(sp_raw).hexdigest(), len(sp_raw)

        self._add(
            (offset, line_no, size, kind, ident, parent, ts, prev, rec.digest, rec.chain.value, rec.turn_no,
             rec.turn_id)
            + facts
            + (body_sha, sp_sha, sp_bytes)
        )  # fmt: skip

    def _add(self, row: tuple) -> None:
        self._buf.add(row)

    def _facts(self) -> tuple[str, str | None, str | None, str | None]:
        return (self.rel_path, self.session_id, self.agent_id, self.workspace_key)

    def _flush(self) -> pa.RecordBatch:
        """The buffer's rows (this scanner's since its last flush, and any a shared buffer held before)."""
        self.rows += self._buf.mark(self._facts())
        return self._buf.take()


class EntriesBuffer:
    """``entries`` rows of one or more ledgers, column by column, until they become one record batch.

    A scanner appends rows (the 36 columns from ``offset_bytes`` on, ``ts_at`` excluded, in the order
    of ``_ROW_COLUMNS``) with :meth:`add`, or the compiled scanner writes them into ``native``, then
    :meth:`mark` claims the rows since the last mark for its file: rel_path, session_id, agent_id
    and workspace_key are the same on every row of a file, so they are kept once per run of rows and
    become Arrow arrays without a per-row Python list. Many small ledgers in one buffer cost one
    conversion instead of one each. With the extension the rows live in ``native``, an EntryCols
    holding Arrow buffers (validity bitmaps, int64 values, offsets and UTF-8 data) that become arrays
    without a conversion; without it in ``cols``, one Python list per column.
    """

    __slots__ = ("_marked", "_runs", "cols", "native")

    def __init__(self) -> None:
        self.native = _EntryCols() if _EntryCols is not None else None
        self.cols: list[list] | None = None if self.native is not None else [[] for _ in range(_N_COLS)]
        self._runs: list[tuple[tuple[str, str | None, str | None, str | None], int]] = []
        self._marked = 0

    def __len__(self) -> int:
        return len(self.native) if self.cols is None else len(self.cols[0])

    def add(self, row: tuple) -> None:
        """Append one row (a tuple of the 36 values, None for null)."""
        if self.cols is None:
            self.native.append_row(row)
        else:
            for col, value in zip(self.cols, row, strict=True):
                col.append(value)

    def last_offset(self) -> int:
        """``offset_bytes`` of the last row."""
        return self.native.last_offset() if self.cols is None else self.cols[0][-1]

    def mark(self, facts: tuple[str, str | None, str | None, str | None]) -> int:
        """Claim the rows added since the last mark for the file of ``facts``; how many they are."""
        n = len(self) - self._marked
        if n:
            self._runs.append((facts, n))
            self._marked += n
        return n

    def discard_unmarked(self) -> int:
        """Drop the rows added since the last mark (a file that could not be read to its end)."""
        n = len(self) - self._marked
        if self.cols is None:
            self.native.truncate(self._marked)
        else:
            for col in self.cols:
                del col[self._marked :]
        return n

    def take(self) -> pa.RecordBatch:
        """Every marked row as one ``ENTRIES_SCHEMA`` batch; the buffer is empty afterwards."""
        if len(self) != self._marked:
            raise ValueError("EntriesBuffer.take: rows added since the last mark belong to no file")
        runs = self._runs
        self._runs = []
        self._marked = 0
        if self.cols is None:
            n, buffers, ts_other = self.native.take()
            arrays = [arrow_column(arrow(t), n, c) for c, t in zip(buffers, _BUFFER_TYPES, strict=True)]
            # ts_at from the buffers when every ts is a plain vak timestamp (what timestamps() gives
            # them), else from ts as for the Python lists
            return _entries_batch(arrays[:-2], arrays[-2], runs, None if ts_other else arrays[-1])
        cols = self.cols
        self.cols = [[] for _ in range(_N_COLS)]
        status = cols[_ROW_COLUMNS.index("chain_status")]
        return _entries_batch(cols, list(map(_chain_ok_by_value().get, status)), runs)


def _run_column(values: list[str | None], counts: list[int]) -> pa.Array:
    """A string column holding ``values[i]`` (as tables show it) on ``counts[i]`` consecutive rows."""
    import pyarrow as pa

    return repeated([None if v is None else shown(v) for v in values], counts, pa.string())


def _entries_batch(
    cols: list, chain_ok: list | pa.Array, runs: list[tuple[tuple, int]], ts_at: pa.Array | None = None
) -> pa.RecordBatch:
    """One ``ENTRIES_SCHEMA`` batch from the row columns (Arrow arrays or Python lists, in the order of
    ``_ROW_COLUMNS``), chain_ok, the runs of rows per file and ts_at (None: derived from ts)."""
    import pyarrow as pa

    counts = [n for _, n in runs]
    arrays: dict[str, Any] = dict(zip(_ROW_COLUMNS, cols, strict=True))
    ts = arrays["ts"]
    arrays["ts"] = ts = ts if isinstance(ts, pa.Array) else pa.array(ts, pa.string())
    arrays["ts_at"] = timestamps(ts) if ts_at is None else ts_at
    arrays["chain_ok"] = chain_ok
    for i, name in enumerate(("rel_path", "session_id", "agent_id", "workspace_key")):
        arrays[name] = _run_column([f[i] for f, _ in runs], counts)
    n_rows = sum(counts)
    for name in FRAME_COLUMNS:
        arrays[name] = pa.nulls(n_rows, _ENTRIES_SCHEMA.arrow().field(name).type)
    return pa.RecordBatch.from_arrays(
        [
            a if isinstance(a, pa.Array) else pa.array(a, f.type)
            for a, f in zip((arrays[f.name] for f in _ENTRIES_SCHEMA.arrow()), _ENTRIES_SCHEMA.arrow(), strict=True)
        ],
        schema=_ENTRIES_SCHEMA.arrow(),
    )


def fields_table(scanners: Iterable[LedgerScanner]) -> pa.Table:
    """The ``entry_fields`` rows of what ``scanners`` read: file by file, by kind then field."""
    import pyarrow as pa

    rel: list[str] = []
    sid: list[str | None] = []
    kinds: list[str | None] = []
    names: list[str] = []
    counts: list[int] = []
    sizes: list[int] = []
    for sc in scanners:
        rows = sorted(sc.fields.items(), key=lambda kv: (kv[0][0] or "", kv[0][1]))
        rel += [sc.rel_path] * len(rows)
        sid += [sc.session_id] * len(rows)
        for (kind, name), (count, size) in rows:
            kinds.append(kind)
            names.append(name)
            counts.append(count)
            sizes.append(size)
    return pa.table([rel, sid, kinds, names, counts, sizes], schema=_ENTRY_FIELDS_SCHEMA.arrow())


# columns after (offset … status) that a blank/unparseable row leaves null: turn_no … app_version
_NONE_TAIL = (None,) * 23


def ledger_findings(path: str | os.PathLike, rel_path: str) -> list[Finding]:
    """The findings of the ledger at ``path``: :func:`~vakaudit.ledger.verdict.verify_ledger`'s, graded
    by the default policy (the scan's ``findings`` rows of this file)."""
    from vakaudit.ledger.verdict import verify_ledger

    return verify_ledger(path, rel_path).findings


def ledger_verdict(rel_path: str) -> LedgerVerdict:
    """A :class:`~vakaudit.ledger.verdict.LedgerVerdict` for the ledger at ``rel_path`` (the kind's
    resumable reader's verdict)."""
    from vakaudit.ledger.verdict import LedgerVerdict

    return LedgerVerdict(rel_path)


def read_entries(ctx: ReadContext) -> Iterator[pa.RecordBatch]:
    """The kind's reader: ``entries`` rows of one ledger file, from byte 0 (no resume state here), and
    the ledger's findings (its verdict, from the same records) through ``ctx.emit``."""
    scanner = LedgerScanner(ctx.rel_path, emit=ctx.emit, session_id=ctx.session_id)
    verdict = ledger_verdict(ctx.rel_path)
    with ctx.open() as f:
        end = f.seek(0, 2)
        f.seek(0)
        for item in scanner.reader(f.read, end):
            verdict.take(item)
            batch = scanner.take(item)
            if batch is not None:
                yield batch
        yield from scanner.finish()
    for finding in verdict.finish(scanner.line_count).findings:
        ctx.emit(finding)


KIND = ArtifactKind(
    name=LEDGER_KIND,
    title="Session ledgers",
    patterns=("**/sessions/*/*.jsonl",),
    card=WriteCard(
        writer="SessionLog::append — vak-session",
        trigger="every message, intent, receipt, activity, presentation, turn card, work event, compaction",
        discipline="one writeln! + sync_data() per entry; exclusive try_lock for the handle's lifetime",
        barriers_per_write=1,
        read="full parse on open into Vec<Entry>; then in-memory, but several scans are O(entries) per request",
        bound="none on disk; in memory via compaction packets and MAX_LIVE_SESSIONS = 128",
        group=WriteGroup.LEDGER,
        read_class="session",
        time_column="ts_at",
        style=Discipline.APPEND,
    ),
    registry_class=RegistryClass.LEDGER,
    description=__doc__,
    declared_schema=_ENTRIES_SCHEMA,
    reader=read_entries,
    append_only=True,
    priority=20,
    session_id_of=ledger_session_id,
    table="entries",
    resumable=ResumableReader(
        "ledger", LedgerState.from_dict, LedgerScanner, ledger_verdict, EntriesBuffer, fields_table
    ),
    read_cost=1.0,
    v7=Baseline7(
        ("**/sessions/*/*/*",),
        (9,),
        vak_class="Record",
        owner="vak-session",
        card=WriteCard(
            writer="SessionLog::append — vak-session",
            trigger="every entry of a turn; one frame per entry, sealed under conversation:<session id>",
            discipline="group commit: frames appended unsynced, fdatasync after commit points "
            "(header, turn card, call effect, user message, admitted activity)",
            barriers_per_write=1,
            read="verified read of every segment on open (keyless chain check, then decrypt)",
            bound="kept; erased by crypto-shred (the scope key is destroyed)",
            group=WriteGroup.LEDGER,
            read_class="session",
            style=Discipline.RECORD_CHAIN,
        ),
    ),
)

__getattr__ = decl.exports(__name__, ENTRIES_SCHEMA=_ENTRIES_SCHEMA, ENTRY_FIELDS_SCHEMA=_ENTRY_FIELDS_SCHEMA)
