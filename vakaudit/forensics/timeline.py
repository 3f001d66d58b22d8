"""A forensic timeline of a home: ledger entries, sidecar rows and file times in one time order.

Columns follow what timeline tools import (Timesketch's CSV/JSONL importer needs ``message``,
``datetime`` and ``timestamp_desc``; plaso's ``l2tcsv``-style fields map onto the rest):

- ``datetime``: ISO 8601 UTC with microseconds and ``Z``;
- ``timestamp``: microseconds since the Unix epoch (int);
- ``timestamp_desc``: what the time means (``Entry written``, ``Row written``, ``File modified``,
  ``Metadata changed``);
- ``source``: the artifact kind (``session_ledger``, ``cost_log``, ...) or ``file``; every JSON-lines
  file of a kind with a reader contributes its rows that carry a time (``ts``, ``timestamp``,
  ``requested_at``, ``created_at`` or ``updated_at``);
- ``message``: one short line (at most 200 characters) saying what happened;
- ``rel_path``, ``line_no`` (null for file times), ``entry_id`` (ledger entries only).

Rows are sorted by ``timestamp``, then ``rel_path`` and ``line_no``. Lines and rows whose time cannot
be read are left out (``verify`` reports them). The home is only read.
"""

from __future__ import annotations

import csv
import functools
import io
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, BinaryIO

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from vakaudit.artifacts import LEDGER_KIND
from vakaudit.artifacts._timestamps import ts_us
from vakaudit.ledger.evidence import iter_framed_lines, open_evidence
from vakaudit.ledger.records import LedgerReader
from vakaudit.names import shown
from vakaudit.outputs import open_output
from vakaudit.scan import iter_home_files, resolve_home

__all__ = [
    "TIMELINE_SCHEMA",
    "build_timeline",
    "csv_cell",
    "iter_timeline_rows",
    "write_timeline",
    "TIMELINE_FORMATS",
]

