"""The metric registry: one ``.sql`` file per metric in ``queries/``, run by DuckDB over a scan.

Each query file starts with ``-- key: value`` header lines, then one SELECT (CTEs allowed)::

    -- title: Ledger bytes by entry kind
    -- measured: sum of ledger line sizes (bytes incl. LF) per envelope kind, from the scan's entries
    -- order: 20

``title`` and ``measured`` are required; ``measured`` is the provenance line the report prints
next to the figure. A metric that is a model rather than a measurement says ``estimate: <method>``.
Adding a metric is adding one file. Query results are small (aggregates); the tables they read are
never loaded into Python.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from functools import cache
from importlib import resources
from typing import Any

import duckdb

from vakaudit.errors import UsageError

_HEADER = re.compile(r"^--\s*([a-z_]+)\s*:\s*(.*?)\s*$")


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One metric: its name (the file stem), header fields and SQL text."""

    name: str
    title: str
    measured: str
    sql: str
    order: int = 100
    estimate: str | None = None  # the method, when the metric is an estimate


@dataclass(frozen=True, slots=True)
class MetricResult:
    """The rows of one metric, JSON-ready, with their provenance."""

    name: str
    title: str
    measured: str
    rows: list[dict[str, Any]]
    estimate: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name,
            "title": self.title,
            "measured": self.measured,
            "rows": self.rows,
        }
        if self.estimate:
            d["estimate"] = self.estimate
        return d

    def one(self) -> dict[str, Any]:
        """The single row of a one-row metric."""
        if len(self.rows) != 1:
            raise ValueError(f"metric {self.name} has {len(self.rows)} rows, not one")
        return self.rows[0]


def _parse(name: str, text: str) -> MetricSpec:
    header: dict[str, str] = {}
    for line in text.splitlines():
        m = _HEADER.match(line)
        if not m:
            if line.strip() and not line.lstrip().startswith("--"):
                break
            continue
        header[m.group(1)] = m.group(2)
    missing = {"title", "measured"} - header.keys()
    if missing:
        raise ValueError(f"queries/{name}.sql lacks header line(s): {', '.join(sorted(missing))}")
    return MetricSpec(
        name=name,
        title=header["title"],
        measured=header["measured"],
        sql=text,
        order=int(header.get("order", "100")),
        estimate=header.get("estimate"),
    )


@cache
def load_metrics() -> tuple[MetricSpec, ...]:
    """Every metric in ``queries/``, in report order (``order`` header, then name)."""
    specs = []
    for entry in resources.files("vakaudit.analyze").joinpath("queries").iterdir():
        if entry.name.endswith(".sql"):
            specs.append(_parse(entry.name[:-4], entry.read_text(encoding="utf-8")))
    return tuple(sorted(specs, key=lambda s: (s.order, s.name)))


def metric_names() -> list[str]:
    return [s.name for s in load_metrics()]


def get_metric(name: str) -> MetricSpec:
    for spec in load_metrics():
        if spec.name == name:
            return spec
    raise UsageError(f"unknown metric {name!r}; known: {', '.join(metric_names())}")


def clean_value(value: Any, digits: int = 6) -> Any:
    """Make a DuckDB value JSON-ready and deterministic: floats rounded to ``digits`` significant
    digits, decimals to float, dates to ISO strings, NaN to None."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, Decimal):
        value = float(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        if value == 0:
            return 0.0
        return float(f"{value:.{digits}g}")
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [clean_value(v, digits) for v in value]
    if isinstance(value, dict):
        return {str(k): clean_value(v, digits) for k, v in value.items()}
    return str(value)


def query_rows(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> list[dict[str, Any]]:
    """Run ``sql`` and return its (small) result as JSON-ready dicts."""
    cur = con.execute(sql, params) if params is not None else con.execute(sql)
    cols = [d[0] for d in cur.description]
    return [{c: clean_value(v) for c, v in zip(cols, row, strict=True)} for row in cur.fetchall()]


def run_metric(con: duckdb.DuckDBPyConnection, name: str) -> MetricResult:
    """Run one metric's query over an open scan (see :func:`vakaudit.analyze.open_scan`)."""
    spec = get_metric(name)
    return MetricResult(
        name=spec.name,
        title=spec.title,
        measured=spec.measured,
        rows=query_rows(con, spec.sql),
        estimate=spec.estimate,
    )


__all__ = [
    "MetricResult",
    "MetricSpec",
    "clean_value",
    "get_metric",
    "load_metrics",
    "metric_names",
    "query_rows",
    "run_metric",
]
