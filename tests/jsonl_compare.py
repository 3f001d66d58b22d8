"""Shared by the JSONL reader tests: read a sidecar file both ways and compare the tables.

The reference is ``read_jsonl(..., fast=False)``, the line-at-a-time reader; ``fast=True`` is the
compiled chunk reader when the extension is built, else the Python block path.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pyarrow as pa

from vakaudit.artifacts._base import ReadContext
from vakaudit.artifacts._jsonl import read_jsonl
from vakaudit.artifacts._rowspec import RowSpec
from vakaudit.findings import Finding
from vakaudit.scan.walk import iter_home_files


def spec_of(name: str) -> RowSpec:
    """The row spec of the artifact kind ``name``."""
    spec = importlib.import_module(f"vakaudit.artifacts.{name}").ROWS
    assert isinstance(spec, RowSpec)
    return spec


def read_file(
    home: Path, rel_path: str, spec: RowSpec, *, fast: bool, batch_rows: int = 65_536, start: int = 0
) -> tuple[Any, pa.Table | None, list[Finding]]:
    """(batch sizes, table, findings) of one read; a reader failure gives (its repr, None, findings)."""
    findings: list[Finding] = []
    ctx = ReadContext(
        home=home,
        rel_path=rel_path,
        home_scope="",
        session_id=None,
        start_offset=start,
        emit=findings.append,
    )
    try:
        batches = list(read_jsonl(ctx, spec, batch_rows, fast=fast))
    except Exception as exc:  # a reader failure must be the same failure on both paths
        return repr(exc), None, findings
    for b in batches:
        assert b.schema.equals(spec.schema)
    return [b.num_rows for b in batches], pa.Table.from_batches(batches, schema=spec.schema), findings


def assert_tables_equal(got: pa.Table, ref: pa.Table) -> None:
    """Equal tables, compared column by column first so that a failure names the column."""
    assert got.schema.equals(ref.schema)
    for name in ref.column_names:
        assert got.column(name).type == ref.column(name).type, name
        assert got.column(name).to_pylist() == ref.column(name).to_pylist(), name
        assert got.column(name).null_count == ref.column(name).null_count, name
    assert got.equals(ref)


def assert_same(
    home: Path, rel_path: str, spec: RowSpec, *, batch_rows: int = 65_536, start: int = 0
) -> pa.Table | None:
    """The fast and reference reads of one file give the same batches, table and findings; returns
    the table (None when both readers failed alike)."""
    sizes_f, fast, found_f = read_file(home, rel_path, spec, fast=True, batch_rows=batch_rows, start=start)
    sizes_r, ref, found_r = read_file(home, rel_path, spec, fast=False, batch_rows=batch_rows, start=start)
    assert sizes_f == sizes_r
    assert found_f == found_r
    if ref is None:
        assert fast is None
        return None
    assert fast is not None
    assert_tables_equal(fast, ref)
    return ref


def jsonl_files(home: Path) -> list[tuple[str, RowSpec]]:
    """(rel_path, row spec) of every file of ``home`` that a JSONL kind reads."""
    out = []
    for hf in iter_home_files(home):
        module = importlib.import_module(f"vakaudit.artifacts.{hf.kind.name}")
        spec = getattr(module, "ROWS", None)
        if hf.should_read and isinstance(spec, RowSpec):
            out.append((hf.rel_path, spec))
    return out
