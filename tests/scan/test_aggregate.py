"""``turns`` and ``sessions`` aggregated in Python (vakaudit.scan.aggregate) are the rows DuckDB's
queries (``turns.sql``, ``sessions.sql``, their definition) derive from the same ``entries`` parts:
on sample homes, on rows made to reach each rule of the queries, on random rows, and through whole
scans. A few values are also checked against what the rules give by hand."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from vakaudit.artifacts.session_ledger import ENTRIES_SCHEMA
from vakaudit.scan import derive, scan_home
from vakaudit.scan.aggregate import aggregate

REPO = Path(__file__).resolve().parents[2]
T0 = 1_780_000_000_000_000  # µs since the epoch


def _by_duckdb(out: Path, parts: list[str], only: list[str] | None = None) -> tuple[pa.Table, pa.Table]:
    """The queries' rows of ``parts`` (paths relative to ``out``), through the DuckDB path."""
    import duckdb

    con = duckdb.connect(config={"threads": 1})
    try:
        files = ", ".join(f"'{out / p}'" for p in parts)
        view = f"CREATE OR REPLACE VIEW entries AS SELECT * FROM read_parquet([{files}])"
        if only is not None:
            view += " WHERE rel_path IN (" + ", ".join(f"'{r}'" for r in only) + ")"
        con.execute(view)
        turns = [
            derive._as_schema(con.sql(q, params=p or None).to_arrow_table(), derive.TURNS_SCHEMA)
            for q, p in derive._turn_slices(con)
        ]
        sessions = derive._as_schema(con.sql(derive._SESSIONS_SQL).to_arrow_table(), derive.SESSIONS_SCHEMA)
    finally:
        con.close()
    return pa.concat_tables(turns), sessions


def _same(out: Path, parts: list[str], only: list[str] | None = None) -> tuple[pa.Table, pa.Table]:
    here = aggregate([out / p for p in parts], only)
    there = _by_duckdb(out, parts, only)
    for name, a, b in zip(("turns", "sessions"), here, there, strict=True):
        assert a.schema == b.schema, name
        assert a.to_pylist() == b.to_pylist(), name
    return here


def _write(out: Path, name: str, rows: list[dict]) -> str:
    cols = {f.name: [r.get(f.name) for r in rows] for f in ENTRIES_SCHEMA}
    arrays = []
    for f in ENTRIES_SCHEMA:
        if pa.types.is_timestamp(f.type):
            arrays.append(pa.array(cols[f.name], pa.int64()).view(f.type))
        else:
            arrays.append(pa.array(cols[f.name], f.type))
    (out / "entries").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_arrays(arrays, schema=ENTRIES_SCHEMA), out / "entries" / name)
    return f"entries/{name}"


def _row(rel: str, line: int, **kw: object) -> dict:
    return {"rel_path": rel, "line_no": line, "offset_bytes": 100 * line, "size_bytes": 100 + line, **kw}


SAMPLES = ["tiny", *sorted(p.parent.name for p in (REPO / "sample_homes" / "broken").glob("*/home"))]


@pytest.mark.parametrize("sample", SAMPLES)
def test_sample_homes_aggregate_as_the_queries_derive(sample: str, tmp_path: Path) -> None:
    home = REPO / "sample_homes" / ("tiny" if sample == "tiny" else f"broken/{sample}/home")
    res = scan_home(home, out=tmp_path / "s", jobs=1)
    parts = sorted(str(p.relative_to(tmp_path / "s")) for p in (tmp_path / "s" / "entries").glob("*.parquet"))
    if not parts:  # (a home of empty ledgers only)
        assert res.row_counts["sessions"] == res.row_counts["turns"] == 0
        return
    turns, sessions = _same(tmp_path / "s", parts)
    assert sessions.num_rows == res.row_counts["sessions"] > 0
    assert turns.num_rows == res.row_counts["turns"]


