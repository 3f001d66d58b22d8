"""Helpers for the artifact-kind tests: run one kind's reader over a fixture file.

A plain module with a unique name (not a conftest): several test folders have a conftest.py, and
importing one by the name ``conftest`` picks whichever was loaded first.
"""

from __future__ import annotations

import importlib
from datetime import UTC, datetime
from pathlib import Path

from vakaudit.artifacts._base import ReadContext
from vakaudit.findings import Finding

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def run_reader(
    kind_name: str, home: Path, rel_path: str, start_offset: int = 0, session_id: str | None = None
):
    """(rows as dicts, findings) of one kind's reader over ``home/rel_path``."""
    kind = importlib.import_module(f"vakaudit.artifacts.{kind_name}").KIND
    findings: list[Finding] = []
    scope = rel_path.rsplit("/", 1)[0] if "/" in rel_path else ""
    ctx = ReadContext(
        home=home,
        rel_path=rel_path,
        home_scope=scope,
        session_id=session_id,
        start_offset=start_offset,
        emit=findings.append,
    )
    rows: list[dict] = []
    for batch in kind.reader(ctx):
        assert batch.schema.equals(kind.schema), kind_name
        rows.extend(batch.to_pylist())
    return rows, findings


def line_spans(data: bytes) -> list[tuple[int, int]]:
    """(offset, size incl. LF) of every LF-terminated line: an independent split of the fixture."""
    spans = []
    pos = 0
    for piece in data.split(b"\n")[:-1]:
        spans.append((pos, len(piece) + 1))
        pos += len(piece) + 1
    return spans


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)
