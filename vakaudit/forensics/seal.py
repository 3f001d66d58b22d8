"""Append-only proof between two points in time: seal a home now, prove later that it only grew.

``seal_home`` records, for every file of an append-only artifact kind (session ledgers and the
append-only sidecars, ``ArtifactKind.append_only``; lock files excluded):

- ``size_bytes`` and ``line_count`` (LF-terminated lines, plus one for a final fragment);
- ``head_digest``: SHA-256 of the last complete line (CR stripped): for a session ledger, the
  ``prev_hash`` its next entry will carry;
- ``running_digest``: SHA-256 of the whole sealed prefix ``[0, size_bytes)``, the proof;
- ``line_crc32``: base64 of one big-endian CRC-32 per line, only to *name* the first changed line
  (CRC-32 detects every change of up to 32 consecutive bits, so every single-bit flip).

``verify_since`` proves that each sealed file still starts with exactly its sealed bytes (it may
have grown), and reports an ``append_only_violation`` for a file that was rewritten, truncated,
replaced or deleted, with the first changed line and its offset. A seal never holds an absolute
path. Files are read only up to their size at open time; nothing is written to the home.
A file whose name is not UTF-8 is recorded under its escaped ``rel_path`` (:func:`vakaudit.names.shown`)
with its bytes in hex under ``rel_path_raw``, which ``verify_since`` opens it by.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import stat
import struct
import zlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from vakaudit.errors import UsageError
from vakaudit.findings import Finding, FindingCode
from vakaudit.ledger.evidence import iter_framed_lines, open_evidence
from vakaudit.ledger.framing import LongLine
from vakaudit.ledger.policy import severity_of
from vakaudit.names import raw_bytes, shown
from vakaudit.outputs import write_output
from vakaudit.scan import iter_home_files, resolve_home

__all__ = [
    "SEAL_FORMAT",
    "seal_file",
    "seal_home",
    "write_seal",
    "read_seal",
    "verify_since",
    "verify_file_since",
]

SEAL_FORMAT = "vakaudit-seal/1"
C = FindingCode


def seal_file(path: str | os.PathLike, rel_path: str, kind: str = "") -> dict[str, Any]:
    """The seal record of one file (see the module docstring). Raises ``OSError`` when unreadable."""
    fd = open_evidence(path)
    try:
        size = os.fstat(fd).st_size
        running = hashlib.sha256()
        crcs = bytearray()
        head: str | None = None
        count = 0
        pack = struct.Struct(">I").pack
        for _, _, raw, terminated in iter_framed_lines(fd, size, tap=running.update):
            count += 1
            if isinstance(raw, LongLine):  # not held: its digests were taken as it streamed past
                if terminated:
                    head = raw.sha256
                crcs += pack(raw.crc32)
                continue
            if terminated:
                line = raw[:-1] if raw.endswith(b"\r") else raw
                head = hashlib.sha256(line).hexdigest()
            crcs += pack(zlib.crc32(raw))
    finally:
        os.close(fd)
    rec: dict[str, Any] = {"rel_path": shown(rel_path)}
    raw = raw_bytes(rel_path)
    if raw is not None:  # a name that is not UTF-8: its bytes, so verify --since finds the file again
        rec["rel_path_raw"] = raw.hex()
    return rec | {
        "kind": kind,
        "size_bytes": size,
        "line_count": count,
        "head_digest": head,
        "running_digest": running.hexdigest(),
        "line_crc32": base64.b64encode(bytes(crcs)).decode("ascii"),
    }


def seal_home(
    home: str | os.PathLike | None,
    *,
    clock: Callable[[], datetime] | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> dict[str, Any]:
    """Seal every append-only file of ``home``; returns the seal as a JSON-ready dict.

    Files that cannot be read are listed under ``"unsealed"`` with the reason (and are not proven
    later). ``clock`` gives ``sealed_at`` (default: now, UTC).
    """
    root = resolve_home(home)
    files: list[dict[str, Any]] = []
    unsealed: list[dict[str, str]] = []
    for hf in iter_home_files(root):
        if not hf.kind.append_only or hf.kind.secret or hf.rel_path.endswith(".lock"):
            continue
        if not hf.kind.reads(hf.rel_path):  # a 7.0 segment: its growth is the frame chain's to prove
            unsealed.append({"rel_path": shown(hf.rel_path), "reason": "7.0 record segment: not sealed by this version"})
            continue
        if hf.file_type != "file" or not hf.readable:
            unsealed.append(
                {"rel_path": shown(hf.rel_path), "reason": f"not a readable regular file ({hf.file_type})"}
            )
            continue
        if progress is not None:
            progress(shown(hf.rel_path), hf.size_bytes)
        try:
            files.append(seal_file(root / hf.rel_path, hf.rel_path, hf.kind.name))
        except OSError as exc:
            unsealed.append({"rel_path": shown(hf.rel_path), "reason": exc.strerror or str(exc)})
    now = (clock or (lambda: datetime.now(UTC)))()
    return {
        "format": SEAL_FORMAT,
        "sealed_at": now.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "file_count": len(files),
        "files": files,
        "unsealed": unsealed,
    }


def write_seal(
    seal: dict[str, Any], out: str | os.PathLike | BinaryIO, home: str | os.PathLike | None = None
) -> None:
    """Write a seal as pretty JSON to the path ``out`` (refused inside ``home``, written through
    :func:`vakaudit.outputs.write_output`) or to an open binary stream."""
    data = orjson.dumps(seal, option=orjson.OPT_INDENT_2) + b"\n"
    if hasattr(out, "write"):
        out.write(data)
    else:
        write_output(out, data, home)


def read_seal(path: str | os.PathLike) -> dict[str, Any]:
    """Load and check a seal file; raises :class:`UsageError` when it is not one."""
    p = Path(path).expanduser()
    try:
        seal = orjson.loads(p.read_bytes())
    except FileNotFoundError:
        raise UsageError(f"seal file not found: {p}") from None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise UsageError(f"{p} is not a readable seal file: {exc}") from None
    if (
        not isinstance(seal, dict)
        or seal.get("format") != SEAL_FORMAT
        or not isinstance(seal.get("files"), list)
    ):
        raise UsageError(f"{p} is not a {SEAL_FORMAT} seal (make one with `vakaudit seal HOME -o FILE`)")
    fields = (("size_bytes", int), ("line_count", int), ("running_digest", str), ("line_crc32", str))
    for rec in seal["files"]:
        rel = rec.get("rel_path") if isinstance(rec, dict) else None
        if not isinstance(rel, str) or not rel or rel.startswith("/") or ".." in rel.split("/"):
            raise UsageError(f"{p}: {rel!r} is not a path inside a home; the seal file is damaged")
        raw = rec.get("rel_path_raw")
        if raw is not None and not (isinstance(raw, str) and re.fullmatch(r"(?:[0-9a-f]{2})+", raw)):
            raise UsageError(f"{p}: the rel_path_raw of {rel} is not hex bytes; the seal file is damaged")
        if not all(isinstance(rec.get(k), t) for k, t in fields):
            raise UsageError(f"{p}: the record of {rel} is incomplete; the seal file is damaged")
    return seal


def verify_since(home: str | os.PathLike, seal: dict[str, Any]) -> list[Finding]:
    """Prove every sealed file of ``home`` only grew; one finding per file that did not."""
    root = Path(home)
    out: list[Finding] = []
    for rec in seal["files"]:
        raw = rec.get("rel_path_raw")
        f = verify_file_since(root / (os.fsdecode(bytes.fromhex(raw)) if raw else rec["rel_path"]), rec)
        if f is not None:
            out.append(f)
    return out


def _violation(rec: dict, message: str, line_no: int | None = None, offset: int | None = None,
               expected: str | None = None, actual: str | None = None) -> Finding:  # fmt: skip
    code = C.APPEND_ONLY_VIOLATION
    return Finding(code, severity_of(code), rec["rel_path"], message, line_no, offset, None, expected, actual)


def verify_file_since(path: Path, rec: dict[str, Any]) -> Finding | None:
    """None when ``path`` still starts with the sealed bytes of ``rec``, else the violation."""
    sealed_size = int(rec["size_bytes"])
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return _violation(rec, f"deleted since the seal (it had {sealed_size} bytes, {rec['line_count']} lines)",
                          expected=f"{sealed_size} bytes", actual="missing")  # fmt: skip
    except OSError as exc:
        return _violation(rec, f"cannot be checked: {exc.strerror or exc}", expected=rec["running_digest"])
    if not stat.S_ISREG(st.st_mode):
        return _violation(rec, "replaced by something that is not a regular file since the seal",
                          expected="regular file", actual=stat.filemode(st.st_mode))  # fmt: skip
    try:
        fd = open_evidence(path)
    except OSError as exc:
        return _violation(
            rec, f"cannot be read to check it: {exc.strerror or exc}", expected=rec["running_digest"]
        )
    try:
        size = os.fstat(fd).st_size
        if size >= sealed_size:
            h = hashlib.sha256()
            os.lseek(fd, 0, os.SEEK_SET)
            left = sealed_size
            while left > 0:
                chunk = os.read(fd, min(1 << 20, left))
                if not chunk:
                    break
                h.update(chunk)
                left -= len(chunk)
            if left == 0 and h.hexdigest() == rec["running_digest"]:
                return None  # byte-identical prefix: it only grew
        line_no, offset = _first_changed_line(fd, min(size, sealed_size), rec)
    finally:
        os.close(fd)
    if size < sealed_size:
        what = f"truncated from {sealed_size} to {size} bytes since the seal"
        if line_no is not None:
            what += f"; line {line_no} is the first that changed or is gone"
        return _violation(rec, what, line_no, offset, f"{sealed_size} bytes", f"{size} bytes")
    return _violation(rec, f"rewritten since the seal: line {line_no} is the first that changed"
                      if line_no is not None else "rewritten since the seal (same lines, other bytes)",
                      line_no, offset, rec["running_digest"], "sealed prefix differs")  # fmt: skip


def _first_changed_line(fd: int, limit: int, rec: dict[str, Any]) -> tuple[int | None, int | None]:
    crcs = base64.b64decode(rec["line_crc32"])
    n = len(crcs) // 4
    unpack = struct.Struct(">I").unpack_from
    last_no, end = 0, 0
    for line_no, off, raw, terminated in iter_framed_lines(fd, limit):
        last_no, end = line_no, off + (raw.length if isinstance(raw, LongLine) else len(raw)) + (1 if terminated else 0)
        if line_no > n:
            return line_no, off
        sealed = unpack(crcs, (line_no - 1) * 4)[0]
        if (raw.crc32 if isinstance(raw, LongLine) else zlib.crc32(raw)) != sealed:
            return line_no, off
    if last_no < n:
        return last_no + 1, end
    return None, None
