"""Selecting a part's rows by file: the Python path (slices of runs) and Arrow's compute path give the
same rows in the same order, and both agree with a plain list comprehension over the rows.

``parts._rows_where`` picks its path by the number of rows and by whether Arrow's compute module is
loaded already, so within one test process either path may serve a scan: each is forced here.
"""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from vakaudit.scan import parts


def _table(n: int, seed: int) -> pa.Table:
    rnd = random.Random(seed)
    names = ["a.jsonl", "b.jsonl", "c.jsonl", None]
    rel = [rnd.choice(names) for _ in range(n)]
    return pa.table({"rel_path": pa.array(rel, pa.string()), "i": pa.array(range(n), pa.int64())})


@pytest.mark.parametrize("compute", [False, True], ids=["python", "compute"])
@pytest.mark.parametrize("keep", [True, False], ids=["keep", "drop"])
@pytest.mark.parametrize(("n", "seed"), [(0, 1), (1, 2), (7, 3), (500, 4)])
@pytest.mark.parametrize("values", [set(), {"a.jsonl"}, {"a.jsonl", "c.jsonl"}, {"a.jsonl", "b.jsonl", "c.jsonl"}])
def test_both_paths_select_the_rows_a_comprehension_selects(
    compute: bool, keep: bool, n: int, seed: int, values: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _table(n, seed)
    monkeypatch.setattr(parts, "_compute_pays", lambda rows: compute)
    got = parts._rows_where(table, "rel_path", values, keep=keep)
    # a null is in no set: a keep drops its row, a drop keeps it
    expected = [i for i, r in enumerate(table["rel_path"].to_pylist()) if (r in values) == keep]
    assert got["i"].to_pylist() == expected
    assert got.schema == table.schema
