"""SessionLog: one session ledger file, read and written like vak's ``vak-session`` (spec §6).

Reading (every open): the file is read through its own read-only descriptor by the one ledger reader
(:class:`~vakaudit.ledger.records.LedgerReader`: lines split like Rust's ``BufRead::lines``, the hash
chain checked by :class:`~vakaudit.ledger.chain.ChainVerifier`); blank lines are skipped, unparseable
lines (and lines nested deeper than serde_json's limit of 128, which vak cannot decode) are skipped
with a warning and reset the chain expectation. Only line bytes and envelopes are kept: payloads are
decoded lazily (memory stays close to the file size, never proportional to decoded JSON trees); a
line the next line's ``prev_hash`` attests is not decoded on open (vak hashed exactly those bytes),
every other line is decoded once so unparseable lines are found.

Deliberate differences from vak, all in the reader's favour (documented, tested):

- ``work`` lines (two ``kind`` keys) and lines of unknown kinds parse; vak skips both as unparseable.
  An unknown kind adds a warning ``entry of unknown kind …``; it never fails the open.
- Invalid UTF-8: vak's open fails (``Corrupt{line}``); so does :meth:`SessionLog.open_read_only` and
  :meth:`SessionLog.open` by default (:class:`~vakaudit.errors.CorruptError` with ``line``). With
  ``strict_utf8=False`` the line is skipped with a warning ``skipped invalid UTF-8 at line N …`` and
  resets the chain expectation like an unparseable line (forensic reads).
- A UTF-8 byte order mark before the first line (an editor's, never vak's) is taken off: the header
  reads, and the chain is checked without it.
- Torn tail (spec §6.2 item 7): vak appends straight after a final line that lacks its LF, fusing the
  new entry with the fragment so both are lost on the next open. Here, the first append through a
  writable handle whose file does not end in LF writes that LF first, in the same ``write`` call as
  the new line. The fragment stays on disk untouched (evidence) and is still reported as unparseable
  on the next open; the new entry survives. Read-only handles never write.

Locking (§6.3): ``flock(LOCK_EX | LOCK_NB)`` on the append descriptor of the ``.jsonl`` itself, held
for the handle's lifetime, released with an explicit ``LOCK_UN`` before closing (as G4 does).
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from vakaudit.errors import CorruptError, ExistsError, LedgerError, LockedError, UnreadableError
from vakaudit.ledger.chain import ChainVerifier, line_digest
from vakaudit.ledger.entry import KNOWN_KINDS, Entry, EntryParseError
from vakaudit.ledger.framing import MAX_LINE_BYTES, LongLine
from vakaudit.ledger.ids import format_ts, new_uuid7, now_ns
from vakaudit.ledger.records import LedgerReader, Record, RecordRun
from vakaudit.ledger.vocab import EntryKind

__all__ = ["SessionLog"]

_TAIL = object()  # sentinel: "parent = current tail"

_fdatasync = getattr(os, "fdatasync", os.fsync)


def _generation_for(header: Entry | None) -> str:
    from vakaudit.ledger.turns import generation_for

    app_version = ""
    if header is not None:
        contract = header.payload.get("contract")
        if isinstance(contract, dict) and isinstance(contract.get("app_version"), str):
            app_version = contract["app_version"]
    return generation_for(app_version)


def _open_for_reading(path: Path) -> BinaryIO:
    """``path`` opened read-only as a binary file; :class:`UnreadableError` when it cannot be
    (``FileNotFoundError`` when it is not there).

    ``O_NONBLOCK`` and the regular-file check come before any read: a FIFO or device named like a
    ledger is refused instead of blocking the reader.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise  # the caller named a file that is not there (or that vanished): its own error
    except OSError as exc:
        raise UnreadableError(
            f"{path} cannot be opened for reading: {exc.strerror or exc}", exc.errno
        ) from exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnreadableError(f"{path} is not a regular file; not read")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