def test_each_rule_of_the_queries(tmp_path: Path) -> None:
    a, b, c = "agents/vak/sessions/w/a.jsonl", "agents/vak/sessions/w/b.jsonl", "agents/vak/sessions/w/é.jsonl"
    rows = [
        # a: two headers (the first without an app_version), two turns
        _row(a, 1, kind="header", provider="anthropic", model=None, ts_at=T0, chain_status="ok", chain_ok=True),
        _row(a, 2, kind="header", app_version="6.1.0", provider="openai", model="m-head", ts_at=T0 + 1,
             session_id="sa", agent_id="vak", chain_status="broken", chain_ok=False),
        _row(a, 3, kind="message", role="user", is_directive=True, turn_no=1, id="e3", ts_at=T0 + 10,
             session_id="sa", agent_id="vak", workspace_key="w", chain_status="ok", chain_ok=True),
        _row(a, 4, kind="message", role="assistant", turn_no=1, model="m1", input_tokens=5, output_tokens=7,
             tool_use_count=2, ts_at=T0 + 20, chain_ok=None, chain_status="unchained"),
        _row(a, 5, kind="message", role="assistant", turn_no=1, model=None, input_tokens=None,
             cache_read_input_tokens=3, ts_at=None, chain_status="unparseable", chain_ok=False),
        _row(a, 6, kind="turn_capabilities_bound", turn_no=1, control="bind", ts_at=T0 + 5),
        _row(a, 7, kind="receipt", turn_no=2, is_directive=False, ts_at=T0 + 30, tool_result_count=1,
             tool_result_bytes=40),
        _row(a, 8, kind="message", role="user", turn_no=2, is_directive=True, id="e8", ts_at=T0 + 31),
        _row(a, 9, kind="message", role="user", turn_no=2, is_directive=True, id="e10", ts_at=T0 + 29),
        _row(a, 10, kind="activity", turn_no=None, ts_at=T0 + 99),
        # b: no timestamps, no tokens, no header
        _row(b, 1, kind="message", role="assistant", turn_no=3, model="only"),
        # é: sorts after b (code points)
        _row(c, 1, kind="header", app_version="3.4.9", session_id="se"),
    ]
    out = tmp_path / "o"
    part = _write(out, "p.parquet", rows)
    turns, sessions = _same(out, [part])
    # by hand, from the rules
    t = {(r["rel_path"], r["turn_no"]): r for r in turns.to_pylist()}
    assert list(t) == [(a, 1), (a, 2), (b, 3)]
    assert t[(a, 1)]["model"] == "m1"  # the last assistant row with a model
    assert t[(a, 1)]["turn_id"] == "e3" and t[(a, 2)]["turn_id"] == "e8"  # max of the directives' ids
    assert t[(a, 2)]["started_at"] == datetime.fromtimestamp((T0 + 29) / 1e6, UTC)  # min over directives
    assert t[(a, 1)]["entry_count"] == 4 and t[(a, 1)]["binding_count"] == 1 and t[(a, 1)]["binding_bytes"] == 106
    assert t[(a, 1)]["input_tokens"] == 5 and t[(a, 1)]["cache_read_input_tokens"] == 3
    assert t[(a, 1)]["chain_broken_count"] == 1 and t[(a, 1)]["control_count"] == 1
    assert t[(b, 3)]["started_at"] is None and t[(b, 3)]["input_tokens"] == 0 and t[(b, 3)]["session_id"] is None
    s = {r["rel_path"]: r for r in sessions.to_pylist()}
    assert list(s) == [a, b, c]
    assert s[a]["app_version"] == "6.1.0" and s[a]["provider"] == "anthropic" and s[a]["model"] == "m-head"
    assert s[a]["session_id"] == "sa" and s[a]["workspace_key"] == "w"
    assert s[a]["turn_count"] == 2 and s[a]["entry_count"] == 10
    assert (s[a]["chain_broken_count"], s[a]["unparseable_count"], s[a]["unchained_count"]) == (1, 1, 1)
    assert s[a]["chain_ok"] is False and s[b]["chain_ok"] is True
    assert s[a]["last_at"] == datetime.fromtimestamp((T0 + 99) / 1e6, UTC)
    assert s[b]["turn_count"] == 0 and s[b]["first_at"] is None


