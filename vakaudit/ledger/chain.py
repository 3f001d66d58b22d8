"""The per-file hash chain and the reader's line rules (spec ledger.md §2.1, §3): what a line is
(:func:`classify`: blank, an entry, or a line with a defect) and how the chain links the entries.

Digest = SHA-256 of the exact line bytes without the LF (and without one stripped CR), as 64 lowercase
hex digits. The chain follows FILE order, not the ``parent_id`` tree.

:class:`ChainVerifier` is a streaming implementation of the six reader rules, fed one physical line
at a time. It reports a :class:`LineStatus` per line and, at the end, vak's two chain warnings
(wording as in vak's ``SessionLog::open``) after the unparseable-line warnings, in vak's order. It
never raises on chain problems: the ledger is evidence and stays readable. It is reused by
:class:`vakaudit.ledger.SessionLog`, the home scanner and the forensic verifier.

No I/O here except reading from a file object the caller opened.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, BinaryIO

from vakaudit.findings import FindingCode
from vakaudit.ledger.depth import MAX_JSON_DEPTH, json_depth
from vakaudit.ledger.entry import Entry, EntryParseError, parse_envelope
from vakaudit.ledger.framing import MAX_LINE_BYTES, iter_bounded_lines

__all__ = [
    "line_digest",
    "LineStatus",
    "LineCheck",
    "ChainVerifier",
    "RawLine",
    "iter_raw_lines",
    "iter_lines",
    "is_blank",
    "classify",
    "Defect",
]

_sha256 = hashlib.sha256


def line_digest(raw: bytes) -> str:
    """SHA-256 hex digest of one line's exact bytes (without LF / stripped CR)."""
    return _sha256(raw).hexdigest()


class LineStatus(StrEnum):
    """Verdict on one physical line."""

    CHAIN_OK = "chain_ok"  # prev_hash present and equal to the previous parsed line's digest
    BROKEN = "broken"  # prev_hash present and different (rule 3)
    UNCHAINED = "unchained"  # no prev_hash although a predecessor exists (rule 4)
    UNCHECKED = "unchecked"  # nothing to compare with: first entry or right after a skipped line
    UNPARSEABLE = "unparseable"  # not an entry: skipped, resets the expectation (rule 2)
    BLANK = "blank"  # empty or whitespace-only: skipped silently (rule 1)


@dataclass(frozen=True, slots=True)
class LineCheck:
    """The verdict on one physical line (1-based ``line_no``)."""

    line_no: int
    status: LineStatus
    digest: str | None = None  # digest of this line (None for blank/unparseable)
    expected: str | None = None  # digest of the previous parsed line, if any
    found: str | None = None  # the line's own prev_hash


@dataclass(frozen=True, slots=True)
class RawLine:
    """One physical line of a ledger file."""

    line_no: int  # 1-based
    offset_bytes: int  # offset of the line's first byte in the file
    raw: bytes  # without LF and without one trailing CR
    terminated: bool  # ended with LF (False only for a final line without LF)


# Unicode White_Space (what Rust's str::trim removes), beyond ASCII.
_UNICODE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000"
)


def is_blank(raw: bytes) -> bool:
    """True when vak's reader skips the line silently (empty or whitespace-only)."""
    if not raw.strip():
        return True
    if raw.isascii():
        return False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(c in _UNICODE_SPACE for c in text)


# -- what a line is (one definition: the ledger reader, SessionLog and ChainVerifier.feed use it) -----

C = FindingCode

#: ``(code, message, offset_bytes)``: why a line is not an entry
Defect = tuple[FindingCode, str, int]


def too_long(length: int, off: int) -> Defect:
    """The defect of a line longer than the bound a line is held up to."""
    return (C.LINE_TOO_LONG, f"line of {length:,} bytes, longer than the {MAX_LINE_BYTES:,} bytes a line is read "
            "up to: not read (the chain restarts after it)", off)  # fmt: skip


def too_deep(depth: int, off: int) -> Defect:
    """The defect of a line nested deeper than vak's reader decodes."""
    return (C.NESTING_TOO_DEEP, f"JSON nested {depth} levels deep; vak's reader (serde_json, limit "
            f"{MAX_JSON_DEPTH}) skips this line", off)  # fmt: skip