TIMELINE_SCHEMA = pa.schema(
    [
        pa.field("datetime", pa.string(), nullable=False),
        pa.field("timestamp", pa.int64(), nullable=False),
        pa.field("timestamp_desc", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("message", pa.string(), nullable=False),
        pa.field("rel_path", pa.string(), nullable=False),
        pa.field("line_no", pa.int64()),
        pa.field("entry_id", pa.string()),
    ]
)
TIMELINE_FORMATS = ("jsonl", "csv")
_MESSAGE_CHARS = 200
# sidecar row time fields, in order of preference
_TIME_KEYS = ("ts", "timestamp", "requested_at", "created_at", "updated_at")


def _iso(us: int) -> str:
    secs, frac = divmod(us, 1_000_000)
    return datetime.fromtimestamp(secs, UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{frac:06d}Z"


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MESSAGE_CHARS else text[: _MESSAGE_CHARS - 1] + "…"


def _entry_message(d: dict) -> str:
    kind = d.get("kind")
    if kind == "header":
        contract = d.get("contract") if isinstance(d.get("contract"), dict) else {}
        return (f"session {d.get('session_id')} started in {d.get('cwd')} "
                f"(vak {contract.get('app_version', '?')}, {contract.get('provider', '?')}/{contract.get('model', '?')})")  # fmt: skip
    if kind == "message":
        m = d.get("message") if isinstance(d.get("message"), dict) else {}
        parts = []
        content = m.get("content")
        for block in content if isinstance(content, list) else ():  # any other type: no blocks to show
            if not isinstance(block, dict):
                continue
            t = block.get("type")
            if t == "text":
                parts.append(str(block.get("text", "")))
            elif t == "tool_use":
                parts.append(f"[tool_use {block.get('name')}]")
            elif t == "tool_result":
                parts.append(f"[tool_result{' error' if block.get('is_error') else ''}]")
            else:
                parts.append(f"[{t}]")
        meta = d.get("meta") if isinstance(d.get("meta"), dict) else {}
        tag = f" ({meta['control']})" if isinstance(meta.get("control"), str) else ""
        return f"{m.get('role', '?')}{tag}: " + " ".join(parts)
    if kind == "receipt":
        attempts = d.get("attempts") if isinstance(d.get("attempts"), list) else []
        settled = ",".join(str(a.get("settlement")) for a in attempts if isinstance(a, dict))
        return f"receipt {d.get('purpose')} {d.get('provider')}/{d.get('model')} attempts: {settled}"
    if kind == "activity":
        return f"activity {d.get('activity_kind')} {d.get('status')}: {d.get('label')}"
    if kind == "compaction":
        return f"compaction{' (reset)' if d.get('reset_all') else ''}: {d.get('summary', '')}"
    if kind == "work":
        return f"work {d.get('contract_id')} revision {d.get('revision')}"
    if kind in ("goal_update", "goal"):
        return f"{kind}: {d.get('request') or d.get('objective') or ''}"
    return str(kind)


def _row_message(source: str, d: dict) -> str:
    keys = [
        k
        for k, v in d.items()
        if k not in _TIME_KEYS and k not in ("trace", "actor") and isinstance(v, str | int | float | bool)
    ]
    return f"{source}: " + ", ".join(f"{k}={d[k]}" for k in keys[:6])


def iter_timeline_rows(
    home: str | os.PathLike | None, *, progress: Callable[[str, int], None] | None = None
) -> Iterator[dict[str, Any]]:
    """Timeline rows of ``home`` in walk order (not sorted; :func:`build_timeline` sorts)."""
    root = resolve_home(home)
    for hf in iter_home_files(root):
        rel = shown(hf.rel_path)  # what rows show; the file itself opens by the walk's name
        if hf.file_type == "file" and hf.mtime_ns:
            size = hf.size_bytes
            us = hf.mtime_ns // 1000
            yield {"datetime": _iso(us), "timestamp": us, "timestamp_desc": "File modified", "source": "file",
                   "message": _clip(f"{rel} ({size} bytes, {hf.kind.name}) last modified"), "rel_path": rel,
                   "line_no": None, "entry_id": None}  # fmt: skip
            try:
                ctime_us = os.lstat(root / hf.rel_path).st_ctime_ns // 1000
            except OSError:
                ctime_us = None
            if ctime_us is not None:
                yield {"datetime": _iso(ctime_us), "timestamp": ctime_us, "timestamp_desc": "Metadata changed",
                       "source": "file", "message": _clip(f"{rel} inode changed (write, rename or chmod)"),
                       "rel_path": rel, "line_no": None, "entry_id": None}  # fmt: skip
        # every JSON-lines file a kind reads (ledgers and sidecars, compacting ones like the cost log too)
        if not hf.should_read or not hf.rel_path.endswith((".jsonl", ".log")):
            continue
        if progress is not None:
            progress(rel, hf.size_bytes)
        ledger = hf.kind.name == LEDGER_KIND
        try:
            fd = open_evidence(root / hf.rel_path)
        except OSError:
            continue
        try:
            size = os.fstat(fd).st_size
            rows = _ledger_rows(fd, size) if ledger else _side_rows(fd, size, hf.kind.name)
            for line_no, us, desc, msg, eid in rows:
                yield {"datetime": _iso(us), "timestamp": us, "timestamp_desc": desc, "source": hf.kind.name,
                       "message": _clip(msg), "rel_path": rel, "line_no": line_no,
                       "entry_id": eid if isinstance(eid, str) else None}  # fmt: skip
        finally:
            os.close(fd)


def _ledger_rows(fd: int, size: int) -> Iterator[tuple[int, int, str, str, str]]:
    """``(line_no, µs, description, message, entry id)`` of a ledger's entries, from its record stream
    (a line that is no entry has no time)."""
    for rec in LedgerReader(functools.partial(os.read, fd), size).records():
        env = rec.envelope
        us = ts_us(env[2]) if env is not None else None
        if us is not None:
            yield rec.line_no, us, "Entry written", _entry_message({**(rec.payload or {}), "kind": env[5]}), env[0]


def _side_rows(fd: int, size: int, source: str) -> Iterator[tuple[int, int, str, str, None]]:
    """The same of a side file's JSON lines: the first time key a row has."""
    for line_no, _, raw, _ in iter_framed_lines(fd, size):
        try:
            d = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(d, dict):
            continue
        for key in _TIME_KEYS:
            us = ts_us(d.get(key))
            if us is not None:
                yield line_no, us, "Row written", _row_message(source, d), None
                break


def build_timeline(
    home: str | os.PathLike | None, *, progress: Callable[[str, int], None] | None = None
) -> pa.Table:
    """The sorted timeline of ``home`` as an Arrow table with :data:`TIMELINE_SCHEMA`."""
    cols: dict[str, list] = {name: [] for name in TIMELINE_SCHEMA.names}
    for row in iter_timeline_rows(home, progress=progress):
        for name, values in cols.items():
            values.append(row[name])
    table = pa.Table.from_pydict(cols, schema=TIMELINE_SCHEMA)
    if table.num_rows == 0:
        return table
    keys = [("timestamp", "ascending"), ("rel_path", "ascending"), ("line_no", "ascending")]
    order = pc.sort_indices(table, sort_keys=keys)
    return table.take(order)


def write_timeline(
    table: pa.Table, out: str | os.PathLike | BinaryIO, fmt: str = "jsonl", home: str | os.PathLike | None = None
) -> int:
    """Write ``table`` as JSON Lines or CSV (header row, RFC 4180 quoting, :func:`csv_cell` cells) to
    the path ``out`` (refused inside ``home``, written through :func:`vakaudit.outputs.open_output`)
    or to an open binary stream; returns the row count."""
    if fmt not in TIMELINE_FORMATS:
        raise ValueError(f"unknown timeline format {fmt!r}")
    if hasattr(out, "write"):
        _write_rows(table, out, fmt)
    else:
        with open_output(out, home) as f:
            _write_rows(table, f, fmt)
    return table.num_rows


def csv_cell(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text: a string that starts with ``=``, ``+``, ``-``, ``@``,
    a tab or a carriage return (a formula to Excel, LibreOffice and Sheets) gets a leading ``'``
    (OWASP "CSV injection"); None is the empty cell; anything else is unchanged."""
    if value is None:
        return ""
    if isinstance(value, str) and value[:1] in _FORMULA_STARTS:
        return "'" + value
    return value


_FORMULA_STARTS = frozenset("=+-@\t\r")


def _write_rows(table: pa.Table, f: BinaryIO, fmt: str) -> None:
    names = table.schema.names
    if fmt == "jsonl":
        for batch in table.to_batches(65_536):
            for row in batch.to_pylist():
                f.write(orjson.dumps(row) + b"\n")
        return
    text = io.TextIOWrapper(f, encoding="utf-8", newline="")
    w = csv.writer(text)
    w.writerow(names)
    for batch in table.to_batches(65_536):
        for row in batch.to_pylist():
            w.writerow([csv_cell(row[n]) for n in names])
    text.flush()
    text.detach()
