"""The report's JSONL-era sections on a 7.0 home: each renders 7.0's own story, measured.

"How reads scale" lists the reads 7.0 does instead (classified on the home), "Launch and first turn"
follows 7.0's launch path and "As-is → to-be" says how 7.0 applies each lever. Expectations come
from the home itself (its directories, a private copy of refs.db, the storage reader) and from the
rules of baseline7.md written out here.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from vakaudit.analyze.readscale import READS
from vakaudit.report import build_report
from vakaudit.storage import KeyRing, read_segments

SAMPLES = Path(__file__).resolve().parents[2] / "sample_homes"


@pytest.fixture(scope="module")
def report(synth_v7: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory, clock) -> tuple[dict, Path]:
    home, keys = synth_v7
    scan = tmp_path_factory.mktemp("v7-sections") / "scan"
    doc = json.loads(build_report(home, format="json", clock=clock, scan_out=scan, keys=KeyRing.from_file(keys)))
    return {s["name"]: s["context"] for s in doc["sections"]}, scan


def _conversations(home: Path) -> list[Path]:
    return sorted({p.parent for p in home.glob("agents/*/sessions/*/*/seg-*")})


def test_reads_are_7_0_reads_classified_on_the_home(report: tuple[dict, Path]) -> None:
    ctx = report[0]["read_scaling"]
    assert ctx["v7_measured_on_home"] and not ctx["has_readscale"] and ctx["measured"] == []
    reads = {r["vak_function"]: r for r in ctx["v7_reads"]}
    # each replaces one JSONL-era read of the reference report
    assert {r["replaces"] for r in reads.values()} <= {r.vak_function for r in READS}
    admission = reads["req/<session>/<sha256 hex(R)> ref (CAS)"]
    # a point lookup by the primary key of refs.db is a bounded read, found in the home's query plan
    assert (admission["read_class"], admission["basis"]) == ("flat", "measured")
    assert "USING INDEX" in admission["evidence"]
    assert reads["SessionLog::open (7.0: parse all segments)"]["basis"] == "measured"


def test_reads_unclassified_when_the_home_is_not_here(synth_v7: tuple[Path, Path], tmp_path: Path, clock) -> None:
    home, _keys = synth_v7
    copy = tmp_path / "home"
    shutil.copytree(home, copy)
    build_report(copy, format="json", clock=clock, scan_out=tmp_path / "scan")
    shutil.rmtree(copy)
    doc = json.loads(build_report(tmp_path / "scan", format="json", clock=clock))
    ctx = next(s["context"] for s in doc["sections"] if s["name"] == "read_scaling")
    assert not ctx["v7_measured_on_home"]
    assert {r["read_class"] for r in ctx["v7_reads"]} == {"not measured"}
    assert "readscale --home" in build_report(tmp_path / "scan", format="md", clock=clock)
    # scanned without keys: what needs the entries' plaintext says so instead of counting zero
    launch = {s["call"]: s for s in next(s["context"] for s in doc["sections"] if s["name"] == "launch")["steps"]}
    for call in ("derive_transcript", "append_turn_capabilities · append_intent · append_goal_update"):
        assert launch[call]["count"] is None and launch[call]["count_unit"].endswith("(needs --keys)")


def test_launch_follows_the_7_0_path(report: tuple[dict, Path], synth_v7: tuple[Path, Path]) -> None:
    home, _keys = synth_v7
    ctx = report[0]["launch"]
    assert ctx["v7"]
    steps = {s["call"]: s for s in ctx["steps"]}
    assert steps["GET /sessions (catalog nodes)"]["count"] == len(_conversations(home))
    # resuming reads every frame of the conversation's segments
    resumed = home / ctx["resumed"]
    frames = sum(len(s.chain.frames) for s in read_segments(resumed).segments)
    assert steps["SessionLog::open"]["count"] == frames
    assert steps["SessionLog::open"]["size_bytes"] == sum(p.stat().st_size for p in resumed.glob("seg-*"))
    # group commit: the admission and the directive are synced, the admission ref is one SQLite commit;
    # the binding, intent and goal update ride along unsynced
    assert ctx["barriers_before_dispatch"] == 3
    assert steps["append_turn_capabilities · append_intent · append_goal_update"]["marks"] == ["write", "nobarrier"]
    assert all("store.db" not in s["what"] for s in ctx["steps"])


def test_levers_say_how_7_0_applies_them(report: tuple[dict, Path], synth_v7: tuple[Path, Path],
                                         tmp_path: Path) -> None:
    home, _keys = synth_v7
    ctx = report[0]["levers"]
    assert ctx["v7"] and ctx["scale_points"] == []
    assert all(lv["applied"] and lv["tobe"] == [] for lv in ctx["levers"])
    # the same seven levers of the reference report as on a JSONL-era home, in the same order
    jsonl = json.loads(build_report(SAMPLES / "tiny", format="json", clock=None, scan_out=tmp_path / "tiny"))
    tiny = next(s["context"] for s in jsonl["sections"] if s["name"] == "levers")
    assert [lv["key"] for lv in ctx["levers"]] == [lv["key"] for lv in tiny["levers"]]
    assert len(tiny["levers"]) == 7 and not tiny["v7"]
    refs = next(home.glob("tenants/*/store/refs.db"))
    copy = tmp_path / "refs.db"
    shutil.copyfile(refs, copy)
    if refs.with_name("refs.db-wal").is_file():
        shutil.copyfile(refs.with_name("refs.db-wal"), tmp_path / "refs.db-wal")
    con = sqlite3.connect(copy)
    try:
        admitted = con.execute("SELECT count(*) FROM refs WHERE name LIKE 'req/%'").fetchone()[0]
    finally:
        con.close()
    lever = next(lv for lv in ctx["levers"] if lv["key"] == "in_memory_indexes")
    assert lever["asis"][0]["value"] == admitted > 0
    html = build_report(report[1], clock=None)
    assert "as vak 7.0 applied them" in html and "What changes at each scale point" not in html
