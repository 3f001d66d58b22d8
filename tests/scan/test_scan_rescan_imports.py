"""A scan into a folder that holds an earlier scan reads only what it keeps of it, and without
Arrow's dataset layer or compute module (their import costs a small scan ~50 ms).

A full scan keeps none of the last scan's rows, so it does not read its ``entry_fields`` or
``findings`` parts at all; an incremental rescan that keeps some rows selects them in Python
(``parts._rows_where``), with the same rows in the same order as Arrow's compute would give.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from fresh_process import run_cli

import vakaudit.scan.parts as scan_parts

SAMPLES = Path(__file__).resolve().parents[2] / "sample_homes"
WATCHED = ("pyarrow.dataset", "pyarrow.compute", "pyarrow._acero")

def _scan_in_a_fresh_process(runs: list[list[str]]) -> list[str]:
    got = run_cli(*runs)
    assert not got.code, got.stderr
    return [m for m in WATCHED if m in got.modules]


def test_a_full_scan_into_an_earlier_scan_imports_no_arrow_dataset_or_compute(tmp_path: Path) -> None:
    out = tmp_path / "scan"
    args = ["scan", str(SAMPLES / "tiny"), "--out", str(out), "--full", "-q"]
    assert _scan_in_a_fresh_process([args, args]) == []
    assert (out / "entry_fields" / "all.parquet").is_file()


def test_an_incremental_rescan_of_changed_files_imports_no_arrow_dataset_or_compute(tmp_path: Path) -> None:
    """Appended, shrunk and deleted files: shared parts are rewritten, ``entry_fields``, findings
    and the carried turns and sessions keep the rows of the other files."""
    home = tmp_path / "home"
    shutil.copytree(SAMPLES / "tiny", home, symlinks=True)
    out = tmp_path / "scan"
    scan = ["scan", str(home), "--out", str(out), "-q"]
    assert _scan_in_a_fresh_process([[*scan, "--full"]]) == []

    ledger = home / "agents/vak/sessions/11ad27fbabb05e63/child-1785725197750237000-1.jsonl"
    with ledger.open("ab") as f:
        f.write(ledger.read_bytes().splitlines(keepends=True)[-1])
    cost = home / "agents/vak/cost-log.jsonl"
    with cost.open("ab") as f:
        f.write(cost.read_bytes().splitlines(keepends=True)[-1])
    routing = home / "agents/vak/routing-evidence.jsonl"
    routing.write_bytes(b"".join(routing.read_bytes().splitlines(keepends=True)[:-1]))
    (home / "inbox.jsonl").unlink()
    assert _scan_in_a_fresh_process([scan]) == []


def _table(n: int) -> pa.Table:
    rel = [None if i % 7 == 3 else f"f{i % 5}" for i in range(n)]
    return pa.table({"rel_path": pa.array(rel, pa.string()), "i": pa.array(range(n), pa.int64())})


@pytest.mark.parametrize("n", [0, 1, 5, 37])
@pytest.mark.parametrize("values", [set(), {"f0"}, {"f1", "f3"}, {"f0", "f1", "f2", "f3", "f4"}, {"nope"}])
@pytest.mark.parametrize("keep", [True, False])
def test_rows_selected_in_python_are_those_arrow_compute_selects(
    n: int, values: set[str], keep: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = _table(n)
    python = scan_parts._rows_where(t, "rel_path", values, keep=keep)
    monkeypatch.setattr(scan_parts, "PY_SELECT_ROWS", -1)  # every selection through Arrow's compute
    arrow = scan_parts._rows_where(t, "rel_path", values, keep=keep)
    assert python.schema == t.schema
    assert python.to_pylist() == arrow.to_pylist()
