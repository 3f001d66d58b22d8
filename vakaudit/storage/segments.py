"""A directory of chain segments: ``.log``, ``.sealed``, ``seals.log`` (baseline7.md §3.6–§3.8).

The single definition of segment names, the ``VAKSEG01`` sealed-file header and the seal entry
text. Reading checks what vak's own verifier does (each segment from the head its predecessor's
seal recorded) and what it does not: a sealed segment against its ``seals.log`` entry (count,
head, compressed flag), a segment not starting at its predecessor's recorded head, ``.sealing``
leftovers, interrupted seals, and missing segment numbers told apart from retention drops (a
dropped segment keeps its seal entry).

Read-only: no lock is taken, a torn ``seals.log`` tail is treated as absent (vak truncates it; a
reader must not), nothing in the directory is created or changed.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Literal

from vakaudit.errors import HomeNotFoundError
from vakaudit.findings import Finding, FindingCode
from vakaudit.storage.chain import ChainRead, ChainWalk, _Joined, collect, iter_frames, read_exact
from vakaudit.storage.frames import GENESIS, HASH_LEN, MAX_FRAME, Frame, link, read_frame
from vakaudit.storage.policy import finding

__all__ = [
    "SEALED_MAGIC",
    "COMPRESSED",
    "VERBATIM",
    "SEALS_LOG",
    "LOCK",
    "KEY",
    "Form",
    "SealEntry",
    "SegmentRead",
    "SegmentsRead",
    "SegmentWalk",
    "Resume",
    "segment_name",
    "seal_entry_text",
    "parse_seal_entry",
    "read_seals",
    "iter_segments",
    "read_segments",
    "read_key_scope",
]

SEALED_MAGIC = b"VAKSEG01"
COMPRESSED = 0x01  # body = zstd level 3 of the frames; chosen iff no frame is sealed
VERBATIM = 0x00  # body = the frames as they were
SEALS_LOG = "seals.log"
LOCK = "LOCK"
KEY = "KEY"
#: a record chain seals its open segment once the ``.log`` reaches this many bytes after an append (§3.6)
ROTATE_BYTES = 262_144

Form = Literal["log", "sealed"]

# ``%08d``: eight digits, more once a number outgrows them.
_NAME = re.compile(r"seg-(\d{8,})\.(log|sealed|sealing)")
_SEAL = re.compile(rb"seal (\d+) (\d+) ([0-9a-f]{64}) ([01])")
_C = FindingCode


def segment_name(number: int, form: str) -> str:
    return f"seg-{number:08d}.{form}"


@dataclass(frozen=True, slots=True)
class SealEntry:
    """One ``seals.log`` entry: segment ``segment`` was sealed holding ``entries`` frames."""

    segment: int
    entries: int
    head: bytes
    compressed: bool


def seal_entry_text(segment: int, entries: int, head: bytes, compressed: bool) -> bytes:
    return f"seal {segment} {entries} {head.hex()} {int(compressed)}".encode("ascii")


def parse_seal_entry(text: bytes) -> SealEntry | None:
    m = _SEAL.fullmatch(text)
    if m is None:
        return None
    return SealEntry(int(m[1]), int(m[2]), bytes.fromhex(m[3].decode()), m[4] == b"1")


@dataclass(slots=True)
class SegmentRead:
    """One segment file as read: its number, form (``log`` or ``sealed``) and verified chain."""

    number: int
    form: Form
    chain: ChainRead
    rel_path: str
    size_bytes: int
    prev: bytes = GENESIS


@dataclass(slots=True)
class SegmentsRead:
    """What :func:`read_segments` found in one segment directory."""

    segments: list[SegmentRead]
    seals: list[SealEntry]
    findings: list[Finding] = field(default_factory=list)
    scope: str | None = None  # the ``KEY`` file's scope name, None without one
    has_lock: bool = False

    @property
    def head(self) -> bytes | None:
        """Head of the newest segment read, None when there is none."""
        return self.segments[-1].chain.head if self.segments else None


def read_key_scope(directory: Path) -> str | None:
    """The scope named by ``directory/KEY`` (trimmed), or None without one."""
    # read through the descriptor: a 7.0 home has a KEY per conversation, read for each of its
    # checks, and a file object's set-up cost several times the read of a few bytes
    try:
        fd = os.open(os.path.join(directory, KEY), os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        parts = []
        while chunk := os.read(fd, 1 << 16):
            parts.append(chunk)
    finally:
        os.close(fd)
    return b"".join(parts).decode("utf-8", "replace").strip()


def _rel(rel_dir: str | None, name: str) -> str:
    return f"{rel_dir}/{name}" if rel_dir else name


def _is_file(entry: os.DirEntry[str]) -> bool:
    """``Path.is_file`` of a listed entry (a symlink is followed), from the listing's type when it has one."""
    try:
        return entry.is_file()
    except OSError:  # a symlink loop, say: what Path.is_file says of it (False, or its error)
        return Path(entry.path).is_file()


