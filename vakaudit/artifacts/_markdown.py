"""Shared reading of the Markdown documents of a home: YAML-like front matter, streamed size.

Only what the vak-core parsers need (home.md §7): ``key: "value"`` lines between ``---`` fences.
Reads only through ``ReadContext.open()``; never writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from vakaudit.artifacts._base import ReadContext
from vakaudit.artifacts._lines import iter_lines

HEAD_LINES = 64


def front_matter(lines: Iterable[bytes]) -> dict[str, str]:
    """``key: value`` pairs of a leading ``---`` block (quotes stripped); {} when there is none.

    ``lines`` are raw lines without terminators; reading stops at the closing fence.
    """
    out: dict[str, str] = {}
    it = iter(lines)
    first = next(it, None)
    if first is None or first.strip() != b"---":
        return out
    for raw in it:
        line = raw.decode("utf-8", "replace").strip()
        if line == "---":
            break
        key, sep, value = line.partition(":")
        if not sep:
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out[key.strip()] = value
    return out


@dataclass(frozen=True, slots=True)
class DocumentScan:
    """What one streamed pass over a small Markdown document gives."""

    front_matter: dict[str, str]
    size_bytes: int
    line_count: int
    last_match: str | None  # last line containing ``marker``, decoded


def scan_document(ctx: ReadContext, marker: bytes | None = None) -> DocumentScan:
    """Front matter (from the first lines), size and line count of a document, streamed."""
    head: list[bytes] = []
    size = count = 0
    last: bytes | None = None
    with ctx.open() as f:
        for line in iter_lines(f):
            size += line.size
            count += 1
            if len(head) < HEAD_LINES:
                head.append(line.raw)
            if marker is not None and marker in line.raw:
                last = line.raw
    return DocumentScan(front_matter(head), size, count, last.decode("utf-8", "replace") if last else None)
