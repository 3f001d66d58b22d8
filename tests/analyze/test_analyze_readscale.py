"""Read scaling: the synthetic homes are real vak ledgers, results are stored and reloadable.

No timing assertions: the figures are measurements, only their structure is checked.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from vakaudit.analyze import readscale
from vakaudit.cli import app
from vakaudit.ledger import SessionLog


def test_scale_home_ledgers_verify_with_the_ledger_reader(tmp_path) -> None:
    home = readscale.build_scale_home(tmp_path / "h", 30, 23)
    files = sorted(home.sessions_dir.glob("*.jsonl"))
    assert len(files) == 2  # 7 + 23 turns; the resumed session has full length
    total = 0
    for f in files:
        log = SessionLog.open_read_only(f)
        assert log.warnings == []
        total += len(log.entries)
        assert log.entries[0].kind == "header"
    assert total == 2 + 13 * 30  # one header per session, 13 entries per turn
    assert sum(1 for line in home.current.read_bytes().splitlines() if b'"kind":"intent"' in line) == 23
    assert sum(1 for _ in home.routing.open("rb")) == round(30 * 2.3)


def test_classify_from_exponents() -> None:
    assert readscale.classify(0.9, 1.0) == "home"
    assert readscale.classify(0.1, 1.0) == "session"
    assert readscale.classify(0.1, 0.2) == "flat"


def test_growth_below_the_timer_resolution_is_flat_whatever_the_exponent() -> None:
    # a set lookup: 80 ns at the small home, 120 ns at the large one fits k ~ 0.5 on noise alone
    assert readscale.classify(0.53, 0.1, home_growth_ms=0.00004, session_growth_ms=0.0) == "flat"
    assert readscale.classify(0.53, 0.1, home_growth_ms=3.0, session_growth_ms=0.0) == "home"
    assert readscale.classify(0.1, 0.9, home_growth_ms=0.0, session_growth_ms=0.2) == "session"


def test_run_measures_every_read_and_stores_json(tmp_path) -> None:
    result = readscale.run(turns=(8, 16), repeats=1, out=tmp_path / "scan", workdir=tmp_path)
    names = [r.name for r in result.reads]
    assert names == [s.name for s in readscale.READS]
    assert len(names) == 9
    for r in result.reads:
        assert r.read_class in {"flat", "session", "home"}
        assert len(r.home_ms) == 2 and len(r.session_ms) == 2
        assert all(v >= 0 for v in r.home_ms + r.session_ms)
    stored = tmp_path / "scan" / "readscale.json"
    assert result.stored_at == str(stored)
    again = readscale.load(tmp_path / "scan")
    assert again.to_dict() == result.to_dict()
    assert [s["turns"] for s in result.sizes] == [8, 8, 16, 16]
    # the temporary homes are gone
    assert [p.name for p in tmp_path.iterdir()] == ["scan"]


def test_readscale_cli_json(tmp_path) -> None:
    out = tmp_path / "rs.json"
    res = CliRunner().invoke(
        app, ["readscale", "--turns", "6,12", "--repeats", "1", "--json", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["turns"] == [6, 12]
    assert json.loads(out.read_text())["reads"] == data["reads"]


def test_readscale_cli_rejects_one_size() -> None:
    res = CliRunner().invoke(app, ["readscale", "--turns", "10"])
    assert res.exit_code == 2
    assert "two distinct positive sizes" in res.output


def test_analyze_carries_a_result_stored_in_the_scan_dir(tiny_scan, tmp_path) -> None:
    import shutil

    from vakaudit.analyze import analyze

    scan = tmp_path / "scan"
    shutil.copytree(tiny_scan, scan)
    assert analyze(scan).readscale is None
    stored = readscale.run(turns=(5, 10), repeats=1, out=scan, workdir=tmp_path)
    a = analyze(scan)
    assert a.readscale is not None
    assert [r["name"] for r in a.readscale["reads"]] == [r.name for r in stored.reads]
    assert json.loads(a.to_json())["readscale"]["turns"] == [5, 10]
    assert a.provenance["readscale"].startswith("measured:")


def _lines(path) -> list[bytes]:
    return path.read_bytes().splitlines()


def test_scale_home_is_written_in_vaks_ledger_format_and_reproducible(tmp_path) -> None:
    import hashlib
    import re

    home = readscale.build_scale_home(tmp_path / "a", 30, 23)
    lines = _lines(home.current)
    assert len(lines) == 1 + 13 * 23
    uuid7 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
    ts_form = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z")  # chrono AutoSi on whole ms
    prev_id = prev_hash = None
    for line in lines:
        obj = json.loads(line)
        assert list(obj)[:3] == ["id", "parent_id", "ts"]
        assert uuid7.fullmatch(obj["id"]) and ts_form.fullmatch(obj["ts"])
        assert obj["parent_id"] == prev_id and obj.get("prev_hash") == prev_hash
        prev_id, prev_hash = obj["id"], hashlib.sha256(line).hexdigest()
    assert home.current.stem == json.loads(lines[0])["session_id"]
    # one seed, the same bytes; another seed, other ids
    again = readscale.build_scale_home(tmp_path / "b", 30, 23)
    assert [p.name for p in sorted(again.sessions_dir.iterdir())] == [p.name for p in sorted(home.sessions_dir.iterdir())]
    assert again.current.read_bytes() == home.current.read_bytes()
    assert again.routing.read_bytes() == home.routing.read_bytes()
    other = readscale.build_scale_home(tmp_path / "c", 30, 23, seed=8)
    assert other.current.name != home.current.name


def test_admission_scan_walks_the_session_logs_entries(tmp_path) -> None:
    home = readscale.build_scale_home(tmp_path / "h", 30, 23)
    log = SessionLog.open_read_only(home.current)
    # the resumed session holds turns 8..30, each admitted as req-<turn>; req-1..7 are another session's
    for n in range(1, 31):
        assert readscale._admission_scan(log.entries, f"req-{n}") is (n >= 8)
        assert log.has_request_admission(f"req-{n}") is (n >= 8)
    assert readscale._admission_scan(log.entries, "req-absent") is False


def test_listing_and_store_reads_go_through_the_ledger_reader(tmp_path) -> None:
    import sqlite3

    home = readscale.build_scale_home(tmp_path / "h", 30, 23)
    first = [json.loads(_lines(p)[0]) for p in sorted(home.sessions_dir.glob("*.jsonl"))]
    # sessions of 7 and 23 turns: their first prompts are turns 1 and 8
    assert readscale._listing_parse(home.sessions_dir) == [(first[0]["ts"], "turn 1"), (first[1]["ts"], "turn 8")]
    db = sqlite3.connect(home.store)
    try:
        assert readscale._store_import(home.current, db) == 1 + 13 * 23  # every entry is already indexed
        assert sorted(r[1] for r in readscale._listing_store(db)) == sorted(f["ts"] for f in first)
    finally:
        db.close()


def test_routing_snapshot_drops_rows_past_the_ttl_whatever_their_timestamp_form(tmp_path) -> None:
    home = readscale.build_scale_home(tmp_path / "h", 30, 23)
    rows = [json.loads(line) for line in _lines(home.routing)]
    assert len(rows) == 69
    # every third row (all of model m0) is 40 days old, the rest are within the 30-day TTL
    assert {r["model"] for r in rows[::3]} == {"m0"}
    assert {k: n for k, (n, _median) in readscale._routing_snapshot(home.routing, home.now_ns).items()} == {
        ("p", "m1"): 23,
        ("p", "m2"): 23,
    }
