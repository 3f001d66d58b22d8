"""The verdict on one session ledger: hash chain, line framing, entry tree, header, kinds and clock.

This module is the one classification of ledger defects: ``vakaudit verify`` (through
:mod:`vakaudit.forensics`) and the scan's ``findings`` table (through
:mod:`vakaudit.artifacts.session_ledger`) both take a ledger's findings from :func:`verify_ledger`,
so one defect has one code, one line and one count whichever command reports it.

One streaming pass over the file (spec ledger.md §2–§3, §6). The hash-chain rules are
:class:`vakaudit.ledger.ChainVerifier`'s (vak's six reader rules); this module adds what a forensic
reader needs on top: every problem becomes a :class:`~vakaudit.findings.Finding` with the line, its
byte offset, the entry id and the expected and actual values, and chain breaks are *classified*:

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

Speed: a line whose digest is confirmed by its successor's ``prev_hash`` holds exactly the bytes that
were hashed when the successor was appended, and vak only hashes lines it serialized itself or read
back as valid UTF-8 JSON. Such a line is therefore neither JSON-decoded nor UTF-8-validated again:
its envelope is read with one anchored regular expression (the envelope is serialized in a fixed
order); its nesting depth and length are still checked (vak's writer has no depth limit). Every
other line (the last one, lines around a break, lines in a layout the expression does not know) is
fully decoded. ``deep=True`` decodes every line.

Never writes, locks or repairs anything; no printing.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vakaudit._native import linescan
from vakaudit.findings import Finding, FindingCode, FindingFold, Severity, folded_count
from vakaudit.ledger import KNOWN_KINDS, ChainVerifier, EntryParseError, LineStatus, format_ts, parse_ts
from vakaudit.ledger.chain import LineDigests, is_blank
from vakaudit.ledger.depth import MAX_JSON_DEPTH, REST_MIN_BYTES, attested_depth, json_depth
from vakaudit.ledger.entry import WRITTEN_ENVELOPE, parse_envelope
from vakaudit.ledger.evidence import iter_framed_lines, open_evidence
from vakaudit.ledger.framing import MAX_LINE_BYTES, LongLine, LongLineBuilder
from vakaudit.ledger.policy import TornPolicy, severity_of
from vakaudit.names import shown

__all__ = ["LedgerReport", "verify_ledger", "LONG_LINE_BYTES", "MAX_JSON_DEPTH"]

C = FindingCode

#: A line longer than this is reported (info): far above what vak writes for one entry in normal use,
#: and a quarter of the 64 MiB per-line cap of store.db's v2 indexer (home.md §8.1).
LONG_LINE_BYTES = MAX_LINE_BYTES
#: findings about how a line is framed, not what it holds (a blank line can carry one)
_FRAMING_CODES = frozenset({FindingCode.CRLF_LINE_END, FindingCode.BOM})

BOM = b"\xef\xbb\xbf"

_ENVELOPE_HEAD = 1024  # the envelope is matched in the line's first bytes, decoded as Latin-1
_LEADING_ID = re.compile(rb'\s*\{\s*"id"\s*:\s*"([^"\\]{1,200})"')
_PREV_FIELD = b'"prev_hash":"'
_sha256 = hashlib.sha256
# The native scanner (vakaudit/_native/linescan.c): None without the extension or with VAKAUDIT_NO_NATIVE=1.
_verify_run = linescan.verify_run if linescan is not None else None
_NATIVE_CHUNK = 1 << 20  # fits the cache while it is hashed
_V_PARENT = 16  # verify_run's flag: parent_id is not the previous line's id


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


def _ts_key(ts: str) -> str | None:
    """A string that sorts like the instant ``ts`` names (None when it is not RFC 3339)."""
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


def _hex_near(a: str, b: str) -> bool:
    """Two 64-digit digests that differ in at most 8 digits: one was edited from the other."""
    if len(a) != 64 or len(b) != 64:
        return False
    return sum(x != y for x, y in zip(a, b, strict=True)) <= 8


def _near_id(a: str, b: str) -> bool:
    """Two ids of equal length differing in at most 4 characters: one was edited from the other."""
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b, strict=True)) <= 4


#: How long an unterminated last line is given to be completed by a live writer before it counts as
#: torn: Linux grows a file page by page within one write(), so a reader can see a line's first part
#: while the writer's system call is still copying the rest.
TORN_RECHECK_S = 0.05


def _grew_past(fd: int, size: int) -> bool:
    """Whether the file grew past ``size`` (a writer appended), looking twice, TORN_RECHECK_S apart."""
    if os.fstat(fd).st_size > size:
        return True
    import time

    time.sleep(TORN_RECHECK_S)
    return os.fstat(fd).st_size > size


def verify_ledger(
    path: str | os.PathLike,
    rel_path: str | None = None,
    *,
    torn: TornPolicy = TornPolicy.TOLERATE_TAIL,
    deep: bool = False,
    long_line_bytes: int = LONG_LINE_BYTES,
    progress: Callable[[int], None] | None = None,
    on_entry: Callable[[int, str, str, str | None, bytes], None] | None = None,
    known: LineDigests | None = None,
) -> LedgerReport:
    """Verify one session ledger file; see the module docstring for what is checked.

    ``rel_path`` names the file in findings (default: the file name). ``progress`` is called with the
    number of bytes verified so far, about once per MiB. ``on_entry(line_no, id, kind, parent_id, raw)``
    is called for every line that reads as an entry (cross-artifact checks collect from it). ``known``:
    line digests the caller computed from the same bytes (a scan's), not computed again. Data
    problems are findings; nothing raises for them (an unreadable file is an ``unreadable_file``
    finding).
    """
    p = Path(path)
    rel = rel_path if rel_path is not None else p.name
    report = LedgerReport(rel)
    out = FindingFold()  # bounded: the first findings of a code in full, the rest counted

    def add(code: FindingCode, message: str, line_no: int | None = None, offset: int | None = None,
            entry_id: str | None = None, expected: str | None = None, actual: str | None = None) -> None:  # fmt: skip
        out.append(
            Finding(code, severity_of(code, torn), rel, message, line_no, offset, entry_id, expected, actual)
        )

    try:
        fd = open_evidence(p)
    except OSError as exc:
        add(C.UNREADABLE_FILE, f"cannot open the ledger read-only: {exc.strerror or exc}")
        report.findings = out.findings()
        return report
    try:
        size = os.fstat(fd).st_size
        report.size_bytes = size
        if size == 0:
            add(C.EMPTY_LEDGER, "the ledger is empty (0 bytes): no header, no entries")
            report.findings = out.findings()
            return report
        entry_lines, entry_ids = _scan(fd, size, rel, report, add, deep, long_line_bytes, progress, on_entry,
                                       known)
        if not entry_lines and not any(f.line_no is not None and f.code not in _FRAMING_CODES for f in out.findings()):
            # every line was skipped as blank (a line that is not blank is an entry or a finding)
            add(C.EMPTY_LEDGER, f"the ledger holds only blank lines ({report.line_count} line(s), {size} bytes): "
                "no header, no entries")  # fmt: skip
        now = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if now > size:
        report.grew_bytes = now - size
    report.findings = out.findings()
    _finish(report, entry_lines, entry_ids)
    return report


def _scan(
    fd, size, rel, report, add, deep, long_line_bytes, progress, on_entry, line_digests=None
) -> tuple[list[int], list[str]]:  # noqa: ANN001, C901
    verifier = ChainVerifier(rel)
    link = verifier.link
    BROKEN, UNCHAINED = LineStatus.BROKEN, LineStatus.UNCHAINED  # noqa: N806
    sha = _sha256
    env_match = WRITTEN_ENVELOPE.match
    head = _ENVELOPE_HEAD
    known = KNOWN_KINDS

    ids: dict[str, int] = {}  # id -> first line
    parents: dict[str, str | None] = {}  # id -> parent_id (last occurrence, like vak's by_id)
    id_lines: dict[str, int] = {}  # id -> last line
    has_child: set[str] = set()
    late_parents: list[tuple[int, int, str, str]] = []  # (line, offset, id, parent) not yet seen
    digest_line: dict[str, int] = {}
    bad_ids: dict[str, int] = {}  # ids of lines that could not be read -> line
    breaks: list[_Break] = []
    unchained_runs: list[list[int]] = []  # [first_line, offset, last_line, count]
    entry_lines: list[int] = []
    entry_ids: list[str] = []
    ts_back: list[tuple[int, int, str, str, str]] = []
    header_lines: list[int] = []
    first_entry_line = 0
    work_lines: list[int] = []
    crlf: list[int] = []
    last_entry: tuple[int, int, str] | None = None  # (line, offset, id)
    prev_ts_key: str | None = None
    prev_ts = ""
    tail_id: str | None = None

    # the pending line (one-line lag: the next line tells whether it is attested)
    p_line = 0
    p_off = 0
    p_raw = b""
    p_term = True
    p_env: tuple | None = None  # (id, parent, ts, prev, kind) when known
    p_digest: str | None = None
    p_definitive = False  # env came from a full decode
    p_bad: tuple | None = None  # (code, message, offset) when the line is bad
    p_end = 0  # offset of the byte after the envelope's kind value (when the expression matched)
    have_pending = False
    next_progress = 1 << 20

    def full_check(off: int, raw: bytes, terminated: bool):  # noqa: ANN202
        """Decode a line fully: ('entry', env) | ('bad', (code, message, offset)) | ('blank', None)."""
        defect = _line_defect(raw, off)
        if defect is not None and terminated:
            return "bad", defect
        try:
            env6, _ = parse_envelope(raw)
        except EntryParseError as exc:
            if is_blank(raw):
                return "blank", None
            if not terminated:  # cut anywhere, even inside a multi-byte character
                return "bad", (C.TORN_LAST_LINE, f"the last line ({len(raw)} bytes) has no LF and is not a "
                               f"complete entry: an interrupted write ({exc})", off)  # fmt: skip
            return "bad", (C.UNPARSEABLE_LINE, f"not a ledger entry: {exc}", off)
        if defect is not None:
            return "bad", defect
        ident, parent, ts, prev, _at, kind = env6
        return "entry", (ident, parent, ts, prev, kind)

    def settle(line_no: int, off: int, raw: bytes, terminated: bool, env, digest, bad) -> None:  # noqa: ANN001
        nonlocal last_entry, prev_ts_key, prev_ts, tail_id, first_entry_line
        if bad is not None:
            code, message, at = bad
            m = _LEADING_ID.match(raw)
            bid = m.group(1).decode("utf-8", "replace") if m else None
            if bid is not None:
                bad_ids.setdefault(bid, line_no)
            add(code, message, line_no, at, bid)
            if code is C.INVALID_UTF8:
                verifier.reset()
            else:
                verifier.unparseable(line_no)
            return
        ident, parent, ts, prev, kind = env
        if digest is None:
            digest = sha(raw).hexdigest()
        expected = verifier.expected
        status = link(line_no, raw, prev, digest)
        if status is BROKEN:
            assert last_entry is not None
            fo = raw.find(_PREV_FIELD)
            breaks.append(_Break(line_no, off, off + fo + len(_PREV_FIELD) if fo >= 0 else None, ident, parent,
                                 prev, expected, last_entry[0], last_entry[1], last_entry[2]))  # fmt: skip
        elif status is UNCHAINED:
            if unchained_runs and unchained_runs[-1][2] == (last_entry[0] if last_entry else -1):
                run = unchained_runs[-1]
                run[2] = line_no
                run[3] += 1
            else:
                unchained_runs.append([line_no, off, line_no, 1])
        digest_line.setdefault(digest, line_no)
        if ident in ids:
            add(C.DUPLICATE_ID, f"entry id already used at line {ids[ident]}", line_no, off, ident,
                expected="unique id", actual=ident)  # fmt: skip
        else:
            ids[ident] = line_no
        id_lines[ident] = line_no
        parents[ident] = parent
        if parent is not None:
            has_child.add(parent)
            if parent not in ids or parent == ident:  # (its own parent: in ids, and a cycle)
                late_parents.append((line_no, off, ident, parent))
        if not first_entry_line:
            first_entry_line = line_no
        if kind == "header":
            header_lines.append(line_no)
        elif kind not in known:
            add(C.UNKNOWN_KIND, f"entry kind {kind!r} is not one vak writes; vak skips the line", line_no, off,
                ident, expected="a known kind", actual=kind)  # fmt: skip
        elif kind == "work":
            work_lines.append(line_no)
        if len(ts) == 30 and ts[19] == "." and ts[-1] == "Z":  # nanoseconds: the key is the text
            key = ts[:29]
        elif len(ts) == 24 and ts[19] == "." and ts[-1] == "Z":  # vak's usual millisecond form
            key = ts[:23] + "000000"
        else:
            key = _ts_key(ts)
        if key is not None:
            if prev_ts_key is not None and key < prev_ts_key:
                ts_back.append((line_no, off, ident, prev_ts, ts))
            prev_ts_key, prev_ts = key, ts
        if len(raw) > long_line_bytes:
            add(C.LINE_TOO_LONG, f"line of {len(raw):,} bytes (threshold {long_line_bytes:,})", line_no, off,
                ident, expected=f"<= {long_line_bytes}", actual=str(len(raw)))  # fmt: skip
        if on_entry is not None:
            on_entry(line_no, ident, kind, parent, raw)
        last_entry = (line_no, off, ident)
        entry_lines.append(line_no)
        entry_ids.append(ident)
        tail_id = ident
        report.head_digest = digest

    def framing(line_no: int, off: int, raw: bytes) -> tuple[int, bytes] | None:
        """A line's CR and BOM taken off (and reported); None for a blank line (rule 1: skipped
        without touching the expectation)."""
        if raw[-1:] == b"\r":
            raw = raw[:-1]
            crlf.append(line_no)
        if line_no == 1 and raw.startswith(BOM):
            add(C.BOM, "the file starts with a UTF-8 byte order mark; vak's reader cannot parse the first "
                "line (the chain is checked without it)", 1, 0, expected="no BOM", actual=BOM.hex())  # fmt: skip
            raw = raw[3:]
            off += 3
        if raw[:1] != b"{" and not raw.strip():
            return None
        return off, raw

    def one_line(line_no: int, off: int, raw: bytes, terminated: bool, grew: bool = False) -> None:
        """A line the native scanner left to Python: decoded fully and settled at once."""
        if isinstance(raw, LongLine):
            settle(line_no, off, raw, terminated, None, None, _too_long(raw.length, off))
            return
        framed = framing(line_no, off, raw)
        if framed is None:
            return
        off, raw = framed
        if not terminated and grew:
            return  # a writer is appending this very line: not torn, not there yet
        what, val = full_check(off, raw, terminated)
        if what == "blank":
            return
        if what == "bad":
            settle(line_no, off, raw, terminated, None, None, val)
            return
        if not terminated:
            add(C.TORN_LAST_LINE, "the last line is a complete entry but has no LF: vak reads it, and "
                "its next append would fuse with it", line_no, off + len(raw), val[0],
                expected="0a", actual="end of file")  # fmt: skip
        settle(line_no, off, raw, terminated, val, sha(raw).hexdigest(), None)

    def run(r: tuple, buf: bytes, base: int, line_no: int) -> int:
        """Settle a run of lines the native scanner vouched for; returns the last line number."""
        nonlocal last_entry, prev_ts_key, prev_ts, tail_id, first_entry_line
        end, starts, rids, rpar, rkinds, rts, rdig, flagged, exp_out, key_out = r
        n = len(rids)
        l0 = line_no + 1
        kinds_seen = set(rkinds)
        clean = (
            all(bits == _V_PARENT for _i, bits, _p in flagged)
            and kinds_seen <= known
            and ids.keys().isdisjoint(rids)
            and len(set(rids)) == n
            and digest_line.keys().isdisjoint(rdig)
        )
        if not clean:  # line by line, exactly as the reference path settles them
            prevs = dict((i, prev) for i, _bits, prev in flagged)
            for i in range(n):
                stop = starts[i + 1] - 1 if i + 1 < n else end - 1
                # an unflagged line's prev_hash is what was expected of it (None when nothing was)
                prev = prevs[i] if i in prevs else verifier.expected
                settle(l0 + i, base + starts[i], buf[starts[i] : stop], True,
                       (rids[i], rpar[i], rts[i], prev, rkinds[i]), rdig[i], None)  # fmt: skip
            return l0 + n - 1
        lines = range(l0, l0 + n)
        ids.update(zip(rids, lines, strict=True))
        id_lines.update(zip(rids, lines, strict=True))
        parents.update(zip(rids, rpar, strict=True))
        has_child.update(rpar)
        has_child.discard(None)
        for i, _bits, _prev in flagged:  # parent is not the line before: defined earlier in the file?
            ln, parent, ident = l0 + i, rpar[i], rids[i]
            if parent == ident or ids.get(parent, ln) >= ln:
                late_parents.append((ln, base + starts[i], ident, parent))
        digest_line.update(zip(rdig, lines, strict=True))
        if not first_entry_line:
            first_entry_line = l0
        if "header" in kinds_seen:
            header_lines.extend(l0 + i for i, k in enumerate(rkinds) if k == "header")
        if "work" in kinds_seen:
            work_lines.extend(l0 + i for i, k in enumerate(rkinds) if k == "work")
        entry_lines.extend(lines)
        entry_ids.extend(rids)
        last_entry = (l0 + n - 1, base + starts[-1], rids[-1])
        tail_id = rids[-1]
        report.head_digest = rdig[-1]
        verifier.expected = verifier.tail_hash = exp_out
        prev_ts_key, prev_ts = key_out.decode("ascii"), rts[-1]
        if on_entry is not None:
            for i in range(n):
                stop = starts[i + 1] - 1 if i + 1 < n else end - 1
                on_entry(l0 + i, rids[i], rkinds[i], rpar[i], buf[starts[i] : stop])
        return l0 + n - 1

    def native_pass() -> int:
        """Frame, hash and check the file with the native scanner; returns the physical line count."""
        line_no = 0

        def feed(buf: bytes, pos: int, base: int) -> int:
            """Settle the complete lines of ``buf`` from ``pos`` (file offset of buf[0] = ``base``);
            returns where the first incomplete line starts."""
            nonlocal line_no
            n = len(buf)
            while pos < n:
                key = prev_ts_key.encode("ascii") if prev_ts_key is not None else None  # 29 ASCII bytes
                if line_digests is not None and line_digests.hexes:  # lines from line_no + 1 on
                    r = _verify_run(buf, pos, n, 4096, verifier.expected, key, long_line_bytes, line_digests.hexes,
                                    line_no + 1 - line_digests.first)
                else:
                    r = _verify_run(buf, pos, n, 4096, verifier.expected, key, long_line_bytes)
                if r[0] > pos:
                    line_no = run(r, buf, base, line_no)
                    pos = r[0]
                    continue
                lf = buf.find(b"\n", pos)
                if lf < 0:
                    break
                line_no += 1
                one_line(line_no, base + pos, buf[pos:lf], True)
                pos = lf + 1
            return pos

        os.lseek(fd, 0, os.SEEK_SET)
        remaining = size
        parts: list[bytes] = []  # the start of a line that began in an earlier chunk
        held = 0  # bytes in parts
        long: LongLineBuilder | None = None  # a carried line over MAX_LINE_BYTES: streamed, not held
        base = 0  # file offset of the first byte not yet settled
        while remaining > 0:
            chunk = os.read(fd, min(_NATIVE_CHUNK, remaining))
            if not chunk:
                break  # the file shrank while we read it; stop at what is there
            remaining -= len(chunk)
            start = 0
            if long is not None or parts:  # complete the carried line alone: only its bytes are copied
                lf = chunk.find(b"\n")
                if long is None and held + (len(chunk) if lf < 0 else lf) > MAX_LINE_BYTES:
                    long = LongLineBuilder(b"".join(parts))
                    parts, held = [], 0
                if long is not None:
                    long.add(chunk if lf < 0 else chunk[:lf])
                    if lf < 0:
                        continue
                    line_no += 1
                    one_line(line_no, base, long.line(), True)
                    base += long.length + 1
                    long = None
                    start = lf + 1
                else:
                    if lf < 0:
                        parts.append(chunk)
                        held += len(chunk)
                        continue
                    parts.append(chunk[: lf + 1])
                    head = b"".join(parts)
                    parts, held = [], 0
                    feed(head, 0, base)
                    base += len(head)
                    start = lf + 1
            pos = feed(chunk, start, base - start)
            if pos < len(chunk):
                parts.append(chunk[pos:])
                held = len(chunk) - pos
            base += pos - start
            if progress is not None:
                progress(base)
        if long is not None:
            line_no += 1
            one_line(line_no, base, long.line(), False)
        elif parts:
            grew = _grew_past(fd, size)
            line_no += 1
            one_line(line_no, base, b"".join(parts), False, grew)
        return line_no

    line_count = 0
    if _verify_run is not None and not deep:
        line_count = native_pass()
    else:
        for line_no, off, raw, terminated in iter_framed_lines(fd, size):
            line_count = line_no
            if progress is not None and off >= next_progress:
                progress(off)
                next_progress = off + (1 << 20)
            if isinstance(raw, LongLine):  # not held: a bad line (the chain restarts after it)
                cur_env, cur_digest, cur_end, cur_definitive = None, None, 0, True
                cur_bad = _too_long(raw.length, off)
            else:
                framed = framing(line_no, off, raw)
                if framed is None:
                    continue
                off, raw = framed
                m = None if deep else env_match(raw[:head].decode("latin-1"))
                if m is not None and raw[-1:] == b"}":
                    cur_env = m.groups()
                    cur_end = m.end() - 1  # the ',' or '}' after the kind starts the rest
                    cur_definitive = False
                    cur_bad = None
                    cur_digest = sha(raw).hexdigest()
                else:
                    what, val = full_check(off, raw, terminated)
                    if what == "blank":
                        continue
                    cur_end = 0
                    cur_definitive = True
                    if what == "bad":
                        cur_env, cur_bad, cur_digest = None, val, None
                    else:
                        cur_env, cur_bad, cur_digest = val, None, sha(raw).hexdigest()

            if have_pending:
                if p_bad is None and not p_definitive:
                    attested = cur_env is not None and cur_env[3] == p_digest
                    if attested:  # vak hashed these bytes: valid UTF-8 and JSON; the depth is still checked
                        if len(p_raw) - p_end < REST_MIN_BYTES:
                            depth = json_depth(p_raw)
                        else:
                            depth = attested_depth(p_raw, p_end)
                        if depth > MAX_JSON_DEPTH:
                            p_env, p_bad = None, _too_deep(depth, p_off)
                    else:
                        what, val = full_check(p_off, p_raw, p_term)
                        if what == "bad":
                            p_env, p_bad = None, val
                        elif what == "entry":
                            p_env = val
                settle(p_line, p_off, p_raw, p_term, p_env, p_digest, p_bad)
            p_line, p_off, p_raw, p_term = line_no, off, raw, terminated
            p_env, p_digest, p_definitive, p_bad, p_end = cur_env, cur_digest, cur_definitive, cur_bad, cur_end
            have_pending = True

        if have_pending:
            # only an unterminated last line can be a live writer's append still in flight
            if p_term or not _grew_past(fd, size):  # else not torn, not there yet
                if p_bad is None and not p_definitive:
                    what, val = full_check(p_off, p_raw, p_term)
                    if what == "bad":
                        p_env, p_bad = None, val
                    elif what == "entry":
                        p_env = val
                if p_bad is None and p_env is not None and not p_term:
                    add(C.TORN_LAST_LINE, "the last line is a complete entry but has no LF: vak reads it, and "
                        "its next append would fuse with it", p_line, p_off + len(p_raw), p_env[0],
                        expected="0a", actual="end of file")  # fmt: skip
                if p_env is not None or p_bad is not None:
                    settle(p_line, p_off, p_raw, p_term, p_env, p_digest, p_bad)
    report.line_count = line_count
    report.entry_count = len(entry_lines)

    if crlf:
        add(C.CRLF_LINE_END, f"{len(crlf)} line(s) end in CR LF (vak writes LF only; its reader strips the CR, "
            "so digests still verify)", crlf[0], None, expected="0a", actual="0d0a")  # fmt: skip
    if work_lines:
        add(C.WORK_DUPLICATE_KIND, f"{len(work_lines)} work line(s) carry vak's duplicate 'kind' key (spec §2.4); "
            "vak's own reader skips them on reopen, vakaudit reads them", work_lines[0])  # fmt: skip
    _chain_findings(breaks, unchained_runs, digest_line, ids, bad_ids, ts_back, add)
    _tree_findings(report, ids, id_lines, parents, has_child, late_parents, bad_ids, tail_id, add)
    if entry_lines:
        if not header_lines:
            add(C.HEADER_MISSING, "no header entry: the ledger does not say which session it is",
                first_entry_line, None, entry_ids[0], expected="header", actual=None)  # fmt: skip
        else:
            if header_lines[0] != first_entry_line:
                add(C.HEADER_NOT_FIRST, f"the header is at line {header_lines[0]}, not on the first entry line",
                    header_lines[0], None, expected=str(first_entry_line), actual=str(header_lines[0]))  # fmt: skip
            for extra in header_lines[1:]:
                add(C.DUPLICATE_HEADER, f"a second header (the first is at line {header_lines[0]}); vak uses "
                    "the first", extra)  # fmt: skip
    return entry_lines, entry_ids


def _line_defect(raw: bytes, off: int) -> tuple | None:
    """``(code, message, offset)`` when a line cannot be read by vak whatever its JSON: invalid UTF-8 or
    nesting deeper than serde_json's limit (vak's writer has no depth limit, so even a line the chain
    attests can be one); else None. The UTF-8 decoder is far faster than the digest, and only
    non-ASCII lines pay for it."""
    if not raw.isascii():
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad = raw[exc.start : exc.start + 4].hex()
            return (C.INVALID_UTF8, f"byte {exc.start} of the line is not valid UTF-8 ({bad}); vak refuses to "
                    "open the ledger", off + exc.start)  # fmt: skip
    depth = json_depth(raw)
    return _too_deep(depth, off) if depth > MAX_JSON_DEPTH else None


def _too_long(length: int, off: int) -> tuple:
    return (C.LINE_TOO_LONG, f"line of {length:,} bytes, longer than the {MAX_LINE_BYTES:,} bytes a line is read "
            "up to: not read (the chain restarts after it)", off)  # fmt: skip


def _too_deep(depth: int, off: int) -> tuple:
    return (C.NESTING_TOO_DEEP, f"JSON nested {depth} levels deep; vak's reader (serde_json, limit "
            f"{MAX_JSON_DEPTH}) skips this line", off)  # fmt: skip


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
