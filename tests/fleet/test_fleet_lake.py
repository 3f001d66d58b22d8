"""The lake on disk: layout and schema, the same answers through DuckDB and polars, home_id, atomic
replacement, the views over a lake, fleet analyze and report, and the CLI's errors."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from tests.fleet.conftest import SAMPLE_HOMES
from vakaudit.cli import app
from vakaudit.fleet import lake as L
from vakaudit.fleet.task import scan_into_lake


@pytest.fixture(scope="session")
def lake(fleet_homes, tmp_path_factory) -> Path:
    """A lake written by the fleet task itself (what each Dask worker runs), home after home."""
    from vakaudit import __version__

    root = tmp_path_factory.mktemp("lake") / "lake"
    L.init_lake(root, __version__)
    run = uuid.uuid4().hex
    for home in fleet_homes:
        outcome = scan_into_lake(str(home), str(root), run)
        assert outcome["ok"], outcome
    L.clear_staging(root, run)
    return root


def test_lake_read_with_duckdb_and_with_polars_gives_the_same_answers(lake: Path) -> None:
    for table in ("files", "entries", "turns", "findings", "homes"):
        glob = f"{lake}/{table}/*/*.parquet"
        measure = "size_bytes" if table in ("files", "entries", "turns") else None
        sql = f"SELECT home_id, count(*) AS n{f', sum({measure}) AS s' if measure else ''} FROM read_parquet('{glob}', hive_partitioning = true) GROUP BY 1 ORDER BY 1"
        by_duckdb = [tuple(int(v) if not isinstance(v, str) else v for v in r) for r in duckdb.sql(sql).fetchall()]
        frame = pl.scan_parquet(glob, hive_partitioning=True, hive_schema={"home_id": pl.String})
        aggs = [pl.len().alias("n")] + ([pl.col(measure).sum().alias("s")] if measure else [])
        by_polars = [tuple(r) for r in frame.group_by("home_id").agg(aggs).sort("home_id").collect().iter_rows()]
        assert by_duckdb == by_polars, table
        assert len(by_duckdb) >= 2


def test_lake_schema_keeps_partition_columns_and_types_stable(lake: Path, fleet_homes) -> None:
    from vakaudit.scan import all_tables

    declared = {name: spec[0] for name, spec in all_tables().items()}
    part = re.compile(r"^home_id=[0-9a-f]{16}$")
    for table_dir in sorted(p for p in lake.iterdir() if p.is_dir() and not p.name.startswith("_")):
        assert table_dir.name in declared or table_dir.name == "homes"
        for pdir in table_dir.iterdir():
            assert part.match(pdir.name), pdir
            assert [f.name for f in pdir.iterdir()] == ["part-0.parquet"]
            schema = pl.read_parquet_schema(pdir / "part-0.parquet")
            assert "home_id" not in schema  # only in the path: readers add it as the partition column
    assert len(list((lake / "homes").iterdir())) == len(fleet_homes)
    # the homes table, column for column
    homes = duckdb.sql(
        f"DESCRIBE SELECT * FROM read_parquet('{lake}/homes/*/*.parquet', hive_partitioning = true, "
        "hive_types = {'home_id': VARCHAR})"
    ).fetchall()
    assert [(r[0], r[1]) for r in homes] == [
        ("home_path", "VARCHAR"),
        ("layout", "VARCHAR"),
        ("scanned_at", "VARCHAR"),
        ("tool_version", "VARCHAR"),
        ("home_bytes", "BIGINT"),
        ("file_count", "BIGINT"),
        ("bytes_read", "BIGINT"),
        ("scan_duration_ms", "DOUBLE"),
        ("home_id", "VARCHAR"),
    ]
    # a scan table in the lake has its declared columns, in order, then home_id
    import pyarrow.parquet as pq

    for name in ("entries", "files", "findings"):
        files = sorted((lake / name).glob("*/part-0.parquet"))
        for f in files:
            assert pq.read_schema(f).names == declared[name].names
            assert [fld.type for fld in pq.read_schema(f)] == [fld.type for fld in declared[name]]
    from vakaudit.fleet import open_lake

    con = open_lake(lake)
    cols = [r[0] for r in con.execute("DESCRIBE entries").fetchall()]
    assert cols == [*declared["entries"].names, "home_id"]
    assert con.execute("SELECT typeof(home_id) FROM turns LIMIT 1").fetchone() == ("VARCHAR",)


def test_home_id_is_sha256_of_path_and_installed_at(tmp_path: Path) -> None:
    from vakaudit.fleet import home_id

    tiny = (SAMPLE_HOMES / "tiny").resolve()
    # installed_at as written in the committed install.json
    text = f"vakaudit-home-id/1\n{tiny}\n2026-06-06T15:59:05.324795Z"
    assert home_id(tiny) == hashlib.sha256(text.encode()).hexdigest()[:16]
    bare = tmp_path / "bare"
    bare.mkdir()
    assert home_id(bare) == hashlib.sha256(f"vakaudit-home-id/1\n{bare.resolve()}\n".encode()).hexdigest()[:16]
    assert home_id(tmp_path / "." / "bare") == home_id(bare)


def test_replace_dir_twice_leaves_exactly_the_new_partition(tmp_path: Path) -> None:
    target = tmp_path / "t" / "home_id=x"
    for n in (1, 2, 2):
        staged = tmp_path / f"staged-{uuid.uuid4().hex}"
        staged.mkdir()
        (staged / "part-0.parquet").write_text(str(n))
        L.replace_dir(staged, target)
        assert not staged.exists()
        assert [p.name for p in target.iterdir()] == ["part-0.parquet"]
        assert (target / "part-0.parquet").read_text() == str(n)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("a")
    assert L.exchange(a, b)  # Linux, local file system: the atomic swap is there
    assert (b / "x").read_text() == "a" and not (a / "x").exists()


def test_sql_on_a_lake_gives_each_home_what_its_single_scan_gives(lake: Path, per_home_scans) -> None:
    result = CliRunner().invoke(
        app,
        ["sql", str(lake), "SELECT h.home_path, count(*) AS n FROM ledger_turn t JOIN homes h USING (home_id) "
         "GROUP BY 1 ORDER BY 1", "--json"],
    )
    assert result.exit_code == 0, result.output
    got = {r["home_path"]: r["n"] for r in json.loads(result.output)}
    # ledger_turn groups by home: one row per turn the scan derived for that home
    assert got == {h: c["turns"] for h, c in per_home_scans.items() if c.get("turns")}
    result = CliRunner().invoke(
        app, ["sql", str(lake), "SELECT home_id, kind, writes FROM artifact_writes ORDER BY 1, 2", "--json"]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    ledger = {r["home_id"]: r["writes"] for r in rows if r["kind"] == "session_ledger"}
    homes = duckdb.sql(f"SELECT home_id, home_path FROM read_parquet('{lake}/homes/*/*.parquet', hive_partitioning = true)").fetchall()
    paths = dict(homes)
    for hid, writes in ledger.items():
        # a ledger write is one parsed entry: the entries rows of that home with a kind
        n = duckdb.connect().execute(
            f"SELECT count(*) FROM read_parquet('{lake}/entries/home_id={hid}/*.parquet') WHERE kind IS NOT NULL"
        ).fetchone()[0]
        assert writes == n, paths[hid]


def test_fleet_analyze_gives_each_home_its_analyze_figures(lake: Path, fleet_homes, tmp_path: Path) -> None:
    from vakaudit.analyze import analyze
    from vakaudit.scan import scan_home

    result = CliRunner().invoke(app, ["fleet", "analyze", str(lake), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    by_path = {h["home_path"]: h for h in doc["homes"]}
    assert len(by_path) == len(fleet_homes)
    for i, home in enumerate([fleet_homes[0], fleet_homes[-1]]):  # tiny and a synthetic home
        single = analyze(scan_home(home, out=tmp_path / str(i), jobs=1)).headline
        got = by_path[str(home.resolve())]
        assert (got["turns"], got["bytes_per_turn"], got["barriers_per_turn"]) == (
            single["turns"], single["bytes_per_turn"], single["barriers_per_turn"]
        )
    ranked = [r["home_id"] for r in doc["rankings"]["bytes_per_turn"]]
    values = [r["bytes_per_turn"] for r in doc["rankings"]["bytes_per_turn"]]
    assert values == sorted(values, reverse=True) and len(ranked) == len(set(ranked))
    torn = by_path[str((SAMPLE_HOMES / "broken" / "torn_last_line" / "home").resolve())]
    assert torn["findings"].get("torn_last_line") == 1


def test_robust_z_score_hand_computed() -> None:
    from vakaudit.fleet.analysis import robust_z

    # median 3, absolute deviations 2 1 0 1 97, MAD 1
    z = robust_z([1.0, 2.0, 3.0, 4.0, 100.0])
    assert z == pytest.approx([-1.349, -0.6745, 0.0, 0.6745, 65.4265])
    # MAD 0 (most homes alike): mean absolute deviation (0+0+0+0+10)/5 = 2, times 1.253314
    z = robust_z([5.0, 5.0, 5.0, 5.0, 15.0])
    assert z[-1] == pytest.approx(10 / (1.253314 * 2))
    assert robust_z([1.0, 50.0]) == [None, None]


def test_fleet_report_is_offline_and_holds_no_message_text(lake: Path, tmp_path: Path) -> None:
    texts = []
    for ledger in sorted((SAMPLE_HOMES / "tiny" / "agents").glob("*/sessions/*/*.jsonl")):
        for line in ledger.read_text(encoding="utf-8").splitlines():
            msg = json.loads(line).get("message") or {}
            texts += [c["text"] for c in msg.get("content", []) if isinstance(c, dict) and len(c.get("text", "")) > 20]
    assert texts
    out = tmp_path / "fleet.html"
    result = CliRunner().invoke(app, ["fleet", "report", str(lake), "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    assert "Homes that need a look" in html and "<svg" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html)
    assert "<script" not in html
    for text in texts:
        assert text[:40] not in html


def test_lake_or_report_inside_a_home_is_refused(tmp_path: Path, lake: Path) -> None:
    tiny = SAMPLE_HOMES / "tiny"
    before = sorted(p.name for p in tiny.iterdir())
    result = CliRunner().invoke(app, ["fleet", "scan", str(tiny), "--lake", str(tiny / "lake")])
    assert result.exit_code == 2
    assert "inside the home" in result.output
    result = CliRunner().invoke(app, ["fleet", "report", str(lake), "-o", str(tiny / "fleet.html")])
    assert result.exit_code == 2
    assert sorted(p.name for p in tiny.iterdir()) == before


def test_keys_naming_no_file_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["fleet", "scan", str(SAMPLE_HOMES / "broken" / "clean" / "home"), "--lake", str(tmp_path / "l"), "--keys", "k"]
    )
    assert result.exit_code == 2
    assert "no such key file" in result.output


def test_a_fleet_task_with_keys_unlocks_a_7_0_home(tmp_path: Path) -> None:
    # the task every worker runs, with --keys: the 7.0 sample home's frames are opened
    import duckdb

    from vakaudit import __version__
    from vakaudit.fleet import lake as L
    from vakaudit.fleet.task import scan_into_lake

    lake = tmp_path / "lake"
    L.init_lake(lake, __version__)
    keys = str(SAMPLE_HOMES / "v7-keys.json")
    outcome = scan_into_lake(str(SAMPLE_HOMES / "v7"), str(lake), "run", keys=keys)
    assert outcome["ok"], outcome
    rows = duckdb.connect().execute(
        f"SELECT count(*), count(plain_bytes) FROM read_parquet('{lake}/entries/*/*.parquet', hive_partitioning=true)"
    ).fetchone()
    # make_v7.py writes 18 ledger frames (tests/scan/test_scan_store7.py counts them); all open with the key
    assert rows == (18, 18)


def test_a_failing_home_is_reported_and_the_rest_go_on(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    missing = tmp_path / "no-such-home"
    listing = tmp_path / "homes.txt"
    listing.write_text(f"# two homes\n{SAMPLE_HOMES / 'broken' / 'clean' / 'home'}\n\n{missing}\n")
    # the default local cluster: one worker process on 127.0.0.1
    result = CliRunner().invoke(app, ["fleet", "scan", "--from-file", str(listing), "--lake", str(lake), "--workers", "1"])
    assert result.exit_code == 1, result.output
    assert f"failed {missing}" in result.output
    assert "1 of 2 homes" in result.output
    assert len(list((lake / "homes").iterdir())) == 1