def read_seals(directory: Path, rel_dir: str | None = None, native: bool | None = None) -> tuple[list[SealEntry], list[Finding]]:
    """The entries of ``seals.log`` (none when absent) and the findings reading it."""
    path = directory / SEALS_LOG
    if not path.is_file():
        return [], []
    rel = _rel(rel_dir, SEALS_LOG)
    chain = collect(iter_frames(path, GENESIS, None, rel_path=rel, native=native))
    findings = list(chain.findings)
    seals: list[SealEntry] = []
    seen: set[int] = set()
    for fr in chain.frames:
        entry = parse_seal_entry(fr.entry) if fr.entry is not None else None
        if entry is None or entry.segment in seen:
            why = "a duplicate segment number" if entry is not None else "not a `seal` entry"
            findings.append(finding(_C.SEALS_LOG_BAD_ENTRY, rel,
                                    f"seals.log frame {fr.index}: {why}", offset_bytes=fr.offset,
                                    frame_index=fr.index))
            continue
        seen.add(entry.segment)
        seals.append(entry)
    return seals, findings


@dataclass(frozen=True, slots=True)
class Resume:
    """What an earlier read of one segment file verified, for a rescan that trusts it.

    ``skip``: the file is unchanged (a sealed segment: immutable), so it is not opened and its
    chain facts are these. Otherwise the file is an open ``.log`` that grew: its first
    ``valid_len`` bytes (``entries`` frames, ``encrypted`` of them sealed, ending in ``head``) were
    verified from ``start``, and the walk goes on from there. The caller checks that the bytes it
    trusts are still there (its anchors); the walk uses a resume only while the segment's start
    is still ``start``.
    """

    start: bytes
    head: bytes
    valid_len: int
    entries: int
    encrypted: int
    skip: bool
    compressed: bool = False


class _ZstdStream:
    """Decompress a sealed segment's zstd body while it is read; a body that does not decode or
    ends inside a frame ends the data and is remembered in ``error`` (with ``pos``, the bytes
    produced so far). Concatenated frames are read on, as vak's one-shot decompression does."""

    _CHUNK = 1 << 16

    def __init__(self, inner: BinaryIO) -> None:
        import zstandard  # here, not at import: a JSONL-era home never opens a sealed segment

        self._zstd = zstandard
        self._inner = inner
        self._dobj = zstandard.ZstdDecompressor().decompressobj()
        self._buf = bytearray()
        self._in_eof = False
        self.error: str | None = None
        self.pos = 0

    def _fill(self) -> None:
        data = self._inner.read(self._CHUNK)
        if not data:
            self._in_eof = True
            if not self._dobj.eof and self.error is None:
                self.error = "the body ends inside a zstd frame"
            return
        try:
            while data:
                self._buf += self._dobj.decompress(data)
                data = b""
                if self._dobj.eof and self._dobj.unused_data:
                    data = self._dobj.unused_data
                    self._dobj = self._zstd.ZstdDecompressor().decompressobj()
        except self._zstd.ZstdError as exc:
            self.error = str(exc)
            self._in_eof = True

    def read(self, n: int = -1) -> bytes:
        while (n < 0 or len(self._buf) < n) and not self._in_eof:
            self._fill()
        take = len(self._buf) if n < 0 else min(n, len(self._buf))
        out = bytes(self._buf[:take])
        del self._buf[:take]
        self.pos += take
        return out

    def finish(self) -> None:
        """Decode what is left unread (to learn whether the body is whole)."""
        while not self._in_eof:
            self._fill()
            self._buf.clear()

    def close(self) -> None:
        self._inner.close()

    def __enter__(self) -> _ZstdStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(slots=True)
class _File:
    number: int
    form: Form
    path: Path
    rel_path: str


