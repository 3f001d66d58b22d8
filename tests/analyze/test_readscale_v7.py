"""7.0 read classes on a g3 home: expectations from baseline7.md (§8.3 the admission ref is one
name lookup, §10 the catalog's keys: ``refs.name`` and ``cursors.source`` primary keys,
``nodes_kind(kind, created_at)``, ``entries`` keyed by session), not from the code's own output."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from vakaudit.analyze import readscale, readscale7
from vakaudit.cli import app
from vakaudit.synth import build_home


@pytest.fixture(scope="module")
def home7(tmp_path_factory):
    home = tmp_path_factory.mktemp("rs7") / "v7"
    build_home(home, profile="tiny", seed=1, layout="v7", fsync=False)
    return home


def _tree(root):
    return {os.path.join(d, f): os.stat(os.path.join(d, f)).st_mtime_ns for d, _s, fs in os.walk(root) for f in fs}


def test_v7_reads_are_classified_on_the_home_and_labelled(home7) -> None:
    before = _tree(home7)
    reads = {r.name: r for r in readscale7.v7_read_classes(home7)}
    assert _tree(home7) == before  # the databases were read from private copies
    assert set(reads) == {s.name for s in readscale7.V7_READS}
    want = {"request_admission_ref": "flat", "session_listing_catalog": "flat", "ingest_cursor": "flat",
            "session_entries_catalog": "session", "routing_evidence_rollup": "flat", "commitment_rollup": "flat"}
    for name, cls in want.items():
        assert reads[name].read_class == cls, (name, reads[name])
    for name in ("request_admission_ref", "session_listing_catalog", "ingest_cursor", "session_entries_catalog"):
        assert reads[name].basis == "measured" and "SEARCH" in reads[name].evidence
    assert reads["routing_evidence_rollup"].basis == "estimated"
    # the replaced JSONL-era reads are the ones of READS
    assert {r.replaces for r in reads.values()} <= {s.name for s in readscale.READS}
    # no 7.0 turn-path read is home-class (baseline7.md §1 exit criterion)
    assert all(r.read_class != "home" for r in reads.values())


def test_plan_class_reads_a_table_scan_as_home() -> None:
    assert readscale7.plan_class(["SCAN refs"], per_session=False) == "home"
    assert readscale7.plan_class(["SEARCH refs USING INDEX x (name=?)"], per_session=False) == "flat"
    assert readscale7.plan_class(["SEARCH entries USING INDEX y (session=?)"], per_session=True) == "session"


def test_cli_readscale_home(home7, tmp_path) -> None:
    r = CliRunner().invoke(app, ["readscale", "--home", str(home7), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [x["name"] for x in doc["reads"]] == [s.name for s in readscale7.V7_READS]
    r = CliRunner().invoke(app, ["readscale", "--home", str(tmp_path)])
    assert r.exit_code == 2
