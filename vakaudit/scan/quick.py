"""Quick per-kind byte shares of a home's session ledgers, without parsing or verifying lines.

Answers "where do the ledger bytes go" at disk speed: each line is attributed to the first
``"kind":"…"`` member it holds (the envelope tag; ``"kind":`` cannot occur inside a JSON string),
and its size including the terminator is added to that kind. Nothing is decoded or hashed, so a
damaged line is counted under whatever tag it carries, or under ``None``; use :func:`scan_home` for
verified numbers. Read-only; files are read in large blocks, processes in parallel.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from vakaudit.scan.paths import iter_ledger_paths, open_read_only, resolve_home

BLOCK = 8 << 20
SERIAL_BYTES = 256 << 20  # below this, starting worker processes costs more than it saves
_TAG = b'"kind":"'


def kind_bytes_of_file(path: str | os.PathLike[str]) -> dict[str | None, list[int]]:
    """``{kind: [lines, bytes]}`` of one ledger file (bytes include line terminators)."""
    out: dict[str | None, list[int]] = {}
    fd = open_read_only(path)
    carry = b""
    tag = _TAG
    ntag = len(tag)
    try:
        while True:
            block = os.read(fd, BLOCK)
            if not block:
                break
            buf = carry + block if carry else block
            pos = 0
            find = buf.find
            while True:
                nl = find(b"\n", pos)
                if nl < 0:
                    break
                t = find(tag, pos, nl)
                if t >= 0:
                    e = find(b'"', t + ntag, nl)
                    kind = buf[t + ntag : e].decode("utf-8", "replace") if e >= 0 else None
                else:
                    kind = None
                acc = out.get(kind)
                if acc is None:
                    out[kind] = [1, nl + 1 - pos]
                else:
                    acc[0] += 1
                    acc[1] += nl + 1 - pos
                pos = nl + 1
            carry = buf[pos:]
    finally:
        os.close(fd)
    if carry:  # unterminated last line
        t = carry.find(tag)
        e = carry.find(b'"', t + ntag) if t >= 0 else -1
        kind = carry[t + ntag : e].decode("utf-8", "replace") if e >= 0 else None
        acc = out.setdefault(kind, [0, 0])
        acc[0] += 1
        acc[1] += len(carry)
    return out


def _many(paths: list[str]) -> dict[str | None, list[int]]:
    total: dict[str | None, list[int]] = {}
    for p in paths:
        for k, (n, b) in kind_bytes_of_file(p).items():
            acc = total.setdefault(k, [0, 0])
            acc[0] += n
            acc[1] += b
    return total


def _merge(parts: Iterable[dict[str | None, list[int]]]) -> dict[str | None, tuple[int, int]]:
    total: dict[str | None, list[int]] = {}
    for part in parts:
        for k, (n, b) in part.items():
            acc = total.setdefault(k, [0, 0])
            acc[0] += n
            acc[1] += b
    return {k: (v[0], v[1]) for k, v in sorted(total.items(), key=lambda kv: -kv[1][1])}


def ledger_kind_bytes(
    home: str | os.PathLike[str] | None = None, jobs: int | None = None
) -> dict[str | None, tuple[int, int]]:
    """``{entry kind: (lines, bytes)}`` over every session ledger of ``home``, largest first."""
    root = resolve_home(home)
    files = [(size, str(Path(root) / rel)) for rel, size in iter_ledger_paths(root)]
    n = jobs or os.cpu_count() or 1
    if n == 1 or len(files) < 2 or sum(s for s, _ in files) < SERIAL_BYTES:
        return _merge([_many([p for _, p in files])])
    # balance by size: largest first, each bucket gets the next file while it is the lightest
    buckets: list[list[str]] = [[] for _ in range(n)]
    loads = [0] * n
    for size, p in sorted(files, reverse=True):
        i = loads.index(min(loads))
        buckets[i].append(p)
        loads[i] += size
    import multiprocessing as mp

    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    with ProcessPoolExecutor(max_workers=n, mp_context=ctx) as pool:
        return _merge(pool.map(_many, [b for b in buckets if b]))