def test_rows_of_other_ledgers_in_the_parts_are_left_out(tmp_path: Path) -> None:
    out = tmp_path / "o"
    rows = [_row(rel, i, kind="message", role="user", is_directive=True, turn_no=i, id=f"{rel}{i}", ts_at=T0 + i)
            for rel in ("x", "y", "z") for i in (1, 2)]  # fmt: skip
    p1 = _write(out, "p1.parquet", rows[:3])
    p2 = _write(out, "p2.parquet", rows[3:])
    turns, sessions = _same(out, [p1, p2], only=["x", "z"])
    assert [r["rel_path"] for r in sessions.to_pylist()] == ["x", "z"]
    assert turns.num_rows == 4


def _random_rows(rng: random.Random, n: int) -> list[dict]:
    def maybe(value: object, p: float = 0.3) -> object:
        return None if rng.random() < p else value

    rels = [f"agents/{a}/sessions/w/{s}.jsonl" for a in ("vak", "ops") for s in ("s1", "s2", "ß3")]
    rows = []
    lines = dict.fromkeys(rels, 0)
    for _ in range(n):
        rel = rng.choice(rels)
        lines[rel] += 1
        rows.append(_row(
            rel, lines[rel],
            session_id=maybe(rng.choice(["s-a", "s-b"])), agent_id=maybe("vak"), workspace_key=maybe("w"),
            kind=maybe(rng.choice(["header", "message", "receipt", "activity", "turn_capabilities_bound"])),
            # (ids beyond ASCII: turn_id is the greatest, in code points as in UTF-8 bytes)
            id=maybe(rng.choice([f"e{rng.randrange(1000)}", "é", "Ω9", "\U0001f600x", "Z", "\uffffz"])),
            ts_at=maybe(T0 + rng.randrange(10**9)),
            chain_ok=maybe(rng.random() < 0.8), chain_status=maybe(rng.choice(["ok", "broken", "unparseable", "unchained"])),
            turn_no=maybe(rng.randrange(1, 6)), role=maybe(rng.choice(["user", "assistant"])),
            control=maybe("c", 0.8), is_directive=maybe(rng.random() < 0.3), model=maybe(rng.choice(["m1", "m2"])),
            provider=maybe("p"), app_version=maybe(rng.choice(["6.0.0", "6.1.0"])),
            input_tokens=maybe(rng.randrange(100)), output_tokens=maybe(rng.randrange(100)),
            cache_read_input_tokens=maybe(rng.randrange(100), 0.7), cache_creation_input_tokens=maybe(1, 0.9),
            tool_use_count=maybe(rng.randrange(3)), tool_result_count=maybe(rng.randrange(3)),
            tool_result_bytes=maybe(rng.randrange(10**6)),
        ))  # fmt: skip
    return rows


