"""One fleet task: scan one home with the ordinary :func:`scan_home` and publish it into the lake.

Runs on a Dask worker (or anywhere): the home's previous scan (``_state/<home_id>/``) is copied into a
private temporary folder and scanned into again, so a rescan only reads what changed, exactly as
``vakaudit scan`` does with its ``--out``. Then every table is written aside into the lake's staging
area and swapped into its ``<table>/home_id=<id>/`` partition (:func:`vakaudit.fleet.lake.replace_dir`),
the ``homes`` row last, then the new scan state. Each step replaces whole folders, so running the
task again (Dask retries a task whose worker was lost) leaves the same lake: nothing duplicated,
nothing lost. The home is only read.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from vakaudit.errors import VakauditError
from vakaudit.fleet import lake as L
from vakaudit.fleet.homeid import home_id


def scan_kwargs(keys: str | None, home: Path | None = None) -> dict[str, Any]:
    """What a fleet task passes to ``scan_home`` besides the home and ``out``: the key ring ``--keys``
    names (a key file, read on the worker; ``home``: the home's own credential store), for 7.0 homes."""
    if keys is None:
        return {}
    from vakaudit.storage import KeyRing

    return {"keys": KeyRing.from_home(home) if keys == "home" else KeyRing.from_file(keys)}


def scan_into_lake(home: str, lake: str, run_id: str, keys: str | None = None, full: bool = False) -> dict[str, Any]:
    """Scan ``home`` and replace its partitions in ``lake``; returns the outcome (JSON-ready).

    A home that cannot be scanned (missing, unreadable, not a home) gives ``ok: False`` with its
    error instead of raising, so a Dask retry is spent only on a lost worker.
    """
    from vakaudit.scan import resolve_home

    lake_p = Path(lake)
    outcome: dict[str, Any] = {"home": home, "home_id": None, "ok": False, "error": None}
    try:
        home_p = resolve_home(home)
        hid = home_id(home_p)
        outcome["home_id"] = hid
        with tempfile.TemporaryDirectory(prefix="vakaudit-fleet-") as tmp:
            outcome.update(_scan_and_publish(home_p, hid, lake_p, Path(tmp), run_id, keys, full))
        outcome["ok"] = True
    except (VakauditError, OSError) as exc:
        outcome["error"] = f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # noqa: BLE001 - one home's failure must not stop the fleet
        last = traceback.extract_tb(exc.__traceback__)[-1]
        outcome["error"] = f"internal error {type(exc).__name__}: {exc} ({Path(last.filename).name}:{last.lineno})"
    return outcome


def _scan_and_publish(
    home: Path, hid: str, lake: Path, tmp: Path, run_id: str, keys: str | None, full: bool
) -> dict[str, Any]:
    from vakaudit.scan import scan_home

    scan_dir = tmp / "scan"
    state = L.state_dir(lake, hid)
    if (state / "manifest.json").is_file():
        shutil.copytree(state, scan_dir)
    t0 = time.perf_counter()
    result = scan_home(home, out=scan_dir, jobs=1, full=full, **scan_kwargs(keys, home))
    duration_ms = (time.perf_counter() - t0) * 1000.0
    for name in sorted(set(_declared()) | set(result.row_counts)):
        target = L.partition_dir(lake, name, hid)
        if result.row_counts.get(name, 0) > 0:
            staged = L.staging_dir(lake, run_id)
            _write_table(scan_dir / name, staged / L.PART_FILE, _declared().get(name))
            L.replace_dir(staged, target)
        else:
            L.remove_dir(lake, target, run_id)
    stats = result.stats
    row = {
        "home_path": str(home),
        "layout": result.layout,
        "scanned_at": result.scanned_at,
        "tool_version": result.tool_version,
        "home_bytes": int(stats.home_bytes),
        "file_count": int(stats.files),
        "bytes_read": int(stats.bytes_read),
        "scan_duration_ms": duration_ms,
    }
    staged = L.staging_dir(lake, run_id)
    pq.write_table(pa.Table.from_pylist([row], schema=L.HOMES_SCHEMA), staged / L.PART_FILE)
    L.replace_dir(staged, L.partition_dir(lake, L.HOMES_TABLE, hid))
    staged = L.staging_dir(lake, run_id)
    os.rmdir(staged)
    shutil.copytree(scan_dir, staged)
    L.replace_dir(staged, state)
    return {
        "rows": {k: v for k, v in result.row_counts.items() if v},
        "findings": result.findings_by_code(),
        "scan_duration_ms": round(duration_ms, 1),
        "bytes_read": int(stats.bytes_read),
        "home_bytes": int(stats.home_bytes),
    }


def _declared() -> dict[str, pa.Schema]:
    from vakaudit.scan import all_tables

    return {name: spec[0] for name, spec in all_tables().items()}


def _write_table(folder: Path, dest: Path, schema: pa.Schema | None) -> None:
    """The scan's parts of one table as one Parquet file, in the table's declared schema."""
    parts = sorted(folder.glob("*.parquet"))
    if schema is None:
        schema = pq.read_schema(parts[0])
    with pq.ParquetWriter(dest, schema, compression="zstd") as writer:
        for part in parts:
            t = pq.read_table(part)
            if t.num_rows:
                writer.write_table(t.select(schema.names).cast(schema) if t.schema != schema else t)