def _line_defect(raw: bytes, off: int) -> Defect | None:
    """A defect vak cannot read past whatever the line's JSON: invalid UTF-8 or nesting deeper than
    serde_json's limit (vak's writer has no depth limit, so even a line the chain attests can be one).
    The UTF-8 decoder is far faster than the digest, and only non-ASCII lines pay for it."""
    if not raw.isascii():
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad = raw[exc.start : exc.start + 4].hex()
            return (C.INVALID_UTF8, f"byte {exc.start} of the line is not valid UTF-8 ({bad}); vak refuses to "
                    "open the ledger", off + exc.start)  # fmt: skip
    depth = json_depth(raw)
    return too_deep(depth, off) if depth > MAX_JSON_DEPTH else None


def classify(raw: bytes, off: int, terminated: bool) -> tuple[str, Any, Any]:
    """What one line is, decoded fully: ``("entry", envelope, payload)``, ``("bad", defect, None)`` or
    ``("blank", None, None)``. ``raw`` is the line without LF, CR and BOM; ``off`` the file offset of
    its first byte. ``envelope`` = ``(id, parent_id, ts, prev_hash, at_turn, kind)``. An unterminated
    line (the last of the file) that is not a complete entry is torn, cut anywhere, even inside a
    multi-byte character."""
    defect = _line_defect(raw, off)
    if defect is not None and terminated:
        return "bad", defect, None
    try:
        env, payload = parse_envelope(raw)
    except EntryParseError as exc:
        if is_blank(raw):
            return "blank", None, None
        if not terminated:
            return "bad", (C.TORN_LAST_LINE, f"the last line ({len(raw)} bytes) has no LF and is not a complete "
                           f"entry: an interrupted write ({exc})", off), None  # fmt: skip
        return "bad", (C.UNPARSEABLE_LINE, f"not a ledger entry: {exc}", off), None
    if defect is not None:
        return "bad", defect, None
    return "entry", env, payload


def iter_lines(f: BinaryIO, block_size: int = 4 << 20) -> Iterator[tuple[bytes, bool]]:
    """Yield ``(line_without_LF, terminated)`` for each physical line of a binary stream.

    Read in large blocks (no mmap: a file truncated by someone else while mapped would kill the
    process with SIGBUS); memory stays at the lines the caller keeps plus one block. A line longer
    than :data:`~vakaudit.ledger.framing.MAX_LINE_BYTES` comes as a
    :class:`~vakaudit.ledger.framing.LongLine` (its prefix only). A trailing CR is NOT stripped here.
    """
    for _, raw, terminated in iter_bounded_lines(f.read, chunk_bytes=block_size):
        yield raw, terminated


def iter_raw_lines(f: BinaryIO) -> Iterator[RawLine]:
    """Split a binary stream into physical lines like Rust's ``BufRead::lines`` (LF, one CR stripped)."""
    offset = 0
    line_no = 0
    for line, terminated in iter_lines(f):
        line_no += 1
        n = len(line) + terminated
        raw = line[:-1] if line.endswith(b"\r") else line
        yield RawLine(line_no, offset, raw, terminated)
        offset += n


