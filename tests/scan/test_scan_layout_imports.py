"""A scan imports what its home's layout needs, and no more.

A JSONL-era home is scanned without the 7.0 readers (``frames7``, ``chains7``, ``store7`` and the
``vakaudit.storage`` they stand on: their tables and part names are declared in ``tables7``); a 7.0
home is scanned, full or again, locked or unlocked, without Arrow's compute module (its frames'
rows are spread, selected and kept with slices, ``parts._rows_where`` and ``parts._as_table``).
Each scan runs in a fresh process, which prints what it had imported at exit.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from fresh_process import run_cli

from vakaudit.artifacts.session_ledger import ENTRIES_SCHEMA
from vakaudit.scan.frames7 import _spread

SAMPLES = Path(__file__).resolve().parents[2] / "sample_homes"
KEYS = SAMPLES / "v7-keys.json"

def _imported(runs: list[list[str]], watched: tuple[str, ...]) -> list[str]:
    got = run_cli(*runs)
    assert not got.code, got.stderr
    return [m for m in watched if m in got.modules]


def test_a_jsonl_home_is_scanned_without_the_7_0_readers(tmp_path: Path) -> None:
    scan = ["scan", str(SAMPLES / "tiny"), "--out", str(tmp_path / "scan"), "-q"]
    watched = ("vakaudit.scan.frames7", "vakaudit.scan.chains7", "vakaudit.scan.store7", "vakaudit.storage")
    assert _imported([[*scan, "--full"], scan], watched) == []
    assert (tmp_path / "scan" / "manifest.json").is_file()


@pytest.mark.parametrize("keys", [False, True], ids=["locked", "unlocked"])
def test_a_7_0_home_is_scanned_and_rescanned_without_arrow_compute(tmp_path: Path, keys: bool) -> None:
    scan = ["scan", str(SAMPLES / "v7"), "--out", str(tmp_path / "scan"), "-q"]
    if keys:
        scan += ["--keys", str(KEYS)]
    assert _imported([[*scan, "--full"], scan, scan], ("pyarrow.compute", "pyarrow.dataset")) == []
    assert (tmp_path / "scan" / "entries" / "frames7.parquet").is_file()


@pytest.mark.parametrize(
    "readable",
    [[], [True], [False], [True, True, False, True], [False, False, True, True, False], [True] * 5 + [False] * 3],
)
def test_frames_spread_over_their_rows_as_arrow_take_spreads_them(readable: list[bool]) -> None:
    n = sum(readable)
    plain = pa.Table.from_pylist(
        [{"rel_path": f"r{i}", "line_no": i + 1, "offset_bytes": 10 * i, "size_bytes": 9, "kind": "message"}
         for i in range(n)],
        schema=ENTRIES_SCHEMA,
    )
    take: list[int | None] = []
    for r in readable:
        take.append(len([t for t in take if t is not None]) if r else None)
    assert _spread(plain, readable).to_pylist() == plain.take(pa.array(take, pa.int64())).to_pylist()
    assert _spread(plain, readable).schema == ENTRIES_SCHEMA
    assert _spread(None, readable).to_pylist() == [dict.fromkeys(ENTRIES_SCHEMA.names)] * len(readable)
