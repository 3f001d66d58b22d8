"""Many homes: a fleet scanned on Dask distributed into one Hive-partitioned Parquet lake.

Public API::

    fleet_scan(homes, lake, *, scheduler=None, workers=None, keys=None, full=False) -> FleetScanResult
    open_lake(lake, home_id=None) -> duckdb connection: every scan view plus home_id
    analyze_fleet(lake, *, gb=100.0) -> FleetAnalysis
    build_fleet_report(lake, *, clock=None) -> str (one self-contained HTML page)
    home_id(home) -> str; is_lake(path) -> bool

Modules: ``homeid`` (the id), ``lake`` (layout, atomic partition replacement, output paths),
``task`` (one home's scan and publish, run on a worker), ``cluster`` (Dask), ``views`` (DuckDB),
``analysis`` (fleet figures), ``report`` (the fleet page). Nothing here writes into a home.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "FleetScanResult": "vakaudit.fleet.cluster",
    "fleet_scan": "vakaudit.fleet.cluster",
    "open_lake": "vakaudit.fleet.views",
    "FleetAnalysis": "vakaudit.fleet.analysis",
    "analyze_fleet": "vakaudit.fleet.analysis",
    "build_fleet_report": "vakaudit.fleet.report",
    "home_id": "vakaudit.fleet.homeid",
    "is_lake": "vakaudit.fleet.lake",
    "check_output_path": "vakaudit.fleet.lake",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'vakaudit.fleet' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
