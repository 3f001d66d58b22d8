"""The verdict on one session ledger: hash chain, line framing, entry tree, header, kinds and clock.

This module is the one classification of ledger defects: ``vakaudit verify`` (through
:mod:`vakaudit.forensics`) and the scan's ``findings`` table (through :mod:`vakaudit.scan.worker`,
which feeds the same records to the scanner's rows and to a :class:`LedgerVerdict`) both take a
ledger's findings from here, so one defect has one code, one line and one count whichever command
reports it.

The verdict reads no bytes itself: it consumes the record stream of
:class:`vakaudit.ledger.records.LedgerReader` (framing, envelopes, digests, the hash chain's rules and
what makes a line no entry are defined there) and adds what a forensic reader needs on top: every
problem becomes a :class:`~vakaudit.findings.Finding` with the line, its byte offset, the entry id and
the expected and actual values, and chain breaks are *classified*:

- ``line_modified``: line N's own bytes changed, so line N+1's ``prev_hash`` (the digest the writer
  saw) no longer matches. Reported at line N, expected = what N+1 recorded, actual = digest(N).
- ``prev_hash_mismatch``: line N's ``prev_hash`` field itself was edited (it differs from the digest
  of line N-1 in a few hex digits; the consequential break at N+1 is not reported again), or lines
  are missing before N (its parent is in no line of the file).
- ``lines_reordered``: line N's ``prev_hash`` is the digest of a line elsewhere in the file (swapped
  or moved lines); one finding per run of displaced lines.
- ``torn_last_line``: the last line has no LF (a write was interrupted); ``unparseable_line`` for a
  bad line elsewhere; ``unchained_line`` for lines written before hash chaining (one per run).

A content change of the *last* line cannot be seen by the chain (no successor recorded its digest);
``vakaudit seal`` / ``verify --since`` proves the tail against an earlier seal.

Never writes, locks or repairs anything; no printing.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vakaudit.findings import Finding, FindingCode, FindingFold, Severity, folded_count
from vakaudit.ledger.chain import LineStatus
from vakaudit.ledger.depth import MAX_JSON_DEPTH  # re-exported
from vakaudit.ledger.evidence import open_evidence
from vakaudit.ledger.framing import MAX_LINE_BYTES
from vakaudit.ledger.policy import TornPolicy, severity_of
from vakaudit.ledger.records import BOM, LedgerReader, Record, RecordRun, grew_past
from vakaudit.ledger.vocab import HEADER_KIND, KNOWN_KINDS, EntryKind
from vakaudit.names import shown

__all__ = ["LedgerReport", "LedgerVerdict", "verify_ledger", "LONG_LINE_BYTES", "MAX_JSON_DEPTH"]

C = FindingCode

#: A line longer than this is reported (info): far above what vak writes for one entry in normal use,
#: and a quarter of the 64 MiB per-line cap of store.db's v2 indexer (home.md §8.1).
LONG_LINE_BYTES = MAX_LINE_BYTES
#: findings about how a line is framed, not what it holds (a blank line can carry one)
_FRAMING_CODES = frozenset({FindingCode.CRLF_LINE_END, FindingCode.BOM})

_LEADING_ID = re.compile(rb'\s*\{\s*"id"\s*:\s*"([^"\\]{1,200})"')
_PREV_FIELD = b'"prev_hash":"'
_BROKEN, _UNCHAINED = LineStatus.BROKEN, LineStatus.UNCHAINED
_WORK = EntryKind.WORK.value  # the envelope tag of a work line (it carries a second kind, spec §2.4)


@dataclass(slots=True)
class LedgerReport:
    """What :func:`verify_ledger` found in one ledger. Iterating it yields the findings."""

    rel_path: str
    size_bytes: int = 0
    line_count: int = 0
    entry_count: int = 0
    findings: list[Finding] = field(default_factory=list)
    head_digest: str | None = None  # digest of the last entry line: the next entry's prev_hash
    first_bad_line: int | None = None  # first line with a warning or worse
    last_verified_line: int | None = None  # last entry line before it
    last_verified_entry_id: str | None = None
    active_chain_length: int = 0  # entries on the chain from the tail (last entry) to its root
    abandoned_branches: int = 0
    grew_bytes: int = 0  # bytes appended by a writer while verification ran (not verified)

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.findings)

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), key=lambda s: s.rank, default=None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rel_path": shown(self.rel_path),
            "size_bytes": self.size_bytes,
            "line_count": self.line_count,
            "entry_count": self.entry_count,
            "head_digest": self.head_digest,
            "first_bad_line": self.first_bad_line,
            "last_verified_line": self.last_verified_line,
            "last_verified_entry_id": self.last_verified_entry_id,
            "active_chain_length": self.active_chain_length,
            "abandoned_branches": self.abandoned_branches,
            "grew_bytes": self.grew_bytes,
            "folded": folded_count(self.findings),
            "findings": [f.to_dict() for f in self.findings],
        }


@dataclass(slots=True)
class _Break:
    """A line whose prev_hash did not match (ChainVerifier rule 3), with its neighbourhood."""

    line_no: int
    offset: int
    field_offset: int | None
    entry_id: str
    parent_id: str | None
    found: str
    expected: str
    prev_line: int
    prev_offset: int
    prev_id: str


def _hex_near(a: str, b: str) -> bool:
    """Two 64-digit digests that differ in at most 8 digits: one was edited from the other."""
    if len(a) != 64 or len(b) != 64:
        return False
    return sum(x != y for x, y in zip(a, b, strict=True)) <= 8


def _near_id(a: str, b: str) -> bool:
    """Two ids of equal length differing in at most 4 characters: one was edited from the other."""
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b, strict=True)) <= 4


def verify_ledger(
    path: str | os.PathLike,
    rel_path: str | None = None,
    *,
    torn: TornPolicy = TornPolicy.TOLERATE_TAIL,
    deep: bool = False,
    long_line_bytes: int = LONG_LINE_BYTES,
    progress: Callable[[int], None] | None = None,
    on_entry: Callable[[int, str, str, str | None, bytes], None] | None = None,
    native: bool | None = None,
) -> LedgerReport:
    """Verify one session ledger file; see the module docstring for what is checked.

    ``rel_path`` names the file in findings (default: the file name). ``progress`` is called with the
    number of bytes verified so far, about once per MiB. ``on_entry(line_no, id, kind, parent_id, raw)``
    is called for every line that reads as an entry (cross-artifact checks collect from it).
    ``deep``: decode every line; ``native``: the compiled kernel (None: when available). Data
    problems are findings; nothing raises for them (an unreadable file is an ``unreadable_file``
    finding).
    """
    p = Path(path)
    rel = rel_path if rel_path is not None else p.name
    verdict = LedgerVerdict(rel, torn=torn, long_line_bytes=long_line_bytes, on_entry=on_entry)
    try:
        fd = open_evidence(p)
    except OSError as exc:
        verdict.add(C.UNREADABLE_FILE, f"cannot open the ledger read-only: {exc.strerror or exc}")
        return verdict.finish()
    try:
        size = os.fstat(fd).st_size
        verdict.report.size_bytes = size
        if size == 0:
            verdict.add(C.EMPTY_LEDGER, "the ledger is empty (0 bytes): no header, no entries")
            return verdict.finish()
        reader = LedgerReader(functools.partial(os.read, fd), size, deep=deep, native=native,
                              long_line_bytes=long_line_bytes, progress=progress, grew=lambda: grew_past(fd, size))  # fmt: skip
        for item in reader:
            verdict.take(item)
        now = os.fstat(fd).st_size
    finally:
        os.close(fd)
    return verdict.finish(reader.line_count + reader.growing, max(now - size, 0))


class LedgerVerdict:
    """The verdict on one ledger, built from its record stream: :meth:`take` every item a
    :class:`~vakaudit.ledger.records.LedgerReader` over the whole file yields, in order, then
    :meth:`finish`. ``on_entry(line_no, id, kind, parent_id, raw)`` is called for every entry."""

    def __init__(
        self,
        rel_path: str,
        *,
        torn: TornPolicy = TornPolicy.TOLERATE_TAIL,
        long_line_bytes: int = LONG_LINE_BYTES,
        on_entry: Callable[[int, str, str, str | None, bytes], None] | None = None,
    ) -> None:
        self.report = LedgerReport(rel_path)
        self._torn = torn
        self._long = long_line_bytes
        self._on_entry = on_entry
        self._out = FindingFold()  # bounded: the first findings of a code in full, the rest counted
        self.ids: dict[str, int] = {}  # id -> first line
        self.parents: dict[str, str | None] = {}  # id -> parent_id (last occurrence, like vak's by_id)
        self.id_lines: dict[str, int] = {}  # id -> last line
        self.has_child: set[str] = set()
        self.late_parents: list[tuple[int, int, str, str]] = []  # (line, offset, id, parent) not yet seen
        self.digest_line: dict[str, int] = {}
        self.bad_ids: dict[str, int] = {}  # ids of lines that could not be read -> line
        self.breaks: list[_Break] = []
        self.unchained_runs: list[list[int]] = []  # [first_line, offset, last_line, count]
        self.entry_lines: list[int] = []
        self.entry_ids: list[str] = []
        self.ts_back: list[tuple[int, int, str, str, str]] = []
        self.header_lines: list[int] = []
        self.first_entry_line = 0
        self.work_lines: list[int] = []
        self.crlf: list[int] = []
        self.last_entry: tuple[int, int, str] | None = None  # (line, offset, id)
        self.tail_id: str | None = None

    def add(self, code: FindingCode, message: str, line_no: int | None = None, offset: int | None = None,
            entry_id: str | None = None, expected: str | None = None, actual: str | None = None) -> None:  # fmt: skip
        self._out.append(Finding(code, severity_of(code, self._torn), self.report.rel_path, message, line_no,
                                 offset, entry_id, expected, actual))  # fmt: skip

    def take(self, item: Record | RecordRun) -> None:
        """One item of the record stream, in file order."""
        if type(item) is RecordRun:
            self._run(item)
        else:
            self._settle(item)

    # -- one line -----------------------------------------------------------------------------------

    def _settle(self, rec: Record) -> None:
        line_no = rec.line_no
        if rec.crlf:
            self.crlf.append(line_no)
        if rec.bom:
            self.add(C.BOM, "the file starts with a UTF-8 byte order mark; vak's reader cannot parse the first "
                     "line (the chain is checked without it)", 1, 0, expected="no BOM", actual=BOM.hex())  # fmt: skip
        off = rec.data_offset
        raw = rec.raw
        if rec.defect is not None:
            code, message, at = rec.defect
            m = _LEADING_ID.match(raw)
            bid = m.group(1).decode("utf-8", "replace") if m else None
            if bid is not None:
                self.bad_ids.setdefault(bid, line_no)
            self.add(code, message, line_no, at, bid)
            return
        env = rec.envelope
        if env is None:
            return  # blank (rule 1)
        ident, parent, ts, prev, _at, kind = env
        if not rec.terminated:
            self.add(C.TORN_LAST_LINE, "the last line is a complete entry but has no LF: vak reads it, and "
                     "its next append would fuse with it", line_no, off + len(raw), ident,
                     expected="0a", actual="end of file")  # fmt: skip
        status = rec.chain
        last_entry = self.last_entry
        if status is _BROKEN:
            assert last_entry is not None
            fo = raw.find(_PREV_FIELD)
            self.breaks.append(_Break(line_no, off, off + fo + len(_PREV_FIELD) if fo >= 0 else None, ident, parent,
                                      prev, rec.expected, last_entry[0], last_entry[1], last_entry[2]))  # fmt: skip
        elif status is _UNCHAINED:
            runs = self.unchained_runs
            if runs and runs[-1][2] == (last_entry[0] if last_entry else -1):
                run = runs[-1]
                run[2] = line_no
                run[3] += 1
            else:
                runs.append([line_no, off, line_no, 1])
        digest = rec.digest
        self.digest_line.setdefault(digest, line_no)
        ids = self.ids
        if ident in ids:
            self.add(C.DUPLICATE_ID, f"entry id already used at line {ids[ident]}", line_no, off, ident,
                     expected="unique id", actual=ident)  # fmt: skip
        else:
            ids[ident] = line_no
        self.id_lines[ident] = line_no
        self.parents[ident] = parent
        if parent is not None:
            self.has_child.add(parent)
            if parent not in ids or parent == ident:  # (its own parent: in ids, and a cycle)
                self.late_parents.append((line_no, off, ident, parent))
        if not self.first_entry_line:
            self.first_entry_line = line_no
        if kind == HEADER_KIND:
            self.header_lines.append(line_no)
        elif kind not in KNOWN_KINDS:
            self.add(C.UNKNOWN_KIND, f"entry kind {kind!r} is not one vak writes; vak skips the line", line_no, off,
                     ident, expected="a known kind", actual=kind)  # fmt: skip
        elif kind == _WORK:
            self.work_lines.append(line_no)
        if rec.ts_back is not None:
            self.ts_back.append((line_no, off, ident, rec.ts_back, ts))
        if len(raw) > self._long:
            self.add(C.LINE_TOO_LONG, f"line of {len(raw):,} bytes (threshold {self._long:,})", line_no, off,
                     ident, expected=f"<= {self._long}", actual=str(len(raw)))  # fmt: skip
        if self._on_entry is not None:
            self._on_entry(line_no, ident, kind, parent, raw)
        self.last_entry = (line_no, off, ident)
        self.entry_lines.append(line_no)
        self.entry_ids.append(ident)
        self.tail_id = ident
        self.report.head_digest = digest

    # -- a run the compiled kernel vouched for ------------------------------------------------------

    def _run(self, run: RecordRun) -> None:
        """Settle a run at once when nothing in it needs a line's own look: no break, no unchained line,
        no timestamp backwards, no long line, only known kinds, no id or digest seen before; else line
        by line, exactly as the reference records settle."""
        ids = self.ids
        rids, rpar, rdig = run.ids, run.parents, run.digests
        n = len(rids)
        kinds_seen = set(run.kinds)
        clean = (
            all(bits == RecordRun.PARENT for _i, bits, _p in run.flagged)
            and kinds_seen <= KNOWN_KINDS
            and ids.keys().isdisjoint(rids)
            and len(set(rids)) == n
            and self.digest_line.keys().isdisjoint(rdig)
        )
        if not clean:
            for rec in run.records():
                self._settle(rec)
            return
        l0 = run.first_line
        base, starts = run.base, run.starts
        lines = range(l0, l0 + n)
        ids.update(zip(rids, lines, strict=True))
        self.id_lines.update(zip(rids, lines, strict=True))
        self.parents.update(zip(rids, rpar, strict=True))
        self.has_child.update(rpar)
        self.has_child.discard(None)
        for i, _bits, _prev in run.flagged:  # parent is not the line before: defined earlier in the file?
            ln, parent, ident = l0 + i, rpar[i], rids[i]
            if parent == ident or ids.get(parent, ln) >= ln:
                self.late_parents.append((ln, base + starts[i], ident, parent))
        self.digest_line.update(zip(rdig, lines, strict=True))
        if not self.first_entry_line:
            self.first_entry_line = l0
        if HEADER_KIND in kinds_seen:
            self.header_lines.extend(l0 + i for i, k in enumerate(run.kinds) if k == HEADER_KIND)
        if _WORK in kinds_seen:
            self.work_lines.extend(l0 + i for i, k in enumerate(run.kinds) if k == _WORK)
        self.entry_lines.extend(lines)
        self.entry_ids.extend(rids)
        self.last_entry = (l0 + n - 1, base + starts[-1], rids[-1])
        self.tail_id = rids[-1]
        self.report.head_digest = rdig[-1]
        if self._on_entry is not None:
            for i in range(n):
                self._on_entry(l0 + i, rids[i], run.kinds[i], rpar[i], run.raw(i))

    # -- the end ------------------------------------------------------------------------------------

    def finish(self, line_count: int | None = None, grew_bytes: int = 0) -> LedgerReport:
        """The report: the file-wide findings (chain classification, tree, header) after the lines'
        own. ``line_count``: the physical lines read (None: the file was not read); ``grew_bytes``:
        bytes a writer appended while the file was read (not verified)."""
        report = self.report
        report.line_count = line_count or 0
        report.entry_count = len(self.entry_lines)
        report.grew_bytes = grew_bytes
        add = self.add
        if line_count is not None and not self.entry_lines and not any(
            f.line_no is not None and f.code not in _FRAMING_CODES for f in self._out.findings()
        ):  # every line was skipped as blank (a line that is not blank is an entry or a finding)
            add(C.EMPTY_LEDGER, f"the ledger holds only blank lines ({line_count} line(s), {report.size_bytes} "
                "bytes): no header, no entries")  # fmt: skip
        if self.crlf:
            add(C.CRLF_LINE_END, f"{len(self.crlf)} line(s) end in CR LF (vak writes LF only; its reader strips the "
                "CR, so digests still verify)", self.crlf[0], None, expected="0a", actual="0d0a")  # fmt: skip
        if self.work_lines:
            add(C.WORK_DUPLICATE_KIND, f"{len(self.work_lines)} work line(s) carry vak's duplicate 'kind' key "
                "(spec §2.4); vak's own reader skips them on reopen, vakaudit reads them", self.work_lines[0])  # fmt: skip
        _chain_findings(self.breaks, self.unchained_runs, self.digest_line, self.ids, self.bad_ids, self.ts_back, add)
        _tree_findings(report, self.ids, self.id_lines, self.parents, self.has_child, self.late_parents, self.bad_ids,
                       self.tail_id, add)  # fmt: skip
        if self.entry_lines:
            if not self.header_lines:
                add(C.HEADER_MISSING, "no header entry: the ledger does not say which session it is",
                    self.first_entry_line, None, self.entry_ids[0], expected="header", actual=None)  # fmt: skip
            else:
                first = self.header_lines[0]
                if first != self.first_entry_line:
                    add(C.HEADER_NOT_FIRST, f"the header is at line {first}, not on the first entry line",
                        first, None, expected=str(self.first_entry_line), actual=str(first))  # fmt: skip
                for extra in self.header_lines[1:]:
                    add(C.DUPLICATE_HEADER, f"a second header (the first is at line {first}); vak uses the first",
                        extra)  # fmt: skip
        report.findings = self._out.findings()
        _finish(report, self.entry_lines, self.entry_ids)
        return report


def _chain_findings(breaks, unchained_runs, digest_line, ids, bad_ids, ts_back, add) -> None:  # noqa: ANN001
    consumed: set[int] = set()
    reordered: list[list[_Break]] = []
    for i, b in enumerate(breaks):
        if b.line_no in consumed:
            continue
        j = digest_line.get(b.found)
        nxt = breaks[i + 1] if i + 1 < len(breaks) else None
        if j is not None and j != b.prev_line:
            if reordered and reordered[-1][-1].line_no == b.prev_line:
                reordered[-1].append(b)
            else:
                reordered.append([b])
        elif _hex_near(b.found, b.expected):
            add(C.PREV_HASH_MISMATCH, f"the prev_hash of this line was edited: it differs from the digest of "
                f"line {b.prev_line} in {sum(x != y for x, y in zip(b.found, b.expected, strict=True))} hex digit(s)",
                b.line_no, b.field_offset, b.entry_id, b.expected, b.found)  # fmt: skip
            if nxt is not None and nxt.prev_line == b.line_no:
                consumed.add(nxt.line_no)  # its break is this line's edit, reported once
        elif (
            b.parent_id is not None
            and b.parent_id not in ids
            and b.parent_id not in bad_ids
            and not _near_id(b.parent_id, b.prev_id)  # else the previous line's own id was edited
        ):
            add(C.PREV_HASH_MISMATCH, f"line(s) missing before this line: its prev_hash is the digest of no line "
                f"in the file and its parent {b.parent_id} is gone", b.line_no, b.field_offset, b.entry_id,
                b.expected, b.found)  # fmt: skip
        else:
            add(C.LINE_MODIFIED, f"this line changed after line {b.line_no} was appended: line {b.line_no} "
                "recorded another digest for it", b.prev_line, b.prev_offset, b.prev_id, b.found, b.expected)  # fmt: skip
    reorder_lines: set[int] = set()
    for run in reordered:
        parts = []
        for b in run:
            reorder_lines.add(b.line_no)
            j = digest_line[b.found]
            reorder_lines.add(j)
            parts.append(f"line {b.line_no} was written right after line {j}")
        first = run[0]
        add(C.LINES_REORDERED, "lines are out of the order they were written in: " + "; ".join(parts),
            first.line_no, first.offset, first.entry_id, first.expected, first.found)  # fmt: skip
    for first, off, last, count in unchained_runs:
        span = f"line {first}" if count == 1 else f"lines {first}-{last} ({count} entries)"
        add(C.UNCHAINED_LINE, f"{span} carry no prev_hash: written before hash chaining (or the field was "
            "removed); they cannot be verified", first, off, expected="prev_hash", actual=None)  # fmt: skip
    for line_no, off, ident, before, ts in ts_back:
        if line_no in reorder_lines:
            continue  # a consequence of the reordering already reported
        add(C.TIMESTAMP_BACKWARDS, "timestamp earlier than the previous entry's", line_no, off, ident,
            expected=f">= {before}", actual=ts)  # fmt: skip


def _tree_findings(report, ids, id_lines, parents, has_child, late_parents, bad_ids, tail_id, add) -> None:  # noqa: ANN001
    for line_no, off, ident, parent in late_parents:
        if parent in ids:
            continue  # the parent is further down the file: reported by the chain as reordering
        if parent in bad_ids:
            continue  # the parent is on a line that could not be read: reported there
        add(C.ORPHAN_PARENT, f"parent {parent} is in no line of the file", line_no, off, ident,
            expected=parent, actual=None)  # fmt: skip
    # cycles (a hand edit, or an id collision whose parent is the tail itself). Without a duplicate id
    # every id is on one line, and a parent seen before its child is on an earlier line: links that
    # all point to earlier lines cannot close a cycle. Only a late parent or a duplicate id can.
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for start in parents if late_parents or len(id_lines) != report.entry_count else ():
        if start in state:
            continue
        path: list[str] = []
        node: str | None = start
        while node is not None and node in parents and node not in state:
            state[node] = 1
            path.append(node)
            node = parents[node]
        if node is not None and state.get(node) == 1:
            cycle = path[path.index(node) :]
            first = min(cycle, key=lambda i: id_lines[i])
            add(C.PARENT_CYCLE, "parent_id links form a cycle: " + " -> ".join(cycle + [node]),
                id_lines[first], None, first)  # fmt: skip
        for n in path:
            state[n] = 2
    # active chain (from the tail, vak's chain_to_root) vs abandoned branches
    active: set[str] = set()
    cur = tail_id
    while cur is not None and cur in parents and cur not in active:
        active.add(cur)
        cur = parents[cur]
    report.active_chain_length = len(active)
    for ident, line_no in id_lines.items():
        if ident in has_child or ident in active:
            continue
        length = 0
        node: str | None = ident
        walked: set[str] = set()
        while node is not None and node in parents and node not in active and node not in walked:
            walked.add(node)
            length += 1
            node = parents[node]
        if node not in active:
            continue  # cut off from the active chain by an orphan or a cycle: reported as such
        report.abandoned_branches += 1
        add(C.ABANDONED_BRANCH, f"branch of {length} entr{'y' if length == 1 else 'ies'} not on the active chain; "
            f"it forks from {node} (line {id_lines[node]})", line_no, None, ident)  # fmt: skip


def _finish(report: LedgerReport, lines: list[int], ids: list[str]) -> None:
    f = report.findings
    if report.grew_bytes:
        f.append(Finding(C.LEDGER_GROWING, severity_of(C.LEDGER_GROWING), report.rel_path,
                         f"{report.grew_bytes} byte(s) were appended while verifying; they were not verified",
                         None, report.size_bytes, expected=str(report.size_bytes),
                         actual=str(report.size_bytes + report.grew_bytes)))  # fmt: skip
    f.sort(key=lambda x: (x.line_no if x.line_no is not None else 0, x.code))
    bad = [x.line_no for x in f if x.line_no is not None and x.severity.rank >= Severity.WARNING.rank]
    if bad:
        report.first_bad_line = min(bad)
        k = bisect.bisect_left(lines, report.first_bad_line)
        if k > 0:
            report.last_verified_line = lines[k - 1]
            report.last_verified_entry_id = ids[k - 1]
    elif lines:
        report.last_verified_line = lines[-1]
        report.last_verified_entry_id = ids[-1]
