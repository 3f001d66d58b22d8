"""`vakaudit analyze` of 7.0 homes: the synthetic v7 home and sample_homes/v7, keyless and unlocked.

Expectations come from outside the analysis: make_v7.py's entries (sample_homes/v7: conversation 1
with three turns, conversation 2 with one, four entries per turn after the header), os.stat of the
segment files, and what the v7 synth recorded writing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import vakaudit.cli

REPO = Path(__file__).resolve().parents[2]
SEALED_HEADER = 9  # "VAKSEG01" + the compression flag (baseline7.md §3.6)


def _analyze(*args: str) -> dict:
    r = CliRunner().invoke(vakaudit.cli.app, ["analyze", *args, "--json", "-q"])
    assert r.exit_code == 0, r.output[-2000:]
    return json.loads(r.stdout)


def _frame_bytes_on_disk(home: Path) -> int:
    """Bytes of every ledger frame: the open segments whole, the sealed ones past their header (S2
    sealed segments hold their frames verbatim)."""
    total = 0
    for p in (home / "agents/vak/sessions").glob("*/*/seg-*"):
        total += p.stat().st_size - (SEALED_HEADER if p.suffix == ".sealed" else 0)
    return total


@pytest.fixture(scope="module")
def sample7(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dst = tmp_path_factory.mktemp("analyze7") / "v7"
    shutil.copytree(REPO / "sample_homes" / "v7", dst)
    return dst


def test_sample_home_bytes_by_entry_kind_unlocked(sample7: Path, tmp_path: Path) -> None:
    keys = str(REPO / "sample_homes" / "v7-keys.json")
    doc = _analyze(str(sample7), "--keys", keys, "--scan-out", str(tmp_path / "scan"))
    rows = {r["kind"]: r for r in doc["metrics"]["ledger_bytes_by_kind"]["rows"]}
    assert {k: r["entry_count"] for k, r in rows.items()} == {
        "header": 2, "message": 8, "turn_capabilities_bound": 4, "evidence_body": 4,
    }
    assert sum(r["size_bytes"] for r in rows.values()) == _frame_bytes_on_disk(sample7)
    assert doc["headline"]["ledger_bytes"] > 0


def test_sample_home_keyless_does_not_crash(sample7: Path, tmp_path: Path) -> None:
    doc = _analyze(str(sample7), "--scan-out", str(tmp_path / "scan"))
    # sizes by kind and file still apply; entry kinds need the keys
    disk = {r["kind"]: r for r in doc["metrics"]["disk_by_kind"]["rows"]}
    assert "session_ledger" in disk and "objects" in disk
    assert doc["metrics"]["ledger_bytes_by_kind"]["rows"] == []
    # sessions are conversation directories (two in the sample: ...aa and ...bb), not their files
    conversations = {p.parent for p in sample7.glob("agents/*/sessions/*/*/seg-*")}
    assert len(conversations) == 2
    assert doc["headline"]["sessions"] == 2


def test_a_missing_key_file_is_a_usage_error(sample7: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(vakaudit.cli.app, ["analyze", str(sample7), "--keys", str(tmp_path / "none.json")])
    assert r.exit_code == 2


def test_synth_v7_per_turn_bytes_by_kind_agree_with_the_record(tmp_path: Path) -> None:
    home, keys, record = tmp_path / "v7", tmp_path / "k.json", tmp_path / "record.json"
    r = CliRunner().invoke(vakaudit.cli.app, ["synth", str(home), "--layout", "v7", "--keys-out", str(keys),
                                              "--record", str(record), "--no-fsync", "-q"])
    assert r.exit_code == 0, r.output
    rec = json.loads(record.read_text(encoding="utf-8"))
    doc = _analyze(str(home), "--keys", str(keys), "--scan-out", str(tmp_path / "scan"))
    turns = doc["headline"]["turns"]
    assert turns == rec["turns"] == 24
    rows = {r["kind"]: r for r in doc["metrics"]["ledger_bytes_by_kind"]["rows"]}
    assert {k: r["size_bytes"] for k, r in rows.items()} == {
        k: v["stored_bytes"] for k, v in rec["entry_kinds"].items()
    }
    for k, v in rec["entry_kinds"].items():
        assert round(rows[k]["size_bytes"] / turns, 1) == v["stored_bytes_per_turn"]
    assert sum(r["size_bytes"] for r in rows.values()) == _frame_bytes_on_disk(home) == rec["ledger_stored_bytes"]
    # keyless: the figures that need no key, no crash
    locked = _analyze(str(home), "--scan-out", str(tmp_path / "scan-locked"))
    assert locked["headline"]["home_bytes"] == doc["headline"]["home_bytes"]
    assert locked["metrics"]["ledger_bytes_by_kind"]["rows"] == []
