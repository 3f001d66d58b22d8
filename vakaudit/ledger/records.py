"""The one reader of a session ledger file: physical lines in, records out (spec ledger.md §2-§3, §6).

Every reader of a JSONL session ledger consumes this stream: :class:`~vakaudit.ledger.SessionLog`'s
open, the scan's ``entries`` and ``entry_fields`` rows (:mod:`vakaudit.artifacts.session_ledger`)
and the verdict (:mod:`vakaudit.ledger.verdict`). None of them frames a line, parses an envelope,
hashes a line, links the chain or numbers a turn itself: :class:`LedgerReader` does it once and
yields, in file order, per line a :class:`Record` (line number, byte offset, size, the line's bytes,
envelope, the defect that makes it no entry, digest, chain verdict, timestamp order, turn number and
turn id) or, for a run of consecutive entry lines the compiled kernel vouched for, one
:class:`RecordRun` holding the same facts as columns.

Two paths behind this one interface, chosen by the ``native`` parameter:

- the **reference path** (Python, ``native=False``), written for clarity: it is the oracle the
  compiled kernel is tested against (``tests/native``);
- the **compiled kernel** (``read_run`` of ``vakaudit/_native``), which takes every line it can vouch
  for and leaves the others, one at a time, to the reference path's classification. When the caller
  asks for ``entries`` rows (``rows=``), the kernel writes the rows of the lines it takes straight into
  the caller's Arrow column buffers in the same pass.

What a line is (one definition, :func:`vakaudit.ledger.chain.classify`): blank (skipped by vak without touching the chain),
an entry (vak's envelope, valid UTF-8 JSON nested at most 128 levels), or a line with a defect
(unparseable, invalid UTF-8, too deep, too long to hold, torn at the end of the file). A line whose
digest the next entry's ``prev_hash`` attests holds bytes vak itself serialized or read back as valid
JSON: it is not decoded again, only its nesting depth is checked (``deep=True`` decodes every line).
A CR before the LF and a UTF-8 byte order mark at the start of the file are taken off and noted
(vak's writer never writes them; the chain is checked without them).

No I/O here except reading from the descriptor the caller opened (never writes, locks or seeks past
``size``: a writer appending meanwhile cannot make the reader see a half-written line).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from vakaudit._native import linescan
from vakaudit.findings import FindingCode
from vakaudit.ledger.chain import ChainVerifier, Defect, LineStatus, classify, too_deep, too_long
from vakaudit.ledger.depth import MAX_JSON_DEPTH, REST_MIN_BYTES, attested_depth, json_depth
from vakaudit.ledger.entry import KNOWN_KINDS, WRITTEN_ENVELOPE, EntryParseError, parse_envelope
from vakaudit.ledger.framing import MAX_LINE_BYTES, LongLine, LongLineBuilder
from vakaudit.ledger.ids import format_ts, parse_ts
from vakaudit.ledger.vocab import DIRECTIVE_KIND, KERNEL_VOCAB, payload_directive, turn_step

__all__ = [
    "BOM",
    "CHUNK_BYTES",
    "HEAD_BYTES",
    "TORN_RECHECK_S",
    "Defect",
    "LedgerReader",
    "Record",
    "RecordRun",
    "TurnState",
    "classify",
    "grew_past",
    "ts_key",
]

C = FindingCode

BOM = b"\xef\xbb\xbf"
#: bytes read at a time (fits the cache while the kernel hashes it)
CHUNK_BYTES = 1 << 20
#: the first bytes of the file kept as read (:attr:`LedgerReader.head`: an incremental scan's anchor)
HEAD_BYTES = 4096
#: How long an unterminated last line is given to be completed by a live writer before it counts as
#: torn: Linux grows a file page by page within one write(), so a reader can see a line's first part
#: while the writer's system call is still copying the rest.
TORN_RECHECK_S = 0.05

_ENVELOPE_HEAD = 1024  # the envelope is matched in the line's first bytes, decoded as Latin-1
_RUN_LINES = 4096  # lines per kernel call when no rows are written
_sha256 = hashlib.sha256
_env_match = WRITTEN_ENVELOPE.match


def _read_run():  # noqa: ANN202
    return getattr(linescan, "read_run", None) if linescan is not None else None


def grew_past(fd: int, size: int) -> bool:
    """Whether the file grew past ``size`` (a writer appended), looking twice, TORN_RECHECK_S apart."""
    if os.fstat(fd).st_size > size:
        return True
    time.sleep(TORN_RECHECK_S)
    return os.fstat(fd).st_size > size


def ts_key(ts: str) -> str | None:
    """A string that sorts like the instant ``ts`` names (None when it is not RFC 3339): the 29
    characters ``YYYY-MM-DDTHH:MM:SS.fffffffff`` of the instant in UTC (the compiled kernel's key)."""
    if len(ts) == 30 and ts[19] == "." and ts[-1] == "Z":  # nanoseconds: the key is the text
        return ts[:29]
    if len(ts) == 24 and ts[19] == "." and ts[-1] == "Z":  # vak's usual millisecond form
        return ts[:23] + "000000"
    if len(ts) >= 20 and ts[-1] == "Z" and ts[10] == "T" and len(ts) <= 30:
        if len(ts) == 20:
            return ts[:19] + ".000000000"
        if ts[19] == ".":
            return ts[:19] + "." + (ts[20:-1] + "000000000")[:9]
    try:
        ns = parse_ts(ts)
    except ValueError:
        return None
    secs, nanos = divmod(ns, 1_000_000_000)
    return format_ts(secs * 1_000_000_000)[:19] + f".{nanos:09d}"


# -- records --------------------------------------------------------------------------------------


class Record:
    """One physical line of a ledger, read.

    ``raw``: the line without its LF, one CR and (line 1) a byte order mark; for a line longer than
    :data:`~vakaudit.ledger.framing.MAX_LINE_BYTES`, a :class:`~vakaudit.ledger.framing.LongLine`
    (its first bytes, its length and digests). ``offset_bytes`` / ``size_bytes``: where the physical
    line starts and how many bytes it takes with everything (BOM, CR, LF). ``envelope`` is set for an
    entry, ``defect`` for a line that is none; a blank line has neither. ``chain`` is the hash chain's
    verdict (:class:`~vakaudit.ledger.chain.LineStatus`), ``expected`` the digest the chain expected as
    this line's ``prev_hash``. ``ts_back``: the previous entry's timestamp when this entry's sorts
    before it. ``turn_no`` / ``turn_id`` / ``directive``: the file-order turn numbering
    (:func:`vakaudit.ledger.vocab.turn_step`; ``turn_id`` is ``at_turn`` where the envelope has one),
    set only when the reader numbers turns (``rows=``)."""

    __slots__ = (
        "line_no", "offset_bytes", "size_bytes", "raw", "terminated", "crlf", "bom", "envelope", "defect",
        "digest", "chain", "expected", "ts_back", "turn_no", "turn_id", "directive", "kind_end", "_payload",
        "_decoded",
    )  # fmt: skip

    def __init__(self, line_no: int, offset_bytes: int, size_bytes: int, raw: bytes, terminated: bool,
                 crlf: bool = False, bom: bool = False) -> None:  # fmt: skip
        self.line_no = line_no
        self.offset_bytes = offset_bytes
        self.size_bytes = size_bytes
        self.raw = raw
        self.terminated = terminated
        self.crlf = crlf
        self.bom = bom
        self.envelope: tuple | None = None
        self.defect: Defect | None = None
        self.digest: str | None = None
        self.chain = LineStatus.BLANK
        self.expected: str | None = None
        self.ts_back: str | None = None
        self.turn_no: int | None = None
        self.turn_id: str | None = None
        self.directive: bool | None = None
        self.kind_end = 0  # offset in raw of the ',' or '}' after the kind value, when the envelope matched
        self._payload: dict | None = None
        self._decoded = False

    @property
    def data_offset(self) -> int:
        """File offset of ``raw[0]`` (after a byte order mark)."""
        return self.offset_bytes + 3 if self.bom else self.offset_bytes

    @property
    def payload(self) -> dict | None:
        """The entry's payload (everything after the envelope), decoded on first use; None for a line
        that is no entry, or for an attested line that does not decode after all."""
        if not self._decoded:
            self._decoded = True
            if self.envelope is not None and not isinstance(self.raw, LongLine):
                try:
                    self._payload = parse_envelope(self.raw)[1]
                except EntryParseError:
                    self._payload = None
        return self._payload

    @property
    def valid_utf8(self) -> bool:
        """Whether the line's bytes are valid UTF-8 (vak's line reader fails on any line that is not,
        torn or not)."""
        raw = self.raw
        if raw.isascii():
            return True
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True

    def physical(self) -> bytes:
        """The line's bytes as they are in the file (BOM, CR and LF included; a long line's prefix)."""
        return (BOM if self.bom else b"") + bytes(self.raw) + (b"\r" if self.crlf else b"") + (
            b"\n" if self.terminated else b""
        )

    def __repr__(self) -> str:
        what = self.envelope[5] if self.envelope else (self.defect[0] if self.defect else "blank")
        return f"Record(line {self.line_no} @ {self.offset_bytes}, {what}, {self.chain})"


class RecordRun:
    """Consecutive entry lines the compiled kernel vouched for, as columns (one Python object per
    column, not per line).

    Line ``i`` is ``buf[starts[i] : stop(i)]`` (no LF, no CR: the kernel takes only lines in vak's own
    form), line number ``first_line + i``, file offset ``base + starts[i]``. ``ids``, ``parents``,
    ``kinds``, ``tss``, ``digests``: the envelopes and line digests. ``flagged``: ``(i, bits, prev_hash)``
    of the lines with a chain break (1), no prev_hash although one was expected (2), a timestamp before
    the previous entry's (4), a length over the caller's threshold (8) or a parent that is not the
    previous line (16); every other line's ``prev_hash`` is the digest the chain expected.
    ``expected_in`` / ``ts_in``: the chain expectation and the previous entry's timestamp before the
    run. Where the reader was asked for rows, the kernel wrote these lines' ``entries`` rows into the
    caller's buffers. ``buf`` is the reader's chunk (bytes: the run stays valid after the next read)."""

    __slots__ = ("first_line", "buf", "base", "starts", "end", "ids", "parents", "kinds", "tss", "digests",
                 "flagged", "at_turns", "expected_in", "ts_in", "_prevs")  # fmt: skip

    BROKEN, UNCHAINED, TS_BACK, LONG, PARENT = 1, 2, 4, 8, 16

    def __init__(self, first_line: int, buf: bytes, base: int, result: tuple, expected_in: str | None,
                 ts_in: str | None) -> None:  # fmt: skip
        self.first_line = first_line
        self.buf = buf
        self.base = base
        (self.end, self.starts, self.ids, self.parents, self.kinds, self.tss, self.digests, self.flagged,
         _exp, _key, self.at_turns) = result  # fmt: skip
        self.expected_in = expected_in
        self.ts_in = ts_in
        self._prevs: dict[int, str | None] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def stop(self, i: int) -> int:
        """Index in ``buf`` of line ``i``'s LF."""
        return self.starts[i + 1] - 1 if i + 1 < len(self.starts) else self.end - 1

    def raw(self, i: int) -> bytes:
        return bytes(self.buf[self.starts[i] : self.stop(i)])

    def prev_hash(self, i: int) -> str | None:
        """Line ``i``'s ``prev_hash``: given where flagged, else what the chain expected of it."""
        if self._prevs is None:
            self._prevs = {j: prev for j, _bits, prev in self.flagged}
        if i in self._prevs:
            return self._prevs[i]
        if i:
            return self.digests[i - 1]
        if self.expected_in is not None:
            return self.expected_in
        # nothing was expected of the first line: the kernel did not compare (nor flag) it
        m = _env_match(self.buf[self.starts[0] : self.starts[0] + _ENVELOPE_HEAD].decode("latin-1"))
        return m.group(4) if m is not None else None

    def chain(self, i: int, bits: int | None = None) -> LineStatus:
        """Line ``i``'s chain verdict (``bits``: its flags, when the caller has them at hand)."""
        if bits is None:
            bits = next((b for j, b, _p in self.flagged if j == i), 0)
        if bits & self.BROKEN:
            return LineStatus.BROKEN
        if bits & self.UNCHAINED:
            return LineStatus.UNCHAINED
        if i == 0 and self.expected_in is None:
            return LineStatus.UNCHECKED
        return LineStatus.CHAIN_OK

    def records(self) -> Iterator[Record]:
        """The run line by line, as the reference path would give each (without turn numbers)."""
        at = dict(self.at_turns)
        ts_prev = self.ts_in
        flags = {j: bits for j, bits, _prev in self.flagged}
        for i in range(len(self.ids)):
            start, stop = self.starts[i], self.stop(i)
            rec = Record(self.first_line + i, self.base + start, stop + 1 - start, self.raw(i), True)
            rec.envelope = (self.ids[i], self.parents[i], self.tss[i], self.prev_hash(i), at.get(i), self.kinds[i])
            rec.digest = self.digests[i]
            bits = flags.get(i, 0)
            rec.chain = self.chain(i, bits)
            rec.expected = self.digests[i - 1] if i else self.expected_in
            if bits & self.TS_BACK:
                rec.ts_back = ts_prev
            ts_prev = self.tss[i]
            yield rec


class TurnState(list):
    """The file-order turn numbering state ``[turn_no, turn_id, in_prep]`` (the compiled kernel
    updates it in place)."""

    def __init__(self, turn_no: int = 0, turn_id: str | None = None, in_prep: bool = False) -> None:
        super().__init__((turn_no, turn_id, in_prep))


# -- the reader -----------------------------------------------------------------------------------


class LedgerReader:
    """Reads a ledger into records: ``read(n)`` returns its next bytes (at most ``n``; from byte 0),
    up to ``size`` bytes (None: to the end), e.g. ``functools.partial(os.read, fd)`` with the size the
    file had when it was opened.

    Iterating yields :class:`Record` and :class:`RecordRun` items in file order. ``chain``: the
    :class:`~vakaudit.ledger.chain.ChainVerifier` the reader links (a caller that wants vak's warnings
    passes one that keeps them). ``native``: the compiled kernel (None: when it is available, see
    :mod:`vakaudit._native`). ``deep``: decode every line (the reference path, no attestation
    shortcut). ``long_line_bytes``: the length the kernel flags (``RecordRun.LONG``).

    ``rows=(cols, fields)``: the caller builds ``entries`` rows; the kernel writes those of the lines
    it takes into ``cols`` (an ``EntryCols``) and counts their members into ``fields``, from the line
    at byte ``rows_from`` on, at most ``room()`` lines a call; records get turn numbers from there
    (``turns``: the numbering state at ``rows_from``). ``grew()``: whether a writer is appending (asked
    only about an unterminated last line; such a line is then left unread: :attr:`growing`).
    ``progress(bytes)`` is called after each chunk.

    After iteration: :attr:`line_count`, :attr:`consumed` (bytes up to the end of the last line
    read), :attr:`growing`, :attr:`head` (the first :data:`HEAD_BYTES` bytes), :meth:`last_line`,
    :attr:`turns`.
    """

    def __init__(
        self,
        read: Callable[[int], bytes],
        size: int | None = None,
        *,
        chain: ChainVerifier | None = None,
        native: bool | None = None,
        deep: bool = False,
        long_line_bytes: int = MAX_LINE_BYTES,
        rows: tuple[Any, dict] | None = None,
        rows_from: int = 0,
        turns: TurnState | None = None,
        room: Callable[[], int] | None = None,
        grew: Callable[[], bool] | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self._read = read
        self.size = size
        self.chain = chain if chain is not None else ChainVerifier(keep_warnings=False)
        kernel = _read_run()
        self._kernel = None if deep or native is False else kernel
        if native and kernel is None:
            raise RuntimeError("the compiled kernel is not available (not built, or VAKAUDIT_NO_NATIVE is set)")
        self.deep = deep
        self.long_line_bytes = long_line_bytes
        self.rows = rows
        self.rows_from = rows_from
        self.turns = turns if turns is not None else TurnState()
        self._room = room
        self._grew = grew if grew is not None else (lambda: False)
        self._progress = progress
        self.line_count = 0
        self.consumed = 0
        self.growing = False
        self.head = b""
        self._last: Record | RecordRun | None = None
        self._ts_key: str | None = None
        self._ts: str | None = None

    # -- framing ----------------------------------------------------------------------------------

    def _spans(self) -> Iterator[tuple]:
        """``("span", buf, start, stop, base)``: complete lines ``buf[start:stop]`` (``base``: the
        file offset of ``buf[0]``); ``("long", offset, LongLine, terminated)``: a line over the bound,
        streamed past, not held; ``("tail", offset, bytes)``: the final fragment without LF."""
        read_bytes = self._read
        remaining = self.size
        parts: list[bytes] = []  # the start of a line that began in an earlier chunk
        held = 0  # bytes in parts
        long: LongLineBuilder | None = None  # a carried line over MAX_LINE_BYTES: streamed, not held
        base = 0  # file offset of the first byte not yet handed out
        read = 0
        while remaining is None or remaining > 0:
            chunk = read_bytes(CHUNK_BYTES if remaining is None else min(CHUNK_BYTES, remaining))
            if not chunk:
                break  # the end (or the file shrank while we read it: stop at what is there)
            if read < HEAD_BYTES:
                self.head += chunk[: HEAD_BYTES - read]
            read += len(chunk)
            if remaining is not None:
                remaining -= len(chunk)
            start = 0
            if long is not None or parts:  # complete the carried line alone: only its bytes are copied
                lf = chunk.find(b"\n")
                if long is None and held + (len(chunk) if lf < 0 else lf) > MAX_LINE_BYTES:
                    long = LongLineBuilder(b"".join(parts))
                    parts, held = [], 0
                if long is not None:
                    long.add(chunk if lf < 0 else chunk[:lf])
                    if lf >= 0:
                        yield "long", base, long.line(), True
                        base += long.length + 1
                        long = None
                        start = lf + 1
                elif lf < 0:
                    parts.append(chunk)
                    held += len(chunk)
                else:
                    parts.append(chunk[: lf + 1])
                    line = b"".join(parts)
                    parts, held = [], 0
                    yield "span", line, 0, len(line), base
                    base += len(line)
                    start = lf + 1
            if long is None and (start or not parts):
                last = chunk.rfind(b"\n", start)
                if last >= 0:
                    yield "span", chunk, start, last + 1, base - start
                    base += last + 1 - start
                    start = last + 1
                if start < len(chunk):
                    rest = chunk[start:]
                    if len(rest) > MAX_LINE_BYTES:
                        long = LongLineBuilder(rest)
                    else:
                        parts, held = [rest], len(rest)
            if self._progress is not None:
                self._progress(read)
        if long is not None:
            yield "long", base, long.line(), False
        elif parts:
            yield "tail", base, b"".join(parts)

    # -- settling one record, in file order -------------------------------------------------------

    def _settle(self, rec: Record, turns: bool) -> Record:
        chain = self.chain
        self.line_count = rec.line_no
        self.consumed = rec.offset_bytes + rec.size_bytes
        self._last = rec
        if rec.defect is not None:
            rec.expected = chain.expected
            code = rec.defect[0]
            if code is C.INVALID_UTF8 or code is C.LINE_TOO_LONG or not rec.valid_utf8:
                chain.reset()  # skipped, not "unparseable" in vak's wording
            else:
                chain.unparseable(rec.line_no)
            rec.chain = LineStatus.UNPARSEABLE
            return rec
        env = rec.envelope
        if env is None:
            rec.expected = chain.expected
            chain.blank(rec.line_no)
            return rec
        if rec.digest is None:
            rec.digest = _sha256(rec.raw).hexdigest()
        rec.expected = chain.expected
        rec.chain = chain.link(rec.line_no, rec.raw, env[3], rec.digest)
        ts = env[2]
        key = ts_key(ts)
        if key is not None:
            if self._ts_key is not None and key < self._ts_key:
                rec.ts_back = self._ts
            self._ts_key, self._ts = key, ts
        if turns and rec.offset_bytes >= self.rows_from:
            kind = env[5]
            directive = payload_directive(kind, rec.payload or {}) if kind == DIRECTIVE_KIND else None
            st = self.turns
            st[0], st[1], st[2], rec.turn_no, turn_id = turn_step(st[0], st[1], st[2], kind, directive, env[0])
            rec.directive = directive
            rec.turn_id = env[4] if env[4] is not None else turn_id
        return rec

    def _frame(self, line_no: int, off: int, raw: bytes, terminated: bool) -> Record:
        """A physical line with its CR and (first line) BOM taken off, not yet classified."""
        size = (raw.length if isinstance(raw, LongLine) else len(raw)) + terminated
        crlf = bom = False
        if isinstance(raw, LongLine):
            return Record(line_no, off, size, raw, terminated)
        if raw[-1:] == b"\r":
            raw = raw[:-1]
            crlf = True
        if line_no == 1 and raw[:3] == BOM:
            raw = raw[3:]
            bom = True
        return Record(line_no, off, size, raw, terminated, crlf, bom)

    def _classify(self, rec: Record) -> str:
        """Decode ``rec`` fully and set its envelope (and payload) or defect; returns what it is."""
        if isinstance(rec.raw, LongLine):
            rec.defect = too_long(rec.raw.length, rec.offset_bytes)
            return "bad"
        what, val, payload = classify(rec.raw, rec.data_offset, rec.terminated)
        if what == "entry":
            rec.envelope, rec._payload, rec._decoded = val, payload, True
            rec.digest = _sha256(rec.raw).hexdigest()
        elif what == "bad":
            rec.defect = val
            rec.digest = _sha256(rec.raw).hexdigest()
        return what

    def _blank_fast(self, rec: Record) -> bool:
        raw = rec.raw
        return not isinstance(raw, LongLine) and raw[:1] != b"{" and not raw.strip()

    # -- iteration --------------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Record | RecordRun]:
        if self._kernel is not None:
            return self._iter_native()
        return self._iter_reference()

    def records(self) -> Iterator[Record]:
        """The stream line by line: each :class:`RecordRun` given as its records (for a reader that
        wants every line as a :class:`Record`, not the kernel's columns)."""
        for item in self:
            if type(item) is RecordRun:
                yield from item.records()
            else:
                yield item

    def _lines(self) -> Iterator[tuple[int, int, bytes, bool]]:
        """``(line_no, offset, raw, terminated)`` of every physical line (raw keeps a CR). The final
        fragment without LF comes only when no writer is appending it (else :attr:`growing`)."""
        line_no = 0
        for item in self._spans():
            if item[0] == "span":
                _, buf, pos, stop, base = item
                while pos < stop:
                    lf = buf.index(b"\n", pos, stop)
                    line_no += 1
                    yield line_no, base + pos, buf[pos:lf], True
                    pos = lf + 1
            elif item[0] == "long":
                line_no += 1
                yield line_no, item[1], item[2], item[3]
            elif not self._grew():
                line_no += 1
                yield line_no, item[1], item[2], False
            else:
                self.growing = True

    def _iter_reference(self) -> Iterator[Record]:
        """The reference path: one line at a time, held back until the next non-blank line tells
        whether it is attested."""
        turns = self.rows is not None
        deep = self.deep
        head = _ENVELOPE_HEAD
        pending: Record | None = None
        checked = True  # the pending record is classified for good (decoded or bad)
        blanks: list[Record] = []  # blank lines after the pending one
        for line_no, off, raw, terminated in self._lines():
            rec = self._frame(line_no, off, raw, terminated)
            if self._blank_fast(rec):
                if pending is None:
                    yield self._settle(rec, turns)
                else:
                    blanks.append(rec)
                continue
            rec_checked = True
            m = None if deep or isinstance(rec.raw, LongLine) else _env_match(rec.raw[:head].decode("latin-1"))
            if m is not None and rec.raw[-1:] == b"}":
                ident, parent, ts, prev, at_turn, kind = m.groups()
                rec.envelope = (ident, parent, ts, prev, at_turn, kind)
                rec.kind_end = m.end() - 1
                rec.digest = _sha256(rec.raw).hexdigest()
                rec_checked = False
            elif self._classify(rec) == "blank":
                if pending is None:
                    yield self._settle(rec, turns)
                else:
                    blanks.append(rec)
                continue
            if pending is not None:
                if not checked:
                    self._check_pending(pending, rec.envelope is not None and rec.envelope[3] == pending.digest)
                yield self._settle(pending, turns)
                for b in blanks:
                    yield self._settle(b, turns)
                blanks.clear()
            pending, checked = rec, rec_checked
        if pending is not None:
            if not checked:
                self._check_pending(pending, False)
            yield self._settle(pending, turns)
            for b in blanks:
                yield self._settle(b, turns)

    def _check_pending(self, rec: Record, attested: bool) -> None:
        """Settle what a line whose envelope the expression matched is: attested by the next line (vak
        hashed these bytes: valid UTF-8 and JSON; the depth is still checked), else decoded fully."""
        if attested:
            raw = rec.raw
            depth = json_depth(raw) if len(raw) - rec.kind_end < REST_MIN_BYTES else attested_depth(raw, rec.kind_end)
            if depth > MAX_JSON_DEPTH:
                rec.envelope, rec.defect = None, too_deep(depth, rec.data_offset)
            return
        rec.envelope = None
        self._classify(rec)

    def _iter_native(self) -> Iterator[Record | RecordRun]:
        """The compiled kernel over each span; the lines it leaves go one by one through
        :func:`classify` (decoded fully: no next line is at hand to attest them)."""
        kernel = self._kernel
        rows = self.rows
        room = self._room
        long_line = self.long_line_bytes
        turns_on = rows is not None
        line_no = 0
        for item in self._spans():
            kind = item[0]
            if kind != "span":
                if kind == "tail" and self._grew():
                    self.growing = True
                    continue
                line_no += 1
                rec = self._frame(line_no, item[1], item[2], kind == "long" and item[3])
                if not self._blank_fast(rec):
                    self._classify(rec)
                yield self._settle(rec, turns_on)
                continue
            _, buf, pos, stop, base = item
            while pos < stop:
                with_rows = rows is not None and base + pos >= self.rows_from
                end = stop
                if rows is not None and not with_rows and base + stop > self.rows_from:
                    end = self.rows_from - base  # the lines before rows_from: no rows
                if with_rows:
                    k = room() if room is not None else _RUN_LINES
                    spec = (rows[0], rows[1], self.turns, base, line_no, KNOWN_KINDS, KERNEL_VOCAB)
                    r = kernel(buf, pos, end, max(k, 1), self.chain.expected,
                               self._ts_key.encode("ascii") if self._ts_key else None, long_line, spec)  # fmt: skip
                else:
                    r = kernel(buf, pos, end, _RUN_LINES, self.chain.expected,
                               self._ts_key.encode("ascii") if self._ts_key else None, long_line)  # fmt: skip
                if r[0] > pos:
                    run = RecordRun(line_no + 1, buf, base, r, self.chain.expected, self._ts)
                    self._settle_run(run, r)
                    line_no += len(run)
                    pos = r[0]
                    yield run
                    continue
                lf = buf.index(b"\n", pos, stop)
                line_no += 1
                rec = self._frame(line_no, base + pos, buf[pos:lf], True)
                if not self._blank_fast(rec):
                    self._classify(rec)
                yield self._settle(rec, turns_on)
                pos = lf + 1

    def _settle_run(self, run: RecordRun, r: tuple) -> None:
        """The chain, timestamp and counts after a run (the kernel numbered its turns in place)."""
        broken = [run.first_line + i for i, bits, _p in run.flagged if bits & RecordRun.BROKEN]
        unchained = sum(1 for _i, bits, _p in run.flagged if bits & RecordRun.UNCHAINED and not bits & RecordRun.BROKEN)
        self.chain.absorb(broken, unchained, r[8])
        if r[9] is not None:
            self._ts_key, self._ts = r[9].decode("ascii"), run.tss[-1]
        self.line_count = run.first_line + len(run) - 1
        self.consumed = run.base + run.end
        self._last = run

    @property
    def ends_with_lf(self) -> bool:
        """Whether the last line read ends in LF (True when no line was read)."""
        last = self._last
        return last is None or type(last) is RecordRun or last.terminated

    def last_line(self) -> tuple[int, str] | None:
        """``(offset, SHA-256 hex of its bytes as in the file, terminator included)`` of the last line
        read; None before any."""
        last = self._last
        if last is None:
            return None
        if isinstance(last, RecordRun):
            start = last.starts[-1]
            return last.base + start, _sha256(last.buf[start : last.end]).hexdigest()
        if isinstance(last.raw, LongLine):
            return last.offset_bytes, last.raw.sha256_lf if last.terminated else last.raw.sha256
        return last.offset_bytes, _sha256(last.physical()).hexdigest()