class SegmentWalk:
    """Stream a segment directory: iterate ``(SegmentRead-to-be, ChainWalk)`` pairs, oldest first.

    Each pair's walk streams that segment's frames; the next pair finishes it if the caller did
    not. After the iteration, ``segments``, ``seals`` and ``findings`` are those of
    :func:`read_segments` (``segments[i].chain`` holds no frames when the walks were consumed by
    the caller: ``keep_frames=False``).
    """

    def __init__(self, directory: str | Path, key: bytes | None = None, *, rel_dir: str | None = None,
                 keep_frames: bool = False, native: bool | None = None,
                 resume: dict[str, Resume] | None = None) -> None:
        self.directory = Path(directory)
        self.native = native
        self.resume = resume or {}  # by segment rel_path
        self.resumed: set[str] = set()  # the rel_paths whose resume was used
        if not self.directory.is_dir():
            raise HomeNotFoundError(f"segment directory {self.directory} does not exist")
        self.key = key
        self.rel_dir = rel_dir
        self.keep_frames = keep_frames
        self.findings: list[Finding] = []
        self.segments: list[SegmentRead] = []
        # one listing of the directory: what is not in it is not stat'ed or opened
        with os.scandir(self.directory) as it:
            listing = {e.name: e for e in it}
        self.seals, seal_findings = read_seals(self.directory, rel_dir, native) if SEALS_LOG in listing else ([], [])
        self.findings += seal_findings
        self.scope = read_key_scope(self.directory) if KEY in listing else None
        lock = listing.get(LOCK)
        self.has_lock = lock is not None and (not lock.is_symlink() or os.path.exists(lock.path))
        self._files = self._list(listing)

    def _add(self, code: FindingCode, rel: str, message: str, *, segment: int | None = None,
             offset: int | None = None, frame_index: int | None = None, expected: str | None = None,
             actual: str | None = None) -> None:
        self.findings.append(finding(code, rel, message, offset_bytes=offset, expected=expected,
                                     actual=actual, segment=segment, frame_index=frame_index))

    def _list(self, listing: dict[str, os.DirEntry[str]]) -> list[_File]:
        by_number: dict[int, dict[str, Path]] = {}
        for name in sorted(listing):
            m = _NAME.fullmatch(name)
            if m is None or not _is_file(listing[name]):
                continue
            p = self.directory / name
            number, form = int(m[1]), m[2]
            if form == "sealing":
                self._add(_C.SEGMENT_SEALING_LEFTOVER, _rel(self.rel_dir, p.name),
                          f"{p.name}: the copy of an interrupted seal (vak deletes it on its next write)",
                          segment=number)
                continue
            by_number.setdefault(number, {})[form] = p
        seal_of = {s.segment: s for s in self.seals}
        numbers = set(by_number)
        top = max(numbers | set(seal_of), default=0)
        newest_seal = max(seal_of, default=0)
        files: list[_File] = []
        for n in range(1, top + 1):
            forms = by_number.get(n, {})
            if "log" in forms:
                if "sealed" in forms:
                    self._interrupted(n, forms["log"], forms["sealed"])
                files.append(_File(n, "log", forms["log"], _rel(self.rel_dir, forms["log"].name)))
            elif "sealed" in forms:
                rel = _rel(self.rel_dir, forms["sealed"].name)
                if n not in seal_of:
                    self._add(_C.SEGMENT_SEAL_MISSING, rel,
                              f"sealed segment {n} has no seals.log entry (vak reads it as malformed)",
                              segment=n)
                files.append(_File(n, "sealed", forms["sealed"], rel))
            elif n in seal_of and n < newest_seal:
                self._add(_C.SEGMENT_DROPPED, _rel(self.rel_dir, segment_name(n, "sealed")),
                          f"segment {n} was removed by retention (its seal entry remains)", segment=n)
            else:
                why = ("the newest sealed segment, which retention never removes" if n in seal_of
                       else "no seal entry records it")
                self._add(_C.SEGMENT_GAP, _rel(self.rel_dir, segment_name(n, "log")),
                          f"segment {n} is missing: {why}", segment=n)
        return files

    def _interrupted(self, n: int, log: Path, sealed: Path) -> None:
        rel = _rel(self.rel_dir, sealed.name)
        seal = next((s for s in self.seals if s.segment == n), None)
        start = self._prev_of(n)
        a = collect(iter_frames(log, start, native=self.native))
        copy = self._open_sealed(sealed, n, rel, quiet=True)
        b = collect(ChainWalk(copy or io.BytesIO(b""), start, native=self.native))
        if copy is not None:
            copy.close()
        agree = a.entries == b.entries and a.head == b.head and a.torn_tail is None
        state = "recorded in seals.log" if seal else "not yet recorded"
        verdict = "the copy matches the .log" if agree else "the copy does not match the .log (vak deletes it)"
        self._add(_C.SEGMENT_INTERRUPTED_SEAL, rel,
                  f"segment {n} has both .log and .sealed ({state}); the .log is read; {verdict}", segment=n)

    def _open_sealed(self, path: Path, n: int, rel: str, quiet: bool = False) -> BinaryIO | None:
        fh = path.open("rb")
        head = fh.read(len(SEALED_MAGIC) + 1)
        if len(head) < len(SEALED_MAGIC) + 1 or head[:-1] != SEALED_MAGIC or head[-1] not in (0, 1):
            fh.close()
            if not quiet:
                what = ("shorter than its 9-byte header" if len(head) < 9 else
                        "does not start with VAKSEG01" if head[:-1] != SEALED_MAGIC else
                        f"compression flag {head[-1]} is neither 0 nor 1")
                self._add(_C.SEGMENT_MALFORMED, rel, f"sealed segment {n}: {what}", segment=n)
            return None
        if head[-1] == COMPRESSED:
            return _ZstdStream(fh)  # type: ignore[return-value]
        return fh

    def _prev_of(self, n: int) -> bytes:
        if n == 1:
            return GENESIS
        seal = next((s for s in self.seals if s.segment == n - 1), None)
        if seal is not None:
            return seal.head
        if self.segments and self.segments[-1].number == n - 1:
            return self.segments[-1].chain.head
        return GENESIS

    def _first_frame_prev(self, f: _File, prev: bytes, stream: BinaryIO) -> tuple[bytes, BinaryIO]:
        """The start to verify ``f`` from: ``prev``, unless frame 0 chains from elsewhere
        (GENESIS or the previous segment's actual head), which is then reported; with the stream to
        walk, which still starts at frame 0 (the file is opened once)."""
        if isinstance(stream, _ZstdStream):  # not seekable: the walk reads the first frame's bytes again
            first = _read_first(stream)
            stream = _Joined(first, stream)  # type: ignore[assignment]
        else:
            start = stream.tell()
            first = _read_first(stream)
            stream.seek(start)
        return self._first_link(f, prev, first), stream

    def _first_link(self, f: _File, prev: bytes, first: bytes) -> bytes:
        """What :meth:`_first_frame_prev` says of the first frame's bytes ``first``."""
        fr = read_frame(first, 0)
        if fr.problem is not None:
            return prev
        body = first[4 : fr.size_bytes - HASH_LEN]
        if link(prev, body) == fr.hash:
            return prev
        candidates = [GENESIS]
        if self.segments and self.segments[-1].number == f.number - 1:
            candidates.append(self.segments[-1].chain.head)
        for cand in candidates:
            if cand != prev and link(cand, body) == fr.hash:
                what = "GENESIS" if cand == GENESIS else "the previous segment's last frame"
                self._add(_C.SEGMENT_DISCONTINUOUS, f.rel_path,
                          f"segment {f.number} does not start at the head recorded for segment "
                          f"{f.number - 1}; it chains from {what}", segment=f.number, offset=0,
                          frame_index=0, expected=prev.hex(), actual=cand.hex())
                return cand
        return prev

    def _stream(self, f: _File, quiet: bool = False) -> BinaryIO | None:
        if f.form == "log":
            return f.path.open("rb")
        return self._open_sealed(f.path, f.number, f.rel_path, quiet=quiet)

    def __iter__(self) -> Iterator[tuple[SegmentRead, ChainWalk]]:
        for f in self._files:
            prev = self._prev_of(f.number)
            if f.number > 1 and not any(s.segment == f.number - 1 for s in self.seals):
                self._add(_C.SEGMENT_SEAL_MISSING, f.rel_path,
                          f"segment {f.number - 1} has no seals.log entry, so segment {f.number} "
                          "has no recorded start", segment=f.number)
            res = self.resume.get(f.rel_path)
            if res is not None and (res.start != prev or res.skip != (f.form == "sealed")):
                res = None  # its recorded start or form no longer holds: read it whole
            size = f.path.stat().st_size
            frames: list[Frame] = []
            at: dict = {}
            if res is not None:
                self.resumed.add(f.rel_path)
            walked: BinaryIO | None = None  # what the walk reads: the stream, or a first frame read and the stream
            if res is None:
                stream = self._stream(f)
                if stream is not None:
                    prev, walked = self._first_frame_prev(f, prev, stream)
            elif res.skip:
                stream = None
                at = {"offset": res.valid_len, "index": res.entries, "encrypted_frames": res.encrypted}
            else:
                stream = walked = f.path.open("rb")
                stream.seek(res.valid_len)
                at = {"offset": res.valid_len, "index": res.entries, "encrypted_frames": res.encrypted}
            walk = ChainWalk(walked if walked is not None else io.BytesIO(b""), res.head if res else prev,
                             self.key, rel_path=f.rel_path, segment=f.number,
                             sink=frames if self.keep_frames else None, native=self.native, **at)
            seg = SegmentRead(f.number, f.form, ChainRead([], prev, 0, None, None, 0), f.rel_path, size, prev)
            try:
                yield seg, walk
                walk.finish()
                if isinstance(stream, _ZstdStream):
                    stream.finish()
            finally:
                if stream is not None:
                    stream.close()
            seg.chain = ChainRead(frames, walk.head, walk.valid_len, walk.torn_tail, walk.broken_at,
                                  walk.encrypted_frames, walk.findings, walk.entries)
            self.findings += walk.findings
            if isinstance(stream, _ZstdStream) and stream.error is not None:
                self._add(_C.SEGMENT_MALFORMED, f.rel_path,
                          f"sealed segment {f.number}: its zstd body stops decompressing after "
                          f"{stream.pos} bytes ({stream.error})", segment=f.number, offset=stream.pos)
            if res is not None and res.skip:
                self._check_seal(seg, res.compressed)
            elif stream is not None:
                self._check_seal(seg, isinstance(stream, _ZstdStream))
            self.segments.append(seg)

    def _check_seal(self, seg: SegmentRead, zstd_body: bool) -> None:
        seal = next((s for s in self.seals if s.segment == seg.number), None)
        if seal is None:
            return
        # A .log with a seal entry is a seal interrupted after it was recorded: vak keeps the pair
        # only when they agree, so the .log is held to the entry too (its compression aside).
        c = seg.chain
        compressed = zstd_body if seg.form == "sealed" else seal.compressed
        parts = []
        if c.entries != seal.entries:
            parts.append(f"{c.entries} frames, seal says {seal.entries}")
        if c.head != seal.head:
            parts.append("head differs")
        if c.torn_tail is not None:
            parts.append(f"ends in a torn tail at byte {c.torn_tail}")
        if compressed != seal.compressed:
            parts.append(f"compression flag {int(compressed)}, seal says {int(seal.compressed)}")
        if parts:
            self._add(_C.SEGMENT_SEAL_MISMATCH, seg.rel_path,
                      f"{seg.form} segment {seg.number} disagrees with its seals.log entry: " + "; ".join(parts),
                      segment=seg.number,
                      expected=f"{seal.entries} {seal.head.hex()} {int(seal.compressed)}",
                      actual=f"{c.entries} {c.head.hex()} {int(compressed)}")


