"""Small ledgers of one task share one ``entries`` part; every incremental path keeps it exact.

The small home's two ledgers (3 and 2 turns of the scan_homes shape: a binding, a directive, a tool
call, its result and an answer per turn) are bundled into one task, so their rows live in one Parquet
part. Changing one of them must leave the other's rows, turns and session untouched and give the
changed one exactly its new rows. Expected turns and sessions are computed here from the ledger
bytes with ``json``, not with vakaudit. Every test runs twice: with turns and sessions aggregated in
Python (what a group this small gets) and with DuckDB's queries (what a larger group gets).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from scan_homes import fixed_clock, make_ledger, write_turns

import vakaudit.scan.derive as scan_derive
import vakaudit.scan.parts as scan_parts
import vakaudit.scan.plan as scan_plan
import vakaudit.scan.worker as scan_worker
from vakaudit.artifacts.session_ledger import ENTRIES_SCHEMA, LedgerScanner
from vakaudit.ledger import SessionLog
from vakaudit.scan import scan_home

A = "agents/vak/sessions/2599eb06cf360587/s1.jsonl"  # 3 turns
B = "agents/vak/agents/vak/sessions/2599eb06cf360587/s2.jsonl"  # 2 turns


@pytest.fixture(autouse=True, params=["aggregated", "duckdb"])
def derive_way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "duckdb":
        monkeypatch.setattr(scan_derive, "HERE_ROWS", -1)  # every group through DuckDB's queries
    return request.param


TURN_KEYS = (
    "rel_path",
    "session_id",
    "turn_no",
    "turn_id",
    "entry_count",
    "size_bytes",
    "binding_bytes",
    "binding_count",
    "message_count",
    "assistant_count",
    "control_count",
    "tool_use_count",
    "tool_result_count",
    "tool_result_bytes",
    "input_tokens",
    "output_tokens",
    "model",
    "chain_broken_count",
)
SESSION_KEYS = (
    "rel_path",
    "session_id",
    "app_version",
    "provider",
    "model",
    "entry_count",
    "turn_count",
    "size_bytes",
    "binding_bytes",
    "unparseable_count",
    "chain_broken_count",
    "chain_ok",
    "input_tokens",
    "output_tokens",
)


def expected_rows(home: Path, rel: str) -> tuple[list[dict], dict]:
    """(turns, session) of a scan_homes ledger, from its bytes: a header, then 5 lines per turn."""
    data = (home / rel).read_bytes()
    assert data.endswith(b"\n")
    lines = data.split(b"\n")[:-1]
    docs = [json.loads(line) for line in lines]
    assert docs[0]["kind"] == "header" and (len(lines) - 1) % 5 == 0
    sid = Path(rel).stem
    turns = []
    for k in range((len(lines) - 1) // 5):
        raw, doc = lines[1 + 5 * k : 6 + 5 * k], docs[1 + 5 * k : 6 + 5 * k]
        binding, directive, call, result, answer = doc
        assert binding["kind"] == "turn_capabilities_bound" and directive["message"]["role"] == "user"
        usage = [d["meta"]["usage"] for d in (call, answer)]
        text = result["message"]["content"][0]["content"]
        turns.append(
            {
                "rel_path": rel,
                "session_id": sid,
                "turn_no": k + 1,
                "turn_id": directive["id"],
                "entry_count": 5,
                "size_bytes": sum(len(x) + 1 for x in raw),
                "binding_bytes": len(raw[0]) + 1,
                "binding_count": 1,
                "message_count": 4,
                "assistant_count": 2,
                "control_count": 0,
                "tool_use_count": 1,
                "tool_result_count": 1,
                "tool_result_bytes": len(text.encode()),
                "input_tokens": sum(u["input_tokens"] for u in usage),
                "output_tokens": sum(u["output_tokens"] for u in usage),
                "model": answer["meta"]["model"],
                "chain_broken_count": 0,
            }
        )
    contract = docs[0]["contract"]
    session = {
        "rel_path": rel,
        "session_id": sid,
        "app_version": contract["app_version"],
        "provider": contract["provider"],
        "model": contract["model"],
        "entry_count": len(lines),
        "turn_count": len(turns),
        "size_bytes": len(data),
        "binding_bytes": sum(t["binding_bytes"] for t in turns),
        "unparseable_count": 0,
        "chain_broken_count": 0,
        "chain_ok": True,
        "input_tokens": sum(t["input_tokens"] for t in turns),
        "output_tokens": sum(t["output_tokens"] for t in turns),
    }
    return turns, session


def assert_derived_exactly(res, home: Path, ledgers: list[str]) -> None:
    turns = sorted(
        ({k: r[k] for k in TURN_KEYS} for r in res.table("turns").to_pylist()),
        key=lambda r: (r["rel_path"], r["turn_no"]),
    )
    sessions = sorted(
        ({k: r[k] for k in SESSION_KEYS} for r in res.table("sessions").to_pylist()),
        key=lambda r: r["rel_path"],
    )
    want_turns, want_sessions = [], []
    for rel in sorted(ledgers):
        t, s = expected_rows(home, rel)
        want_turns += t
        want_sessions.append(s)
    assert turns == want_turns
    assert sessions == want_sessions
    assert res.row_counts["turns"] == len(want_turns) and res.row_counts["sessions"] == len(want_sessions)


def assert_entries_exact(res, home: Path, ledgers: list[str]) -> None:
    """Every row is the line of its file at its offset; every line of every ledger has one row."""
    rows = res.table("entries").to_pylist()
    assert res.row_counts["entries"] == len(rows)
    by_file: dict[str, list[dict]] = {}
    for r in rows:
        by_file.setdefault(r["rel_path"], []).append(r)
    assert sorted(by_file) == sorted(ledgers)
    for rel, rs in by_file.items():
        data = (home / rel).read_bytes()
        rs.sort(key=lambda r: r["line_no"])
        assert [r["line_no"] for r in rs] == list(range(1, data.count(b"\n") + 1))
        for r in rs:
            line = data[r["offset_bytes"] : r["offset_bytes"] + r["size_bytes"]]
            assert line.endswith(b"\n") and b"\n" not in line[:-1]
            assert r["line_sha256"] == hashlib.sha256(line[:-1]).hexdigest()
            assert r["session_id"] == Path(rel).stem
            assert r["workspace_key"] == "2599eb06cf360587" and r["agent_id"] == "vak"
        assert sum(r["size_bytes"] for r in rs) == len(data)


def entries_parts(out: Path) -> list[str]:
    return sorted(p.name for p in (out / "entries").glob("*.parquet"))


def manifest_files(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())["files"]


def rows_by_file(path: Path) -> dict[str, int]:
    t = pq.read_table(path, columns=["rel_path"])
    counts = t.group_by("rel_path").aggregate([("rel_path", "count")]).to_pylist()
    return {r["rel_path"]: r["rel_path_count"] for r in counts}


def lines_of(home: Path, rel: str) -> int:
    return (home / rel).read_bytes().count(b"\n")


def sorted_table(res, name: str) -> pa.Table:
    keys = [
        (c, "ascending")
        for c in ("rel_path", "line_no", "turn_no", "kind", "field")
        if c in res.table(name).column_names
    ]
    return res.table(name).sort_by(keys)


def test_small_ledgers_share_one_entries_part(small_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = scan_home(small_home, out=out, jobs=1)
    parts = entries_parts(out)
    assert len(parts) == 1 and re.fullmatch(r"t1-\d+\.parquet", parts[0])
    files = manifest_files(out)
    for rel in (A, B):
        assert files[rel]["parts"] == [f"entries/{parts[0]}"]
        assert files[rel]["part_rows"] == lines_of(small_home, rel)
    assert rows_by_file(out / "entries" / parts[0]) == {A: 16, B: 11}
    assert_entries_exact(res, small_home, [A, B])
    assert_derived_exactly(res, small_home, [A, B])


def _append(home: Path) -> None:
    log = SessionLog.open(home / A, clock=fixed_clock(), fsync=False)
    try:
        write_turns(log, 2, start=100)
    finally:
        log.close()


def _rewrite_in_place(home: Path) -> None:
    # another ledger's bytes over the first ones, longer: it looks like growth until its head is read
    other = make_ledger(home.parent / "other" / "s1.jsonl", 4)
    with open(home / A, "r+b") as f:
        f.write(other.read_bytes())


def _shrink(home: Path) -> None:
    data = (home / A).read_bytes()
    keep = b"".join(line + b"\n" for line in data.split(b"\n")[:6])  # header and the first turn
    (home / A).write_bytes(keep)


def _replace(home: Path) -> None:
    other = make_ledger(home.parent / "other" / "s1.jsonl", 1)
    os.replace(other, home / A)  # a new inode with fewer turns


def _delete(home: Path) -> None:
    (home / A).unlink()


CHANGES = {
    "append": (_append, "appended"),
    "rewrite": (_rewrite_in_place, "full"),
    "shrink": (_shrink, "full"),
    "replace": (_replace, "full"),
    "delete": (_delete, None),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_changing_one_ledger_of_a_shared_part_keeps_the_other(
    change: str, small_home: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    scan_home(small_home, out=out, jobs=1)
    (shared,) = entries_parts(out)
    b_before = manifest_files(out)[B]
    mutate, state = CHANGES[change]
    mutate(small_home)
    res = scan_home(small_home, out=out, jobs=1)

    files = manifest_files(out)
    # B was not reread: same part, same rows; the shared part still holds exactly B's lines
    assert files[B]["parts"] == b_before["parts"] == [f"entries/{shared}"]
    assert files[B]["part_rows"] == b_before["part_rows"] == 11
    held = rows_by_file(out / "entries" / shared)
    assert held[B] == 11
    ledgers = [B] if state is None else [A, B]
    if state == "appended":  # A's old rows stay in the shared part, its new ones in a new part
        assert held == {A: 16, B: 11}
        assert files[A]["parts"][0] == f"entries/{shared}" and len(files[A]["parts"]) == 2
        assert rows_by_file(out / files[A]["parts"][1]) == {A: 10}
    else:  # A's old rows left the shared part
        assert held == {B: 11}
    if state is not None:
        assert files[A]["part_rows"] == lines_of(small_home, A)
        scan_state = {r["rel_path"]: r["scan_state"] for r in res.table("files").to_pylist()}
        assert scan_state[A] == state and scan_state[B] == "unchanged"
    else:
        assert A not in files
    assert_entries_exact(res, small_home, ledgers)
    assert_derived_exactly(res, small_home, ledgers)
    fresh = scan_home(small_home, out=tmp_path / "fresh", jobs=1)
    for name in ("entries", "entry_fields", "turns", "sessions"):
        assert sorted_table(res, name).equals(sorted_table(fresh, name)), name
    # (the fresh scan has no append_only_violation to report)
    assert {k: v for k, v in res.row_counts.items() if k != "findings"} == {
        k: v for k, v in fresh.row_counts.items() if k != "findings"
    }


def test_rows_of_several_ledgers_cross_batches_and_row_groups(
    small_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tiny batches and row groups: a batch holds the end of one ledger and the start of the next
    monkeypatch.setattr(scan_worker, "ENTRIES_BATCH_ROWS", 3)
    monkeypatch.setattr(scan_parts, "ENTRIES_GROUP_ROWS", 7)
    out = tmp_path / "out"
    res = scan_home(small_home, out=out, jobs=1)
    (part,) = entries_parts(out)
    meta = pq.ParquetFile(out / "entries" / part).metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    assert sum(sizes) == 27 and len(sizes) >= 3 and max(sizes) <= 7 + 3 - 1
    assert_entries_exact(res, small_home, [A, B])
    assert_derived_exactly(res, small_home, [A, B])
    # an incremental pass over such a part
    _append(small_home)
    again = scan_home(small_home, out=out, jobs=1)
    assert_entries_exact(again, small_home, [A, B])
    assert_derived_exactly(again, small_home, [A, B])


def test_turns_split_by_ledger_over_a_shared_part(
    small_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one ledger per DuckDB query: each query reads the shared part and keeps its own ledger's rows
    monkeypatch.setattr(scan_derive, "DERIVE_GROUP_ROWS", 1)
    out = tmp_path / "out"
    res = scan_home(small_home, out=out, jobs=1)
    assert_derived_exactly(res, small_home, [A, B])
    _append(small_home)  # A's rows now in two parts, one of them shared with B
    again = scan_home(small_home, out=out, jobs=1)
    assert_derived_exactly(again, small_home, [A, B])


def test_derive_groups_link_ledgers_through_their_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    ledgers = {
        "a": {"parts": ["p1", "p2"]},
        "b": {"parts": ["p2"]},
        "c": {"parts": ["p3"]},
        "d": {"parts": ["p3"]},  # not derived: unchanged
        "e": {"parts": ["p4"]},
    }
    derive = {rel: ledgers[rel]["parts"] for rel in ("a", "b", "c", "e")}
    rows = {"a": 10, "b": 10, "c": 10, "e": 10}
    # all in one query; p3 also holds d's rows, so the query keeps the rows of its own ledgers only
    assert scan_derive._derive_groups(derive, rows, ledgers) == [(["p1", "p2", "p3", "p4"], ["a", "b", "c", "e"])]
    monkeypatch.setattr(scan_derive, "DERIVE_GROUP_ROWS", 20)
    # a and b share p2: one query, whose parts hold no other rows
    assert scan_derive._derive_groups(derive, rows, ledgers) == [(["p1", "p2"], None), (["p3", "p4"], ["c", "e"])]
    monkeypatch.setattr(scan_derive, "DERIVE_GROUP_ROWS", 15)
    # a and b no longer fit together: cut by ledger, each query keeping its own ledger's rows of p2
    assert scan_derive._derive_groups(derive, rows, ledgers) == [
        (["p1", "p2"], ["a"]),
        (["p2"], ["b"]),
        (["p3"], ["c"]),
        (["p4"], None),
    ]


def test_a_ledger_failing_half_way_leaves_no_row_in_the_part(
    small_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_parts, "ENTRIES_GROUP_ROWS", 4)
    (tmp_path / "out" / "entries").mkdir(parents=True)
    sink = scan_parts._EntriesPart(str(tmp_path / "out"), "entries/t1-0.parquet")

    def feed(rel: str, stop_after: int | None = None) -> None:
        sc = LedgerScanner(rel, buffer=sink.buffer, batch_rows=2)
        with open(small_home / rel, "rb") as f:
            for i, batch in enumerate(sc.scan(f, (small_home / rel).stat().st_size)):
                sink.add(batch)
                if stop_after is not None and i + 1 == stop_after:
                    return

    feed(A)
    writes = sink.writes
    feed(B, stop_after=4)  # 8 of B's rows taken, some of them already written to the file
    assert sink.writes > writes
    sink.drop(B, writes)
    assert sink.close()
    t = pq.read_table(tmp_path / "out" / "entries" / "t1-0.parquet")
    assert t.schema == ENTRIES_SCHEMA
    assert t["rel_path"].to_pylist() == [A] * 16
    assert t["line_no"].to_pylist() == list(range(1, 17))


def test_a_vanished_ledger_leaves_its_task_part_to_the_others(small_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "entries").mkdir(parents=True)
    items = [
        scan_plan._Item(rel, "session_ledger", "agents/vak", Path(rel).stem, 1, "full")
        for rel in (A, "agents/vak/sessions/2599eb06cf360587/gone.jsonl", B)
    ]
    results = scan_worker._run_task(str(small_home), str(out), 1, 0, items)
    by_rel = {r.rel_path: r for r in results}
    assert [f.code.value for f in by_rel[items[1].rel_path].findings] == ["unreadable_file"]
    assert by_rel[items[1].rel_path].part is None
    assert by_rel[A].part == by_rel[B].part == "entries/t1-0.parquet"
    assert (by_rel[A].rows, by_rel[B].rows) == (16, 11)
    assert rows_by_file(out / "entries" / "t1-0.parquet") == {A: 16, B: 11}
    fields = [r.fields for r in results if r.fields is not None]
    assert len(fields) == 1 and set(fields[0]["rel_path"].to_pylist()) == {A, B}


def test_parts_left_by_an_interrupted_scan_are_swept(small_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    scan_home(small_home, out=out, jobs=1)
    # a scan that wrote its parts but died before its manifest: the same scan run in a copy, its
    # parts copied back without the manifest
    _append(small_home)
    crashed = tmp_path / "crashed"
    shutil.copytree(out, crashed)
    scan_home(small_home, out=crashed, jobs=1)
    left = sorted(set(entries_parts(crashed)) - set(entries_parts(out)))
    assert left
    for name in left:
        shutil.copy(crashed / "entries" / name, out / "entries" / name)
    (out / "entries" / "t7-3.parquet").write_bytes(b"not even Parquet")
    res = scan_home(small_home, out=out, jobs=1)
    assert "t7-3.parquet" not in entries_parts(out)
    referenced = {
        p for e in manifest_files(out).values() for p in e.get("parts", []) if p.startswith("entries/")
    }
    assert {f"entries/{n}" for n in entries_parts(out)} == referenced
    assert_entries_exact(res, small_home, [A, B])
    assert_derived_exactly(res, small_home, [A, B])


def test_unchanged_rescan_keeps_turns_and_sessions_without_reading(small_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = scan_home(small_home, out=out, jobs=1)
    mtimes = {n: (out / n / "all.parquet").stat().st_mtime_ns for n in ("turns", "sessions")}
    again = scan_home(small_home, out=out, jobs=1)
    assert again.stats.bytes_read == 0
    assert {n: (out / n / "all.parquet").stat().st_mtime_ns for n in ("turns", "sessions")} == mtimes
    assert again.row_counts == first.row_counts
    assert_derived_exactly(again, small_home, [A, B])
    # a change to the cost log only: the ledgers' turns and sessions are still not derived again
    with open(small_home / "agents/vak/cost-log.jsonl", "ab") as f:
        f.write((small_home / "agents/vak/cost-log.jsonl").read_bytes())
    third = scan_home(small_home, out=out, jobs=1)
    assert third.stats.files_full == 1 and third.stats.files_unchanged == 2
    assert {n: (out / n / "all.parquet").stat().st_mtime_ns for n in ("turns", "sessions")} == mtimes
    assert_derived_exactly(third, small_home, [A, B])


def test_other_ledgers_turns_are_kept_when_one_changes(small_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    scan_home(small_home, out=out, jobs=1)
    _append(small_home)
    res = scan_home(small_home, out=out, jobs=1)
    assert_derived_exactly(res, small_home, [A, B])
    turns = res.table("turns")
    assert pc.sum(pc.equal(turns["rel_path"], A)).as_py() == 5
    assert pc.sum(pc.equal(turns["rel_path"], B)).as_py() == 2


def test_many_ledgers_over_many_parts_stay_exact_through_rounds_of_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # small tasks (a few ledgers each) and small DuckDB queries, so that appends link parts across
    # tasks and the linked sets are cut by ledger
    monkeypatch.setattr(scan_plan, "MIN_LEDGER_TASK_BYTES", 1)
    monkeypatch.setattr(scan_plan, "LEDGER_TASK_BYTES", 20_000)
    monkeypatch.setattr(scan_derive, "DERIVE_GROUP_ROWS", 25)
    home = tmp_path / "home"
    ws = "agents/vak/sessions/2599eb06cf360587"
    rels = [f"{ws}/s{i:02d}.jsonl" for i in range(12)]
    for i, rel in enumerate(rels):
        make_ledger(home / rel, 1 + i % 4, Path(rel).stem)
    out = tmp_path / "out"
    res = scan_home(home, out=out, jobs=1)
    assert len(entries_parts(out)) >= 4
    assert_derived_exactly(res, home, rels)

    def append(rel: str, turns: int) -> None:
        log = SessionLog.open(home / rel, clock=fixed_clock(), fsync=False)
        try:
            write_turns(log, turns, start=200)
        finally:
            log.close()

    for round_no in range(2):
        for rel in rels[round_no::3]:
            append(rel, 1 + round_no)
        victim = rels.pop(5 + round_no)
        (home / victim).unlink()
        other = make_ledger(tmp_path / f"other{round_no}" / "s.jsonl", 2, Path(rels[1]).stem)
        os.replace(other, home / rels[1])
        res = scan_home(home, out=out, jobs=1)
        assert res.stats.files_appended >= 3
        assert_entries_exact(res, home, rels)
        assert_derived_exactly(res, home, rels)
        referenced = {p for e in manifest_files(out).values() for p in e.get("parts", [])}
        assert {f"entries/{n}" for n in entries_parts(out)} == {
            p for p in referenced if p.startswith("entries/")
        }
        for rel, e in manifest_files(out).items():
            if rel in rels:
                held = sum(rows_by_file(out / p).get(rel, 0) for p in e["parts"])
                assert held == e["part_rows"] == lines_of(home, rel)


def test_a_torn_last_line_then_completed_in_a_shared_part(small_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    scan_home(small_home, out=out, jobs=1)
    (shared,) = entries_parts(out)
    # the bytes of A's next turn, written by the ledger writer on a copy
    copy = tmp_path / "copy" / "s1.jsonl"
    copy.parent.mkdir()
    shutil.copy(small_home / A, copy)
    log = SessionLog.open(copy, clock=fixed_clock(), fsync=False)
    try:
        write_turns(log, 1, start=7)
    finally:
        log.close()
    extra = copy.read_bytes()[(small_home / A).stat().st_size :]
    with open(small_home / A, "ab") as f:
        f.write(extra[:40])  # a write cut short
    res = scan_home(small_home, out=out, jobs=1)
    assert res.findings_by_code().get("torn_last_line") == 1
    rows = res.table("entries").filter(pc.equal(res.table("entries")["rel_path"], A))
    assert rows.num_rows == 17 and sum(rows["size_bytes"].to_pylist()) == (small_home / A).stat().st_size
    with open(small_home / A, "ab") as f:
        f.write(extra[40:])  # the line completed, and the turn after it
    res = scan_home(small_home, out=out, jobs=1)
    assert "torn_last_line" not in res.findings_by_code()
    assert rows_by_file(out / "entries" / shared) == {B: 11}  # A's rows went, B's stayed
    assert_entries_exact(res, small_home, [A, B])
    assert_derived_exactly(res, small_home, [A, B])
