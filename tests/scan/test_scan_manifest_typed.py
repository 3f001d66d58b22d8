"""The scan's manifest through its typed form: :class:`Manifest` reads back exactly the JSON a scan
wrote, and every file's ``scan_state`` is a :class:`ScanState` (full on a first scan, unchanged on
a second one of the same home, appended for a ledger that grew)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pyarrow.parquet as pq

from vakaudit.scan import scan_home
from vakaudit.scan.manifest import MANIFEST, Manifest, ScanState

ROOT = Path(__file__).resolve().parents[2]


def _states(out: Path) -> dict[str, str]:
    t = pq.read_table(out / "files" / "all.parquet", columns=["rel_path", "scan_state"])
    return dict(zip(t["rel_path"].to_pylist(), t["scan_state"].to_pylist(), strict=True))


def test_manifest_round_trips_and_states_follow_the_scans(small_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    scan_home(small_home, out=out, jobs=1)
    doc = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    m = Manifest.from_dict(doc)
    assert m.to_dict() == doc
    assert m.home == str(small_home) and m.generation == 1
    assert set(m.files) == set(_states(out))
    first = _states(out)
    assert set(first.values()) <= {s.value for s in ScanState}
    assert {first[rel] for rel, e in m.files.items() if "state" in e} == {ScanState.FULL}

    scan_home(small_home, out=out, jobs=1)
    second = _states(out)
    assert {second[rel] for rel, e in m.files.items() if "state" in e} == {ScanState.UNCHANGED}
    assert Manifest.from_dict(json.loads((out / MANIFEST).read_text(encoding="utf-8"))).generation == 2

    ledger = next(rel for rel, e in m.files.items() if e["kind"] == "session_ledger")
    with (small_home / ledger).open("ab") as f:  # a torn line: the ledger grew since the last scan
        f.write(b'{"id":"x"')
    scan_home(small_home, out=out, jobs=1)
    assert _states(out)[ledger] == ScanState.APPENDED


def test_the_result_does_not_import_the_engine() -> None:
    tree = ast.parse((ROOT / "vakaudit" / "scan" / "result.py").read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "vakaudit.scan.engine" not in imported