@pytest.mark.parametrize("seed", range(6))
def test_random_rows_aggregate_as_the_queries_derive(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vakaudit.scan import aggregate as agg

    monkeypatch.setattr(agg, "BATCH_ROWS", 97)  # a turn's rows across batches, as in a larger part
    rng = random.Random(seed)
    rows = _random_rows(rng, 1_500)
    out = tmp_path / "o"
    cut = rng.randrange(len(rows))  # one ledger's rows may lie in both parts
    parts = [_write(out, "p1.parquet", rows[:cut]), _write(out, "p2.parquet", rows[cut:])]
    turns, sessions = _same(out, parts)
    assert turns.num_rows > 0 and sessions.num_rows == 6


def test_a_small_home_is_scanned_without_duckdb_and_a_large_group_with_it(tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "import vakaudit.scan.derive as derive\n"
        "from vakaudit.scan import scan_home\n"
        "derive.HERE_ROWS = int(sys.argv[3])\n"
        "res = scan_home(sys.argv[1], out=sys.argv[2], jobs=1)\n"
        "print(json.dumps({'duckdb': 'duckdb' in sys.modules, 'turns': res.row_counts['turns']}))\n"
    )
    home = REPO / "sample_homes" / "tiny"
    got = {}
    for name, rows in (("here", 24_576), ("duckdb", 0)):
        out = subprocess.run([sys.executable, "-c", code, str(home), str(tmp_path / name), str(rows)],
                             capture_output=True, text=True, check=True)  # fmt: skip
        got[name] = json.loads(out.stdout.splitlines()[-1])
    assert got["here"]["duckdb"] is False and got["duckdb"]["duckdb"] is True
    assert got["here"]["turns"] == got["duckdb"]["turns"] > 0
    for name in ("turns", "sessions"):
        here = pq.read_table(tmp_path / "here" / name / "all.parquet")
        there = pq.read_table(tmp_path / "duckdb" / name / "all.parquet")
        assert here.schema == there.schema and here.to_pylist() == there.to_pylist(), name


def _frames_both_ways(out: Path, part: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list, list]:
    """``derive_frame_ledgers`` of ``part`` in Python and through DuckDB's queries: the same tables
    (asserted), as rows."""
    got = {}
    for way, rows in (("here", derive.HERE_ROWS), ("duckdb", -1)):
        monkeypatch.setattr(derive, "HERE_ROWS", rows)
        for name in ("turns", "sessions"):
            (out / name / "all.parquet").unlink(missing_ok=True)
        counts = derive.derive_frame_ledgers(out, part)
        got[way] = [pq.read_table(out / name / "all.parquet") for name in ("turns", "sessions")]
        assert counts == {"turns": got[way][0].num_rows, "sessions": got[way][1].num_rows}
    for a, b in zip(got["here"], got["duckdb"], strict=True):
        assert a.schema == b.schema and a.to_pylist() == b.to_pylist()
    return got["here"][0].to_pylist(), got["here"][1].to_pylist()


@pytest.mark.parametrize("keyed", [True, False])
def test_the_7_0_sample_homes_frames_aggregate_as_the_queries_derive(
    keyed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vakaudit.storage import KeyRing

    keys = KeyRing.from_file(REPO / "sample_homes" / "v7-keys.json") if keyed else None
    res = scan_home(REPO / "sample_homes" / "v7", out=tmp_path / "s", jobs=1, keys=keys)
    part = tmp_path / "s" / "entries" / "frames7.parquet"
    turns, sessions = _frames_both_ways(tmp_path / "s", part, monkeypatch)
    assert len(sessions) == res.row_counts["sessions"] == 2 and len(turns) == res.row_counts["turns"]
    assert (len(turns) > 0) is keyed  # a keyless scan has no turns


def test_a_7_0_turn_across_a_segment_rotation_takes_the_model_of_its_last_frame(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a 7.0 frame's line_no counts within its segment file: a conversation's frames are ordered by
    # (segment, line_no), so the turn's last assistant frame is segment 2's line 1, not segment 1's line 3
    conv = "agents/vak/sessions/spc_x/c1"
    s1, s2 = f"{conv}/seg-00000001.log", f"{conv}/seg-00000002.log"
    rows = [
        _row(s1, 1, segment=1, kind="header", app_version="7.0.0", ts_at=T0),
        _row(s1, 2, segment=1, kind="message", role="user", is_directive=True, turn_no=1, id="d1", ts_at=T0 + 1),
        _row(s1, 3, segment=1, kind="message", role="assistant", turn_no=1, model="m-old", ts_at=T0 + 2),
        _row(s2, 1, segment=2, kind="message", role="assistant", turn_no=1, model="m-new", ts_at=T0 + 3),
        _row(s2, 2, segment=2, kind="message", role="user", is_directive=True, turn_no=2, id="d2", ts_at=T0 + 4),
    ]
    out = tmp_path / "o"
    part = out / "entries" / "frames7.parquet"
    _write(out, part.name, rows)
    turns, (session,) = _frames_both_ways(out, part, monkeypatch)
    assert [(t["rel_path"], t["turn_no"], t["model"], t["entry_count"]) for t in turns] == [
        (conv, 1, "m-new", 3),
        (conv, 2, None, 1),
    ]
    assert (session["rel_path"], session["app_version"], session["entry_count"]) == (conv, "7.0.0", 5)
