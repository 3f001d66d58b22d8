"""The per-file hash chain and the reader's line rules (spec ledger.md §2.1, §3).

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
from typing import BinaryIO

from vakaudit.ledger.entry import Entry, EntryParseError, parse_envelope
from vakaudit.ledger.framing import iter_bounded_lines

__all__ = [
    "line_digest",
    "LineStatus",
    "LineCheck",
    "ChainVerifier",
    "RawLine",
    "iter_raw_lines",
    "iter_lines",
    "is_blank",
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
        """Classify, parse (lazily-decoded :class:`Entry`) and check one physical line.

        Raises ``UnicodeDecodeError`` only for a non-blank line that is not valid UTF-8 (vak's open
        fails there; callers decide what to do).
        """
        try:
            env, _ = parse_envelope(raw)
        except EntryParseError:
            if is_blank(raw):
                return self.blank(line_no), None
            raw.decode("utf-8")  # raises UnicodeDecodeError for invalid UTF-8
            return self.unparseable(line_no), None
        return self.entry(line_no, raw, env[3]), Entry.lazy(raw, env)

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
