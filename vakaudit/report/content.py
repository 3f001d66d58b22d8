"""Opt-in content previews (``--include-content``): a short text excerpt of one ledger line.

By default the report shows structure, sizes, counts and digests only. With content included, the
one-turn trace shows the first characters of each entry's text. Reads one line by its offset from the
home, read-only; the text is untrusted and is escaped by the templates like everything else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vakaudit.ledger import Entry

PREVIEW_CHARS = 160
MAX_LINE_BYTES = 4 * 1024 * 1024


def read_line(home: Path, rel_path: str, offset: int, size: int) -> bytes | None:
    path = (home / rel_path).resolve()
    try:
        path.relative_to(home.resolve())
    except ValueError:
        return None
    if size > MAX_LINE_BYTES or not path.is_file():
        return None
    with open(path, "rb") as fh:
        fh.seek(offset)
        return fh.read(size).rstrip(b"\r\n")


def _texts(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for key in ("text", "content", "note", "summary", "title"):
            if key in value:
                _texts(value[key], out)
    elif isinstance(value, list):
        for v in value:
            _texts(v, out)


def preview(home: Path, rel_path: str, offset: int, size: int) -> str | None:
    """The first :data:`PREVIEW_CHARS` characters of the entry's text, or None."""
    raw = read_line(home, rel_path, offset, size)
    if not raw:
        return None
    try:
        entry = Entry.from_line(raw)
    except ValueError:
        return None
    found: list[str] = []
    _texts(entry.message if entry.message is not None else entry.payload, found)
    text = " ".join(" ".join(found).split())
    if not text:
        return None
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"
