"""The result of a scan: its tables as Arrow, as DuckDB views, and a summary.

A :class:`ScanResult` only points at the output directory; tables are read on demand, so holding
one costs nothing. :func:`open_scan` reopens a scan written earlier.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from vakaudit.scan.manifest import ScanStats, read_manifest
from vakaudit.scan.tables import all_tables

if TYPE_CHECKING:  # pragma: no cover
    import duckdb


@dataclass(frozen=True, slots=True)
class ScanResult:
    """Where a scan's tables are, and what the scan did."""

    home: Path
    out: Path
    layout: str  # g1 | g2 | g3
    scanned_at: str
    tool_version: str
    stats: ScanStats
    row_counts: dict[str, int]

    @property
    def table_names(self) -> tuple[str, ...]:
        return tuple(self.row_counts)

    def _parts(self, name: str) -> list[Path]:
        if name not in self.row_counts:
            raise KeyError(f"no table {name!r} in this scan; tables: {', '.join(self.row_counts)}")
        return sorted((self.out / name).glob("*.parquet"))

    def table(self, name: str) -> pa.Table:
        """One table, read whole from its Parquet folder (use :meth:`duckdb` for big ones)."""
        schema = _schema(name)
        parts = self._parts(name)
        tables = [pq.ParquetFile(p).read() for p in parts]  # one file each: no dataset layer
        tables = [t.cast(schema) if schema is not None and t.schema != schema else t for t in tables]
        if not tables:
            return schema.empty_table() if schema is not None else pa.table({})
        return pa.concat_tables(tables)

    def sources(self) -> dict[str, str]:
        """Each table that has Parquet parts -> the DuckDB expression reading them."""
        out = {}
        for name in self.row_counts:
            parts = self._parts(name)
            if parts:
                files = ", ".join(sql_str(str(p)) for p in parts)
                out[name] = f"read_parquet([{files}], union_by_name = true)"
        return out

    def duckdb(self, con: duckdb.DuckDBPyConnection | None = None) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection with one view per table (reading the Parquet files, not copying them);
        a declared table without rows is an empty view with its columns."""
        import duckdb

        con = con or duckdb.connect()
        table_views(con, self.sources())
        return con

    def findings_by_code(self) -> dict[str, int]:
        """Findings per code, exact: a row folding repeats counts what it folded (its ``count``)."""
        t = self.table("findings")
        counts: dict[str, int] = {}
        for code, n in zip(t["code"].to_pylist(), t["count"].to_pylist(), strict=True):
            counts[code] = counts.get(code, 0) + n
        return dict(sorted(counts.items()))

    def findings_folded(self) -> int:
        """How many findings are not listed in full (folded into a row of their code and file)."""
        t = self.table("findings")
        return sum(n for n in t["count"].to_pylist() if n > 1)

    def summary(self) -> dict[str, Any]:
        """What ``vakaudit scan --json`` prints."""
        return {
            "home": str(self.home),
            "out": str(self.out),
            "layout": self.layout,
            "scanned_at": self.scanned_at,
            "tool_version": self.tool_version,
            "tables": dict(self.row_counts),
            "bytes_scanned": self.stats.bytes_scanned,
            "bytes_read": self.stats.bytes_read,
            "home_bytes": self.stats.home_bytes,
            "files": {
                "total": self.stats.files,
                "full": self.stats.files_full,
                "appended": self.stats.files_appended,
                "unchanged": self.stats.files_unchanged,
                "not_read": self.stats.files_not_read,
            },
            "findings": self.findings_by_code(),
            "findings_folded": self.findings_folded(),
            "elapsed_s": self.stats.elapsed_s,
        }


def _schema(name: str) -> pa.Schema | None:
    t = all_tables().get(name)
    return None if t is None else t[0]


def sql_str(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def table_views(
    con: duckdb.DuckDBPyConnection, sources: dict[str, str], partition: tuple[tuple[str, str], ...] = ()
) -> None:
    """One view per scan table on ``con``: ``sources`` maps a table that has rows to the DuckDB
    expression reading it (a scan's parts, a lake's partitions); every other declared table is an
    empty view with its schema. ``partition`` names columns (with SQL types) the sources carry on top
    of a scan's, e.g. a lake's ``home_id``; the empty views get them too, as NULL."""
    for name, (schema, *_rest) in all_tables().items():
        if name in sources:
            continue
        # a table, not a registered Arrow object: those are the connection's own, and the views must
        # read the same from every cursor of the database (analyze runs its metrics on several)
        con.register(f"_empty_{name}_arrow", schema.empty_table())
        con.execute(f'CREATE OR REPLACE TABLE "_empty_{name}" AS SELECT * FROM "_empty_{name}_arrow"')
        con.unregister(f"_empty_{name}_arrow")
        extra = "".join(f', NULL::{typ} AS "{col}"' for col, typ in partition)
        con.execute(
            f'CREATE OR REPLACE VIEW "{name}" AS SELECT *{extra} FROM "_empty_{name}"'
            + (" WHERE false" if extra else "")
        )
    for name, expr in sources.items():
        con.execute(f'CREATE OR REPLACE VIEW "{name}" AS SELECT * FROM {expr}')


def open_scan(out: str | os.PathLike[str]) -> ScanResult:
    """Reopen the scan written into ``out`` (raises :class:`ScanError` when there is none)."""
    out_p = Path(os.path.abspath(Path(os.fspath(out)).expanduser()))
    doc = read_manifest(out_p)
    stats = ScanStats(**{k: v for k, v in doc.get("stats", {}).items() if k in ScanStats.__slots__})
    return ScanResult(
        Path(doc["home"]), out_p, doc["layout"], doc["scanned_at"], doc["tool_version"], stats, doc["tables"]
    )
