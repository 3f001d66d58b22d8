"""Walk and verify a chain of frames: vak's reading rules (baseline7.md §3.5), made forensic.

vak reads a chain all-or-nothing. vakaudit yields the verified prefix and says where and why it
stopped: a bad length or a bad link breaks the chain at that frame; an unfinished trailing frame
is a torn tail. A length field corrupted to a larger value makes a complete frame look unfinished
(vak would call it a torn tail and its repair would cut the intact frames after it), so before
calling a tail torn the walker checks whether the bytes left hold a complete frame under another
length, or a later frame that chains from a recorded hash (resynchronisation).

One walker reads every source sequentially, so a file is streamed with memory bounded by its
largest frame (plus a 1 MiB read buffer). Nothing here raises on bad bytes; problems are findings.
No writes.

Two paths, identical results: the pure-Python reference walker, and the compiled one
(``walk_frames`` in ``vakaudit/_native/linescan.c``) that walks the clean run of frames (valid
length, complete, linking) of each buffer read and hands the first frame that is not clean to the
reference walker, which says what it is. ``native=False`` (or ``VAKAUDIT_NO_NATIVE=1``, or an
install without the extension) selects the reference path alone.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from vakaudit._native import linescan as _linescan
from vakaudit.findings import Finding, FindingCode
from vakaudit.storage.frames import (
    GENESIS,
    HASH_LEN,
    MAX_FRAME,
    OVERHEAD,
    SEALED,
    Frame,
    decode_payload,
    frame_size,
    length_ok,
    link,
)
from vakaudit.storage.policy import finding

__all__ = ["ChainRead", "ChainWalk", "read_chain", "iter_frames"]

_LEN = struct.Struct("<I")
_C = FindingCode
#: bytes the compiled walker is handed at a time (more when one frame is larger)
_CHUNK = 1 << 20


@dataclass(slots=True)
class ChainRead:
    """What :func:`read_chain` found: the verified frames and where the chain stops."""

    frames: list[Frame]
    head: bytes
    valid_len: int
    torn_tail: int | None
    broken_at: int | None
    encrypted_frames: int
    findings: list[Finding] = field(default_factory=list)
    #: frames verified; equals ``len(frames)`` unless the frames were streamed and not kept
    entries: int = -1

    def __post_init__(self) -> None:
        if self.entries < 0:
            self.entries = len(self.frames)

    def __repr__(self) -> str:
        return (
            f"ChainRead(entries={len(self.frames)}, head={self.head.hex()}, valid_len={self.valid_len}, "
            f"torn_tail={self.torn_tail}, broken_at={self.broken_at}, "
            f"encrypted_frames={self.encrypted_frames}, findings={len(self.findings)})"
        )


def read_exact(stream: BinaryIO, n: int) -> bytes:
    """Up to ``n`` bytes; fewer only at the end of the stream (stream readers return short reads)."""
    first = stream.read(n)
    if len(first) == n or not first:
        return first
    parts = [first]
    got = len(first)
    while got < n:
        more = stream.read(n - got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


class ChainWalk:
    """Iterate the verified frames of one chain; the summary attributes are final once exhausted.

    ``head``, ``valid_len``, ``torn_tail``, ``broken_at``, ``encrypted_frames`` and ``findings``
    mean what they mean on :class:`ChainRead`. Iterate once.
    """

    def __init__(
        self,
        stream: BinaryIO,
        prev: bytes = GENESIS,
        key: bytes | None = None,
        *,
        rel_path: str | None = None,
        segment: int | None = None,
        sink: list[Frame] | None = None,
        native: bool | None = None,
        offset: int = 0,
        index: int = 0,
        encrypted_frames: int = 0,
    ) -> None:
        self._stream = stream
        # None: the compiled walker when it is built and not switched off
        self._native = _linescan is not None if native is None else (native and _linescan is not None)
        self._sink = sink
        self._gen: Iterator[Frame] | None = None
        self._key = key
        self._rel_path = rel_path
        self._segment = segment
        self.start = prev
        self.head = prev
        # a resumed walk: ``offset`` bytes (``index`` frames, ``encrypted_frames`` of them sealed)
        # were verified before, ending in ``prev``; the stream is positioned at ``offset``
        self._offset = offset
        self.valid_len = offset
        self.entries = index
        self.torn_tail: int | None = None
        self.broken_at: int | None = None
        self.broken_offset: int | None = None
        self.encrypted_frames = encrypted_frames
        self.findings: list[Finding] = []
        self.done = False
        self._discard = False

    def __iter__(self) -> Iterator[Frame]:
        # one generator: iterating again continues where the last iteration stopped
        if self._gen is None:
            self._gen = self._frames()
        return self._gen

    def finish(self) -> None:
        """Read the rest of the chain (what the caller did not iterate)."""
        if self._gen is None and self._sink is None:
            self._discard = True  # nobody sees the frames: only the chain's facts and findings are kept
        for _ in self:
            pass

    def _frames(self) -> Iterator[Frame]:
        yield from self._walk()

    def _walk(self) -> Iterator[Frame]:
        if self._native:
            yield from self._walk_native()
        else:
            yield from self._walk_ref(self._stream, self._offset, self.entries, self.start)
        self.done = True

    def _finding(self, code: FindingCode, message: str, index: int, offset: int,
                 expected: str | None = None, actual: str | None = None) -> None:
        self.findings.append(finding(code, self._rel_path, message, offset_bytes=offset,
                                     expected=expected, actual=actual, segment=self._segment,
                                     frame_index=index))

    def _walk_native(self) -> Iterator[Frame]:
        """The compiled walker over buffered reads; the first frame it does not consume (bad length,
        bad link, or the end of the data inside a frame) goes to the reference walker."""
        assert _linescan is not None
        walk_frames = _linescan.walk_frames
        stream, key = self._stream, self._key
        prev = self.start
        base, index = self._offset, self.entries  # offset in the segment of buf[0]; frames so far
        buf = read_exact(stream, _CHUNK)
        eof = len(buf) < _CHUNK
        pos = 0
        while True:
            facts, end = walk_frames(buf, pos, prev, HASH_LEN, MAX_FRAME)
            if self._discard and key is None:
                # the frames go unseen (ChainWalk.finish): what they would have said, without them;
                # a sealed frame says nothing without its key, so only the others are decoded
                readable = [k for k, fact in enumerate(facts) if not fact[2] & SEALED]
                self.encrypted_frames += len(facts) - len(readable)
                for k in readable:
                    off, length, flags, _stored = facts[k]
                    _entry, problem, detail = decode_payload(flags, buf[off + 5 : off + 4 + length], base + off, None)
                    if problem is not None:
                        self._finding(problem, f"frame {index + k}: {detail}", index + k, base + off)
                if facts:
                    off, length, _flags, stored = facts[-1]
                    index += len(facts)
                    self.head = prev = stored
                    self.valid_len = base + off + frame_size(length)
                    self.entries = index
                facts = []
            for off, length, flags, stored in facts:
                offset = base + off
                sealed = bool(flags & SEALED)
                if sealed:
                    self.encrypted_frames += 1
                    if key is None:
                        entry, problem, detail = None, None, None
                    else:
                        entry, problem, detail = decode_payload(flags, buf[off + 5 : off + 4 + length], offset, key)
                else:
                    entry, problem, detail = decode_payload(flags, buf[off + 5 : off + 4 + length], offset, key)
                if problem is not None:
                    self._finding(problem, f"frame {index}: {detail}", index, offset)
                size = frame_size(length)
                frame = Frame(index, offset, size, flags, sealed, entry, stored, problem, detail)
                index += 1
                self.head = prev = stored
                self.valid_len = offset + size
                self.entries = index
                if self._sink is not None:
                    self._sink.append(frame)
                yield frame
            rest = len(buf) - end
            need = _CHUNK
            if rest >= 4:
                (length,) = _LEN.unpack_from(buf, end)
                if not length_ok(length) or rest >= frame_size(length):
                    break  # a bad length or a bad link: the reference walker reports it
                need = max(_CHUNK, frame_size(length) - rest)
            if eof:
                break
            more = read_exact(stream, need)
            eof = len(more) < need
            buf = buf[end:] + more
            base += end
            pos = 0
            if not buf:
                return
        if end < len(buf):
            yield from self._walk_ref(_Joined(buf[end:], stream), base + end, index, prev)

    def _walk_ref(self, stream: BinaryIO, offset: int, index: int, prev: bytes) -> Iterator[Frame]:
        """The reference walker, from byte ``offset`` (frame ``index``, chained after ``prev``)."""
        key = self._key
        while True:
            head = read_exact(stream, 4)
            if not head:
                break
            if len(head) < 4:
                self._torn(index, offset, len(head), "fewer than 4 bytes of a length field")
                break
            (length,) = _LEN.unpack(head)
            if not length_ok(length):
                self._break(index, offset, _C.FRAME_BAD_LENGTH,
                            f"frame {index}: len {length} is outside 1..{MAX_FRAME}; the chain breaks here")
                break
            rest = read_exact(stream, length + HASH_LEN)
            if len(rest) < length + HASH_LEN:
                self._tail(index, offset, prev, head + rest, length)
                break
            body = rest[:length]
            stored = rest[length:]
            got = link(prev, body)
            if got != stored:
                self._break(index, offset, _C.FRAME_BAD_LINK,
                            f"frame {index}: link hash does not match its bytes; the chain breaks here",
                            expected=stored.hex(), actual=got.hex())
                break
            flags = body[0]
            entry, problem, detail = decode_payload(flags, body[1:], offset, key)
            sealed = bool(flags & SEALED)
            if sealed:
                self.encrypted_frames += 1
            if problem is not None:
                self._finding(problem, f"frame {index}: {detail}", index, offset)
            size = frame_size(length)
            frame = Frame(index, offset, size, flags, sealed, entry, stored, problem, detail)
            prev = stored
            offset += size
            index += 1
            self.head = prev
            self.valid_len = offset
            self.entries = index
            if self._sink is not None:
                self._sink.append(frame)
            yield frame

    def _break(self, index: int, offset: int, code: FindingCode, message: str,
               expected: str | None = None, actual: str | None = None) -> None:
        self.broken_at = index
        self.broken_offset = offset
        self._finding(code, message, index, offset, expected, actual)

    def _torn(self, index: int, offset: int, have: int, why: str) -> None:
        self.torn_tail = offset
        self._finding(_C.FRAME_TORN_TAIL,
                      f"torn tail at frame {index}: {have} bytes, {why}", index, offset)

    def _tail(self, index: int, offset: int, prev: bytes, rem: bytes, length: int) -> None:
        """The bytes left are fewer than the frame's ``len`` asks for: torn, or a corrupted length?"""
        # A complete frame whose length field alone was changed: its bytes verify under the length
        # that makes it end exactly at the end of the data.
        true_len = len(rem) - OVERHEAD
        if true_len >= 1 and link(prev, rem[4 : 4 + true_len]) == rem[-HASH_LEN:]:
            self._break(index, offset, _C.FRAME_BAD_LENGTH,
                        f"frame {index}: len field says {length} but the frame is complete and verifies "
                        f"with len {true_len}: a corrupted length, not a torn tail",
                        expected=str(true_len), actual=str(length))
            return
        nxt = _resync(rem)
        if nxt is not None:
            p, count = nxt
            self._break(index, offset, _C.FRAME_BAD_LENGTH,
                        f"frame {index}: len field says {length}, past the end of the data, but an intact "
                        f"frame that chains from a recorded hash starts at offset {offset + p} "
                        f"({count} intact frames from there): a corrupted length, not a torn tail",
                        expected=str(p - OVERHEAD), actual=str(length))
            return
        self._torn(index, offset, len(rem), f"the frame needs {frame_size(length)}")