class SessionLog:
    """A handle on one session ledger. Build it with :meth:`create`, :meth:`open` or
    :meth:`open_read_only`; usable as a context manager."""

    def __init__(self, path: Path, *, fd: int | None, clock: Callable[[], int] | None,
                 new_id: Callable[[], str] | None, fsync: bool, generation: str | None) -> None:  # fmt: skip
        self.path = path
        self._fd = fd
        self._writable = fd is not None
        self._clock = clock or now_ns
        self._new_id = new_id or new_uuid7
        self._fsync = fsync
        self._generation_override = generation
        self.entries: list[Entry] = []
        self.warnings: list[str] = []
        #: lines whose prev_hash is not the digest of the line before them (vak's "broken hash chain")
        self.broken_links: list[int] = []
        self.line_nos: list[int] = []  # physical 1-based line number of each entry
        self._by_id: dict[str, int] = {}
        self._admissions: set[str] = set()
        self._header_idx: int | None = None
        self.tail_id: str | None = None
        self.tail_hash: str | None = None
        self._needs_lf = False
        self._closed = False

    # -- construction ------------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        path: str | os.PathLike,
        header: dict[str, Any],
        *,
        clock: Callable[[], int] | None = None,
        new_id: Callable[[], str] | None = None,
        fsync: bool = True,
        generation: str | None = None,
    ) -> SessionLog:
        """Create a new ledger and write its header (§6.1). Refuses a non-empty file (ExistsError)."""
        p = Path(path).expanduser()
        p.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        cls._lock(fd, p)
        if os.fstat(fd).st_size > 0:
            cls._unlock_close(fd)
            raise ExistsError(f"{p} already exists and is not empty; open it instead of creating it")
        log = cls(p, fd=fd, clock=clock, new_id=new_id, fsync=fsync, generation=generation)
        log.append(EntryKind.HEADER, header, parent_id=None)
        return log

    @classmethod
    def open(
        cls,
        path: str | os.PathLike,
        *,
        clock: Callable[[], int] | None = None,
        new_id: Callable[[], str] | None = None,
        fsync: bool = True,
        generation: str | None = None,
        strict_utf8: bool = True,
    ) -> SessionLog:
        """Open an existing ledger for appending: exclusive lock for the handle's lifetime (§6.2)."""
        p = Path(path).expanduser()
        fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)  # missing -> FileNotFoundError
        cls._lock(fd, p)
        log = cls(p, fd=fd, clock=clock, new_id=new_id, fsync=fsync, generation=generation)
        try:
            log._read(strict_utf8)
        except BaseException:
            log.close()
            raise
        return log

    @classmethod
    def open_read_only(
        cls, path: str | os.PathLike, *, generation: str | None = None, strict_utf8: bool = True
    ) -> SessionLog:
        """Open without a lock (works while another process holds it and appends); appends raise
        :class:`~vakaudit.errors.LockedError`."""
        log = cls(Path(path).expanduser(), fd=None, clock=None, new_id=None, fsync=False, generation=generation)
        log._read(strict_utf8)
        return log

    @classmethod
    def read_only_from(
        cls, label: str | os.PathLike, stream: BinaryIO, *, generation: str | None = None, strict_utf8: bool = True
    ) -> SessionLog:
        """A read-only log of the ledger lines in ``stream`` (a binary file object), named ``label``.

        For ledgers whose entries are not a file of lines, such as a 7.0 conversation directory's
        frames (one entry each): the entries, one per line, are read through the same parse as a
        ledger file. An entry without ``prev_hash`` links nothing (7.0 entries carry none)."""
        log = cls(Path(label).expanduser(), fd=None, clock=None, new_id=None, fsync=False, generation=generation)
        log._read(strict_utf8, stream)
        return log

    @staticmethod
    def _lock(fd: int, path: Path) -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise LockedError(
                f"{path} is locked by another writable handle (vak may be running); "
                "use open_read_only to read it"
            ) from exc

    @staticmethod
    def _unlock_close(fd: int) -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _read(self, strict_utf8: bool, stream: BinaryIO | None = None) -> None:
        path_display = str(self.path)
        verifier = ChainVerifier(path_display)
        with stream if stream is not None else _open_for_reading(self.path) as f:
            reader = LedgerReader(f.read, chain=verifier)
            for item in reader:
                if type(item) is RecordRun:
                    self._take_run(item, verifier)
                else:
                    self._take(item, verifier, strict_utf8)
        self.warnings = verifier.finish()
        self.broken_links = list(verifier.broken_lines)
        self.tail_hash = verifier.tail_hash
        self.tail_id = self.entries[-1].id if self.entries else None
        self._needs_lf = not reader.ends_with_lf

    def _take(self, rec: Record, verifier: ChainVerifier, strict_utf8: bool) -> None:
        """One line of the record stream (the reader linked the chain already)."""
        line_no = rec.line_no
        if rec.defect is not None:
            if isinstance(rec.raw, LongLine):  # not held: skipped like an unparseable line
                verifier.note(f"skipped line {line_no} of {verifier.path_display}: {rec.raw.length:,} bytes, longer "
                              f"than the {MAX_LINE_BYTES:,} bytes a line is read up to")  # fmt: skip
            elif not rec.valid_utf8:
                if strict_utf8:
                    raise CorruptError(f"line {line_no} of {verifier.path_display} is not valid UTF-8 "
                                       "(open with strict_utf8=False to skip it)", line=line_no)  # fmt: skip
                verifier.note(f"skipped invalid UTF-8 at line {line_no} of {verifier.path_display}")
            return  # any other defect: "skipped unparseable entry" (the reader's chain said it)
        env = rec.envelope
        if env is not None:
            self._add_entry(Entry.lazy(rec.raw, env), line_no, verifier)

    def _take_run(self, run: RecordRun, verifier: ChainVerifier) -> None:
        at = dict(run.at_turns)
        new_entry = Entry.__new__
        for i, ident in enumerate(run.ids):
            e = new_entry(Entry)
            e.id, e.parent_id, e.ts, e.kind = ident, run.parents[i], run.tss[i], run.kinds[i]
            e.prev_hash, e.at_turn = run.prev_hash(i), at.get(i)
            e.raw = run.raw(i)
            e._payload = None
            self._add_entry(e, run.first_line + i, verifier)

    def _add_entry(self, e: Entry, line_no: int, verifier: ChainVerifier) -> None:
        kind = e.kind
        if kind not in KNOWN_KINDS:
            verifier.note(f"entry of unknown kind {kind!r} at line {line_no} of {verifier.path_display} kept as raw")
        elif kind == EntryKind.ACTIVITY:
            try:
                self._index_admission(e.payload)
            except EntryParseError:  # attested by its successor, yet no JSON: an entry without payload
                pass
            e.release_payload()  # decoded again on use: memory stays with the file's bytes
        elif kind == EntryKind.HEADER and self._header_idx is None:
            self._header_idx = len(self.entries)
        self._by_id[e.id] = len(self.entries)
        self.entries.append(e)
        self.line_nos.append(line_no)

    def _index_admission(self, payload: dict) -> None:
        data = payload.get("data")
        if isinstance(data, dict):
            rid = data.get("request_id")
            if isinstance(rid, str):
                self._admissions.add(rid)

    # -- state -------------------------------------------------------------------------------------

    @property
    def writable(self) -> bool:
        return self._writable and not self._closed

    @property
    def header(self) -> Entry | None:
        """The first ``header`` entry in file order."""
        return self.entries[self._header_idx] if self._header_idx is not None else None

    @property
    def generation(self) -> str:
        """Projection generation: the override given on open, else from ``contract.app_version``."""
        if self._generation_override is not None:
            return self._generation_override
        return _generation_for(self.header)

    def get(self, entry_id: str) -> Entry | None:
        """The entry with this id (its last occurrence in the file), or None."""
        i = self._by_id.get(entry_id)
        return self.entries[i] if i is not None else None

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._by_id

    def line_no_of(self, entry_id: str) -> int | None:
        """Physical 1-based line number of an entry, None when unknown (0 for unsaved entries)."""
        i = self._by_id.get(entry_id)
        return self.line_nos[i] if i is not None else None

    # -- writing -----------------------------------------------------------------------------------

    def append(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        parent_id: Any = _TAIL,
        ts: str | None = None,
        entry_id: str | None = None,
        at_turn: str | None = None,
    ) -> Entry:
        """Append one entry (§6.4): line + LF in one write, then fdatasync unless ``fsync=False``.

        ``parent_id`` defaults to the current tail; pass None for a new root. An unknown parent raises
        :class:`~vakaudit.errors.CorruptError` and nothing is written. ``prev_hash`` is always the
        digest of the last parsed or written line. O(1): nothing is re-read.
        """
        if self._closed:
            raise LedgerError(f"{self.path}: the handle is closed")
        if not self._writable:
            raise LockedError(f"{self.path} was opened read-only; appends are refused")
        kind = str(kind)  # an EntryKind is written and kept as its text
        parent = self.tail_id if parent_id is _TAIL else parent_id
        if parent is not None and parent not in self._by_id:
            raise CorruptError(f"parent entry {parent} not found", line=0)
        entry = Entry(
            entry_id if entry_id is not None else self._new_id(),
            parent,
            ts if ts is not None else format_ts(self._clock()),
            kind,
            payload,
            prev_hash=self.tail_hash,
            at_turn=at_turn,
        )
        line = entry.to_line()
        data = line + b"\n"
        if self._needs_lf:
            data = b"\n" + data  # terminate a torn final line so the new entry is not fused with it
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)  # type: ignore[arg-type]
            view = view[n:]
        if self._fsync:
            _fdatasync(self._fd)  # type: ignore[arg-type]
        self._needs_lf = False
        self.tail_hash = line_digest(line)
        stored = Entry.lazy(line, (entry.id, entry.parent_id, entry.ts, entry.prev_hash, entry.at_turn, kind))
        if kind == EntryKind.ACTIVITY:
            self._index_admission(payload)
        elif kind == EntryKind.HEADER and self._header_idx is None:
            self._header_idx = len(self.entries)
        self._by_id[entry.id] = len(self.entries)
        self.line_nos.append(0)
        self.entries.append(stored)
        self.tail_id = entry.id
        return stored

    def append_message(self, message: dict[str, Any], meta: dict[str, Any] | None = None, **kw: Any) -> Entry:
        """Append a ``message`` entry (``meta`` omitted when None or empty)."""
        payload: dict[str, Any] = {"message": message}
        if meta:
            payload["meta"] = meta
        return self.append(EntryKind.MESSAGE, payload, **kw)

    def append_activity(
        self,
        activity_id: str,
        activity_kind: str,
        status: str,
        label: str,
        *,
        turn: int | None = None,
        detail: str | None = None,
        data: dict[str, str] | None = None,
        **kw: Any,
    ) -> Entry:
        """Append an ``activity`` entry in vak's field order (``data`` keys sorted, always written)."""
        payload: dict[str, Any] = {"activity_id": activity_id}
        if turn is not None:
            payload["turn"] = turn
        payload["activity_kind"] = activity_kind
        payload["status"] = status
        payload["label"] = label
        if detail is not None:
            payload["detail"] = detail
        payload["data"] = dict(sorted((data or {}).items()))
        return self.append(EntryKind.ACTIVITY, payload, **kw)

    def append_voice_transcript(self, activity_id: str, text: str, finalized: bool, **kw: Any) -> Entry:
        """A ``voice_transcript`` activity as vak writes it (status succeeded when finalized, else
        running; see :mod:`vakaudit.ledger.voice`)."""
        from vakaudit.ledger.voice import voice_transcript_activity

        return self.append_activity(**voice_transcript_activity(activity_id, text, finalized), **kw)

    def append_voice_playback(self, activity_id: str, emitted_ms: int, interrupted: bool, **kw: Any) -> Entry:
        """A ``voice_playback`` activity as vak writes it (status partial when interrupted)."""
        from vakaudit.ledger.voice import voice_playback_activity

        return self.append_activity(**voice_playback_activity(activity_id, emitted_ms, interrupted), **kw)

    def append_child_run(self, status: str, outcome: Any = None) -> Entry:
        """A ``child_run`` terminal marker (§4.10): ``status`` completed/failed/aborted/max_turns,
        ``outcome`` omitted when None."""
        payload: dict[str, Any] = {"status": status}
        if outcome is not None:
            payload["outcome"] = outcome
        return self.append(EntryKind.CHILD_RUN, payload)

    def append_work(self, contract_id: str, revision: int, event: dict[str, Any]) -> Entry:
        """Validate and append one ``work`` event (§4.8, §6.4), then promote ready items.

        ``event`` is the event object (``{"kind": "item_status_changed", "item_id": …}``); the line
        carries it under a second ``kind`` key. The work state of the active chain plus this event is
        re-projected first; an event vak would refuse raises
        :class:`~vakaudit.ledger.work.WorkError` (a :class:`~vakaudit.errors.CorruptError`) and nothing
        is written. Afterwards, while the contract is active, each proposed item whose dependencies
        all succeeded or were skipped gets ``proposed -> ready`` (attempt 0, "dependencies
        satisfied"). Returns the entry of ``event`` itself.
        """
        from vakaudit.ledger.work import append_work

        return append_work(self, contract_id, revision, event)

    def work_projection(self) -> Any:
        """The strict work state of the active chain (:class:`~vakaudit.ledger.work.WorkProjection`)
        or None; raises :class:`~vakaudit.ledger.work.WorkError` if the chain holds an invalid event."""
        from vakaudit.ledger.work import project_work

        return project_work(self.chain_to_root())

    def child_run_status(self) -> str | None:
        """``status`` of the newest ``child_run`` entry on the active chain, else None."""
        from vakaudit.ledger.work import child_run_status

        return child_run_status(self.chain_to_root())

    def reconcile_running_work(
        self, live_child_sessions: Any = (), sessions_home: str | os.PathLike | None = None
    ) -> int:
        """Settle items left running by a restart; see :func:`vakaudit.ledger.work.reconcile_running_work`."""
        from vakaudit.ledger.work import reconcile_running_work

        return reconcile_running_work(self, live_child_sessions, sessions_home)

    def plan_compaction(self, keep_recent: int, *, generation: str | None = None) -> Any:
        """``plan_compaction(keep_recent)``: message-level in G1/G1', turn-counting in G2 (§7.1).

        G3 and later plan by packets (:meth:`derive_with_plan`), so ValueError there.
        """
        gen = generation or self.generation
        if gen == "g2":
            from vakaudit.ledger.compaction import plan_turn_compaction

            return plan_turn_compaction(self.chain_to_root(), keep_recent)
        from vakaudit.ledger.projection import plan_compaction

        return plan_compaction(self.chain_to_root(), keep_recent, generation=gen)

    def apply_compaction(self, plan: Any, summary: str, tokens_before: int) -> Entry:
        """Write the shape-A ``compaction`` entry of a plan from :meth:`plan_compaction` (§4.3)."""
        return self.append(
            "compaction",
            {
                "summary": summary,
                "first_kept_entry_id": plan.first_kept_entry_id,
                "tokens_before": tokens_before,
                "partition": plan.partition(),
                "reset_all": False,
            },
        )

    def retrieve_relevant_entries(
        self, query: str, cap: int, exclude_tail: int = 0, *, generation: str | None = None
    ) -> list[tuple[str, dict]]:
        """Proactive retrieval: ``(entry id, message)`` of the projected messages most relevant to
        ``query``, best first; see :mod:`vakaudit.ledger.retrieval`."""
        from vakaudit.ledger.retrieval import retrieve_relevant_entries

        return retrieve_relevant_entries(
            self.chain_to_root(), query, cap, exclude_tail, generation=generation or self.generation
        )

    # -- navigation and folds ----------------------------------------------------------------------

    def branch_at(self, entry_id: str) -> None:
        """Move the tail to an existing entry (§6.5); writes nothing."""
        if entry_id not in self._by_id:
            raise CorruptError(f"cannot branch at unknown entry {entry_id}", line=0)
        self.tail_id = entry_id

    def chain_to_root(self) -> list[Entry]:
        """The active chain, root first: tail -> parent -> … until null, an unknown id or a cycle."""
        out: list[Entry] = []
        seen: set[str] = set()
        cur = self.tail_id
        by_id, entries = self._by_id, self.entries
        while cur is not None and cur not in seen:
            i = by_id.get(cur)
            if i is None:
                break
            seen.add(cur)
            e = entries[i]
            out.append(e)
            cur = e.parent_id
        out.reverse()
        return out

    def total_usage(self) -> dict[str, int]:
        """``input_tokens`` / ``output_tokens`` summed over messages with ``meta.usage`` on the chain."""
        inp = out = 0
        for e in self.chain_to_root():
            if e.kind != EntryKind.MESSAGE:
                continue
            u = e.usage
            if u is None:
                continue
            i, o = u.get("input_tokens", 0), u.get("output_tokens", 0)
            inp += i if isinstance(i, int) else 0
            out += o if isinstance(o, int) else 0
        return {"input_tokens": inp, "output_tokens": out}

    def has_request_admission(self, request_id: str) -> bool:
        """Whether ANY activity in the file (all branches) has ``data.request_id == request_id`` (§6.7).

        Answered from an index built while reading and appending, not by a scan.
        """
        return request_id in self._admissions

    # -- projection (delegated) --------------------------------------------------------------------

    def derive_messages(self, *, generation: str | None = None, **kwargs: Any) -> list[dict]:
        """Neutral messages the model would see (no plan); see :mod:`vakaudit.ledger.projection`."""
        from vakaudit.ledger.projection import derive_messages

        return derive_messages(self.chain_to_root(), generation=generation or self.generation, **kwargs)

    def derive_with_plan(self, plan: Any, *, generation: str | None = None, **kwargs: Any) -> list[dict]:
        """Projection under a working-set plan (G2+)."""
        from vakaudit.ledger.projection import derive_with_plan

        return derive_with_plan(
            self.chain_to_root(), plan, generation=generation or self.generation, **kwargs
        )

    def turn_index(self, *, generation: str | None = None) -> Any:
        """The :class:`~vakaudit.ledger.turns.TurnIndex` of the active chain."""
        from vakaudit.ledger.turns import TurnIndex

        return TurnIndex.from_chain(self.chain_to_root(), generation=generation or self.generation)

    # -- lifetime ----------------------------------------------------------------------------------

    def close(self) -> None:
        """Release the lock (explicit ``LOCK_UN``) and close the descriptor. Idempotent."""
        if self._closed:
            return
        self._closed = True
        fd, self._fd = self._fd, None
        if fd is not None:
            self._unlock_close(fd)

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # never raise from a finalizer
            pass

    def __repr__(self) -> str:
        mode = "closed" if self._closed else ("writable" if self._writable else "read-only")
        return f"SessionLog({str(self.path)!r}, {mode}, entries={len(self.entries)})"
