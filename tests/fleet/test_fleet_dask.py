"""fleet scan on a real Dask cluster (scheduler and two workers, 127.0.0.1 only): the lake holds
exactly what one ordinary scan per home holds, also when a worker is killed mid-run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from tests.fleet.conftest import REPO, Cluster

PARTS = "*/*.parquet"


def _lake_counts(lake: Path) -> dict[str, dict[str, int]]:
    """Rows per home and table, read straight from the Parquet files with DuckDB (no vakaudit code)."""
    homes = {}
    con = duckdb.connect()
    for row in con.execute(
        f"SELECT home_id, home_path FROM read_parquet('{lake}/homes/{PARTS}', hive_partitioning = true)"
    ).fetchall():
        homes[row[0]] = row[1]
    counts: dict[str, dict[str, int]] = {path: {} for path in homes.values()}
    for table in sorted(p.name for p in lake.iterdir() if p.is_dir() and not p.name.startswith("_")):
        if table == "homes":
            continue
        for hid, n in con.execute(
            f"SELECT home_id, count(*) FROM read_parquet('{lake}/{table}/{PARTS}', hive_partitioning = true) GROUP BY 1"
        ).fetchall():
            counts[homes[hid]][table] = n
    return counts


def _fleet_scan(homes: list[Path], lake: Path, *args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen(
        [sys.executable, "-m", "vakaudit", "fleet", "scan", *map(str, homes), "--lake", str(lake), "--json", "-q", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_fleet_scan_lake_equals_the_sum_of_per_home_scans(cluster: Cluster, fleet_homes, per_home_scans, tmp_path):
    lake = tmp_path / "lake"
    proc = _fleet_scan(fleet_homes, lake, "--scheduler", cluster.address)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert summary["homes"] == summary["scanned"] == len(fleet_homes)
    assert _lake_counts(lake) == per_home_scans
    # every table summed over the lake equals the sum over the per-home scans
    lake_tables: dict[str, int] = {}
    for per in _lake_counts(lake).values():
        for t, n in per.items():
            lake_tables[t] = lake_tables.get(t, 0) + n
    expected: dict[str, int] = {}
    for per in per_home_scans.values():
        for t, n in per.items():
            expected[t] = expected.get(t, 0) + n
    assert lake_tables == expected
    assert not any((lake / "_staging").iterdir())

    # a second run is incremental per home: nothing read again, the same lake
    proc = _fleet_scan(fleet_homes, lake, "--scheduler", cluster.address)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert all(o["bytes_read"] == 0 for o in json.loads(out)["outcomes"])
    assert _lake_counts(lake) == per_home_scans


@pytest.mark.slow
def test_worker_killed_mid_run_neither_loses_nor_duplicates_a_partition(
    cluster: Cluster, fleet_homes, per_home_scans, tmp_path
):
    from distributed import Client

    lake = tmp_path / "lake"
    victim = next(iter(cluster.workers))
    proc = _fleet_scan(fleet_homes, lake, "--scheduler", cluster.address)
    killed_with = None
    with Client(cluster.address, timeout="30s") as watch:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            busy = watch.processing(workers=[victim]).get(victim, ())
            published = (lake / "homes").is_dir() and any((lake / "homes").iterdir())
            if busy and published:  # mid-run, with a task in flight on the victim
                os.kill(cluster.workers[victim].pid, signal.SIGKILL)
                killed_with = list(busy)
                break
            time.sleep(0.02)
    out, err = proc.communicate(timeout=180)
    assert killed_with, "the worker was not killed while it held a task"
    assert proc.returncode == 0, err
    assert json.loads(out)["scanned"] == len(fleet_homes)
    assert cluster.workers[victim].wait(timeout=10) == -signal.SIGKILL
    assert _lake_counts(lake) == per_home_scans