class _Joined:
    """The bytes of ``head``, then the rest of ``stream``: what the reference walker reads on from."""

    def __init__(self, head: bytes, stream: BinaryIO) -> None:
        self._head = head
        self._pos = 0
        self._stream = stream

    def read(self, n: int) -> bytes:
        if self._pos < len(self._head):
            out = self._head[self._pos : self._pos + n]
            self._pos += len(out)
            return out
        return self._stream.read(n)


def _resync(rem: bytes) -> tuple[int, int] | None:
    """The first offset in ``rem`` (past a minimal first frame) where a complete frame chains from
    the 32 bytes before it, with the count of frames chaining on from there; None if there is none.

    Only flags 0 and 1 are tried: vak's writer sets no other bit.
    """
    view = memoryview(rem)
    end = len(rem)
    budget = 8 * end + (1 << 20)  # bounds the bytes hashed on adversarial input
    for p in range(OVERHEAD + 1, end - OVERHEAD):
        if view[p + 4] > 1:
            continue
        (length,) = _LEN.unpack_from(view, p)
        if not length_ok(length) or p + frame_size(length) > end:
            continue
        budget -= length
        if budget < 0:
            return None
        body = view[p + 4 : p + 4 + length]
        if link(bytes(view[p - HASH_LEN : p]), body) != view[p + 4 + length : p + frame_size(length)]:
            continue
        count = 1
        q = p + frame_size(length)
        prev = bytes(view[q - HASH_LEN : q])
        while q + 5 <= end:
            (ln,) = _LEN.unpack_from(view, q)
            if not length_ok(ln) or q + frame_size(ln) > end:
                break
            if link(prev, view[q + 4 : q + 4 + ln]) != view[q + 4 + ln : q + frame_size(ln)]:
                break
            prev = bytes(view[q + 4 + ln : q + frame_size(ln)])
            q += frame_size(ln)
            count += 1
        return p, count
    return None