def _read_first(stream: BinaryIO) -> bytes:
    """The first frame's bytes (or what there is of them) from the start of a stream."""
    head = read_exact(stream, 4)
    if len(head) < 4:
        return head
    length = int.from_bytes(head, "little")
    if length > MAX_FRAME:
        return head
    return head + read_exact(stream, length + HASH_LEN)


def iter_segments(directory: str | Path, key: bytes | None = None, *, rel_dir: str | None = None,
                  native: bool | None = None, resume: dict[str, Resume] | None = None) -> SegmentWalk:
    """Stream a segment directory (see :class:`SegmentWalk`; ``native`` as for
    :func:`~vakaudit.storage.chain.iter_frames`; ``resume``: what an earlier read verified, by
    segment rel_path, see :class:`Resume`)."""
    return SegmentWalk(directory, key, rel_dir=rel_dir, native=native, resume=resume)


def read_segments(directory: str | Path, key: bytes | None = None, *, rel_dir: str | None = None,
                  native: bool | None = None) -> SegmentsRead:
    """Read and verify every segment of a chain directory, oldest first.

    ``key`` is the scope key of the directory's ``KEY`` scope (32 bytes) to open sealed frames.
    ``rel_dir`` prefixes the findings' ``rel_path`` (the directory relative to the home).
    """
    walk = SegmentWalk(directory, key, rel_dir=rel_dir, keep_frames=True, native=native)
    for _seg, _frames in walk:
        pass  # each segment's walk is finished by the iteration
    return SegmentsRead(walk.segments, walk.seals, walk.findings, walk.scope, walk.has_lock)
