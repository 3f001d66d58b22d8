"""Every committed broken sample home scans without error, with exact byte accounting and the
findings its README line announces (the same ones ``vakaudit verify`` reports)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from scan_homes import lstat_total

from vakaudit.scan import scan_home

BROKEN = Path(__file__).resolve().parents[2] / "sample_homes" / "broken"

# what the scan reports, from each home's README.md line (one defect per home)
EXPECTED = {
    "clean": set(),
    "torn_last_line": {"torn_last_line"},
    "prev_hash_edited": {"prev_hash_mismatch"},
    "payload_byte_changed": {"line_modified"},  # the edited line itself, not the next one vak flags
    "lines_swapped": {"lines_reordered"},
    "crlf": {"crlf_line_end"},
    "bom": {"bom"},  # serde_json refuses the BOM: vak skips the header line (one defect, one finding)
    "invalid_utf8": {"invalid_utf8"},
    "empty_ledger": {"empty_ledger"},
    "deep_json": {"nesting_too_deep"},  # deeper than serde_json's recursion limit
    "unchained": {"unchained_line"},
    "unknown_kind": {"unknown_kind"},
    "undeclared_file": {"undeclared_file"},
    "symlink_outside_home": {"symlink_outside_home"},
    "nested_home": {"nested_home"},
    "work_lines": {"work_duplicate_kind"},
    "branched": {"abandoned_branch"},
    "compaction_shapes": set(),
    "g1_layout": set(),
    "duplicate_id": {"duplicate_id", "parent_cycle"},
    "orphan_parent": {"orphan_parent"},
    "timestamp_backwards": {"timestamp_backwards"},
    "header_missing": {"header_missing"},
}


def test_every_sample_home_is_listed() -> None:
    homes = {p.name for p in BROKEN.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}
    assert homes <= set(EXPECTED), sorted(homes - set(EXPECTED))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_home_scans_with_exact_accounting(name: str, tmp_path: Path) -> None:
    home = BROKEN / name / "home"
    if not home.is_dir():
        pytest.fail(f"sample home {name} is missing; run python sample_homes/broken/make.py")
    res = scan_home(home, out=tmp_path / "out", jobs=1)
    assert set(res.findings_by_code()) == EXPECTED[name]
    con = res.duckdb()
    assert con.execute("SELECT coalesce(sum(size_bytes), 0) FROM files").fetchone()[0] == lstat_total(home)
    for rel, size in con.execute("SELECT rel_path, sum(size_bytes) FROM entries GROUP BY 1").fetchall():
        assert size == os.lstat(home / rel).st_size, rel