def iter_frames(
    source: str | Path | bytes | BinaryIO,
    prev: bytes = GENESIS,
    key: bytes | None = None,
    *,
    rel_path: str | None = None,
    segment: int | None = None,
    native: bool | None = None,
) -> ChainWalk:
    """Stream the verified frames of a chain from a path, bytes or a binary stream.

    Returns a :class:`ChainWalk`: iterate it for :class:`Frame` records (index, offset, stored and
    plain sizes, sealed flag, plaintext when readable); after the last one its ``head``,
    ``valid_len``, ``torn_tail``, ``broken_at``, ``encrypted_frames`` and ``findings`` are final.
    A path is opened lazily and closed when the iteration ends. Memory is bounded by one frame.
    ``native``: None uses the compiled walker when available, False the reference walker alone.
    """
    kw = {"rel_path": rel_path, "segment": segment, "native": native}
    if isinstance(source, (bytes, bytearray, memoryview)):
        return ChainWalk(io.BytesIO(bytes(source)), prev, key, **kw)
    if isinstance(source, (str, Path)):
        return _PathWalk(Path(source), prev, key, **kw)
    return ChainWalk(source, prev, key, **kw)


class _PathWalk(ChainWalk):
    def __init__(self, path: Path, prev: bytes, key: bytes | None, *, rel_path: str | None,
                 segment: int | None, native: bool | None = None) -> None:
        super().__init__(io.BytesIO(b""), prev, key, rel_path=rel_path, segment=segment, native=native)
        self._path = path

    def _frames(self) -> Iterator[Frame]:
        with self._path.open("rb") as fh:
            self._stream = fh
            yield from self._walk()


def read_chain(data: bytes, prev: bytes = GENESIS, key: bytes | None = None, *,
               rel_path: str | None = None, segment: int | None = None,
               native: bool | None = None) -> ChainRead:
    """Read and verify a whole chain held in ``data`` (one segment's frame bytes) from ``prev``.

    ``native=False`` reads with the pure-Python reference walker only (same result)."""
    walk = iter_frames(data, prev, key, rel_path=rel_path, segment=segment, native=native)
    return collect(walk)


def collect(walk: ChainWalk) -> ChainRead:
    """Exhaust a walk into a :class:`ChainRead`."""
    frames = list(walk)
    return ChainRead(frames, walk.head, walk.valid_len, walk.torn_tail, walk.broken_at,
                     walk.encrypted_frames, walk.findings)
