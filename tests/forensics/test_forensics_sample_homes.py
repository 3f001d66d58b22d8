"""The broken sample homes: committed bytes equal make.py's output; each yields exactly its findings."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

from vakaudit.findings import Severity
from vakaudit.forensics import verify_home

# Hand-written expectations (what each home's defect must produce): {(code, line_no)}.
EXPECTED: dict[str, set[tuple[str, int | None]]] = {
    "clean": set(),
    "torn_last_line": {("torn_last_line", 7)},
    "prev_hash_edited": {("prev_hash_mismatch", 4)},
    "payload_byte_changed": {("line_modified", 2)},
    "lines_swapped": {("lines_reordered", 4)},
    "duplicate_id": {("duplicate_id", 3), ("parent_cycle", 3)},
    "orphan_parent": {("orphan_parent", 5)},
    "crlf": {("crlf_line_end", 1)},
    "bom": {("bom", 1)},
    "invalid_utf8": {("invalid_utf8", 2)},
    "empty_ledger": {("empty_ledger", None)},
    "deep_json": {("nesting_too_deep", 3)},
    "unchained": {("unchained_line", 2)},
    "unknown_kind": {("unknown_kind", 8)},
    "timestamp_backwards": {("timestamp_backwards", 5)},
    "header_missing": {("header_missing", 1)},
    "undeclared_file": {("undeclared_file", None)},
    "symlink_outside_home": {("symlink_outside_home", None)},
    "nested_home": {("nested_home", None)},
    "branched": {("abandoned_branch", 7)},
    "work_lines": {("work_duplicate_kind", 8)},
    "compaction_shapes": set(),
    "g1_layout": set(),
}
# homes whose defect is harmless: nothing at warning or above
CLEAN = {
    "clean",
    "branched",
    "work_lines",
    "compaction_shapes",
    "g1_layout",
    "undeclared_file",
    "nested_home",
}


def _load_make(sample_homes: Path):  # noqa: ANN202
    spec = importlib.util.spec_from_file_location("sample_homes_make", sample_homes / "broken" / "make.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _tree(root: Path) -> dict[str, tuple[str, bytes]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            if rel == "make.py":
                continue
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p).encode())
            else:
                out[rel] = ("file", p.read_bytes())
    return out


def test_committed_bytes_equal_what_make_py_produces(sample_homes: Path, tmp_path: Path) -> None:
    make = _load_make(sample_homes)
    names = make.build(tmp_path)
    assert set(names) == set(EXPECTED)
    built, committed = _tree(tmp_path), _tree(sample_homes / "broken")
    assert sorted(built) == sorted(committed)
    assert [k for k in built if built[k] != committed[k]] == []


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_home_yields_exactly_its_expected_findings(sample_homes: Path, name: str) -> None:
    report = verify_home(sample_homes / "broken" / name / "home")
    got = {(f.code.value, f.line_no) for f in report.findings}
    assert got == EXPECTED[name]
    readme = (sample_homes / "broken" / name / "README.md").read_text(encoding="utf-8")
    assert readme.count("\n") == 1
    tail = readme.split("Expected findings:")[1]
    listed = {w for w in re.findall(r"[a-z][a-z0-9_]*", tail) if w not in {"line", "info", "none"}}
    assert listed == {code for code, _ in EXPECTED[name]}
    if name in CLEAN:
        assert report.at_or_above(Severity.WARNING) == []


def test_severities_of_the_harmless_defects_are_info(sample_homes: Path) -> None:
    for name, code in [("undeclared_file", "undeclared_file"), ("nested_home", "nested_home"),
                       ("branched", "abandoned_branch"), ("work_lines", "work_duplicate_kind")]:  # fmt: skip
        sev = {
            f.severity
            for f in verify_home(sample_homes / "broken" / name / "home").findings
            if f.code == code
        }
        assert sev == {Severity.INFO}, name


def test_the_symlink_out_of_the_home_is_committed_as_a_symlink_and_never_followed(sample_homes: Path) -> None:
    home = sample_homes / "broken" / "symlink_outside_home" / "home"
    link = next(home.rglob("leak.jsonl"))
    assert link.is_symlink() and os.readlink(link).startswith("../")
    report = verify_home(home)
    assert [r.rel_path for r in report.ledgers] == ["agents/vak/sessions/2599eb06cf360587/s-sample.jsonl"]


def test_a_synthetic_tiny_home_is_clean(tmp_path: Path) -> None:
    from vakaudit.synth import build_home

    build_home(tmp_path / "home", profile="tiny", fsync=False)
    report = verify_home(tmp_path / "home")
    assert report.at_or_above(Severity.WARNING) == []
    assert report.ledger_count >= 6
    assert report.cross_checks == [
        "receipts_vs_routing_evidence",
        "receipts_vs_cost_log",
        "store_db_vs_ledgers",
        "checkpoint_sequences",
        "commitment_replay",
        "outbox_jobs",
    ]