class ChainVerifier:
    """Streaming hash-chain check over the physical lines of one ledger file.

    Feed every physical line in order with :meth:`feed` (which parses it), or, when the caller parses
    itself, with :meth:`blank`, :meth:`unparseable` and :meth:`entry`. :meth:`finish` returns all
    warnings: one per unparseable line in order, then at most one "broken hash chain" warning and at
    most one "before hash chaining" warning.
    """

    __slots__ = (
        "path_display",
        "expected",
        "tail_hash",
        "broken_lines",
        "unchained",
        "unparseable_lines",
        "_keep",
        "_warnings",
    )

    def __init__(self, path_display: str = "<ledger>", *, keep_warnings: bool = True) -> None:
        """``keep_warnings=False``: a caller that reports its own findings and never calls
        :meth:`finish` (the scanner); the per-line warnings and line lists are then not kept, so
        memory does not grow with the number of bad lines."""
        self.path_display = path_display
        self._keep = keep_warnings
        self.expected: str | None = None
        self.tail_hash: str | None = None
        self.broken_lines: list[int] = []
        self.unchained = 0
        self.unparseable_lines: list[int] = []
        self._warnings: list[str] = []

    # -- low level: the caller classified the line ------------------------------------------------

    def blank(self, line_no: int) -> LineCheck:
        """Rule 1: skip without touching the expectation."""
        return LineCheck(line_no, LineStatus.BLANK, expected=self.expected)

    def unparseable(self, line_no: int) -> LineCheck:
        """Rule 2: warn, forget the expectation."""
        exp = self.expected
        if self._keep:
            self.unparseable_lines.append(line_no)
            self._warnings.append(f"skipped unparseable entry at line {line_no} of {self.path_display}")
        self.expected = None
        return LineCheck(line_no, LineStatus.UNPARSEABLE, expected=exp)

    def reset(self) -> None:
        """Forget the expectation without a warning (a caller-side skip, e.g. invalid UTF-8)."""
        self.expected = None

    def note(self, warning: str) -> None:
        """Add a caller's warning in line order (before the two chain summaries)."""
        if self._keep:
            self._warnings.append(warning)

    def absorb(self, broken_lines: list[int], unchained: int, tail: str | None) -> None:
        """A run of entry lines linked elsewhere (the compiled kernel): its breaks, its entries without
        a prev_hash, and the digest of its last line, which the next line's prev_hash should carry."""
        if self._keep:
            self.broken_lines += broken_lines
        self.unchained += unchained
        self.expected = self.tail_hash = tail

    def link(self, line_no: int, raw: bytes, prev_hash: str | None, digest: str | None = None) -> LineStatus:
        """Rules 3–6 like :meth:`entry`, returning only the status (the fast path for bulk readers).

        ``digest``: the line's digest when the caller already computed it (not recomputed)."""
        exp = self.expected
        if exp is None:
            status = LineStatus.UNCHECKED
        elif prev_hash is None:
            status = LineStatus.UNCHAINED
            self.unchained += 1
        elif prev_hash != exp:
            status = LineStatus.BROKEN
            if self._keep:
                self.broken_lines.append(line_no)
        else:
            status = LineStatus.CHAIN_OK
        self.expected = self.tail_hash = _sha256(raw).hexdigest() if digest is None else digest
        return status

    def entry(self, line_no: int, raw: bytes, prev_hash: str | None, digest: str | None = None) -> LineCheck:
        """Rules 3–6 for a line that parsed as an entry carrying ``prev_hash``.

        ``digest``: the line's digest when the caller already computed it (not recomputed)."""
        exp = self.expected
        status = self.link(line_no, raw, prev_hash, digest)
        return LineCheck(line_no, status, self.expected, exp, prev_hash)

    # -- convenience: parse and check -------------------------------------------------------------

    def feed(self, line_no: int, raw: bytes) -> tuple[LineCheck, Entry | None]:
        """Classify (:func:`classify`), parse (lazily-decoded :class:`Entry`) and check one physical line.

        Raises ``UnicodeDecodeError`` only for a non-blank line that is not valid UTF-8 (vak's open
        fails there; callers decide what to do).
        """
        what, val, _payload = classify(raw, 0, True)
        if what == "blank":
            return self.blank(line_no), None
        if what == "bad":
            if val[0] is C.INVALID_UTF8:
                raw.decode("utf-8")  # raises UnicodeDecodeError
            return self.unparseable(line_no), None
        return self.entry(line_no, raw, val[3]), Entry.lazy(raw, val)

    def finish(self) -> list[str]:
        """All warnings so far plus the two chain summaries (vak's wording)."""
        out = list(self._warnings)
        if self.broken_lines:
            out.append(
                f"ledger {self.path_display} has a broken hash chain at line(s) "
                f"{', '.join(map(str, self.broken_lines))}: entries before that point were modified "
                "after they were written"
            )
        if self.unchained:
            out.append(
                f"ledger {self.path_display} has {self.unchained} entry/entries written before hash "
                "chaining; those cannot be verified"
            )
        return out


def verify_lines(lines: Iterable[bytes], path_display: str = "<ledger>") -> tuple[list[LineCheck], list[str]]:
    """Check a sequence of physical lines (no LF); returns per-line checks and the warnings."""
    v = ChainVerifier(path_display)
    checks = [v.feed(i, raw)[0] for i, raw in enumerate(lines, 1)]
    return checks, v.finish()
