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


def glob_rule(rel_path: str, layout: str | None) -> list[tuple[str, str]]:
    """Every (kind name, pattern) whose glob matches ``rel_path`` under ``layout``, best first, by the
    rule classification documents (priority, then literal characters, then name), over every kind
    module's own declaration: the expectation the classification tests hold the index to."""
    from vakaudit.artifacts import all_kinds, specificity
    from vakaudit.artifacts._base import glob_matches

    found = [
        (kind, pattern)
        for kind in all_kinds()
        for pattern in kind.all_patterns
        if glob_matches(pattern, rel_path) and (layout in (None, "g3") or pattern in kind.patterns)
    ]
    found.sort(key=lambda kp: (-kp[0].priority, -specificity(kp[1]), kp[0].name))
    return [(k.name, p) for k, p in found]
