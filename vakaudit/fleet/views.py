"""DuckDB over a fleet lake: the views of a single scan, over Hive-partitioned Parquet.

:func:`open_lake` gives every view :func:`vakaudit.analyze.open_scan` gives (the scan tables,
``ledger_file``, ``artifact_writes``, ``ledger_entry``, ``ledger_turn``, ``write_cards``) plus the
``homes`` table, each with a ``home_id`` column; derived views group by it, so two homes never mix.
With ``home_id`` given, the views hold that one home only and are exactly a single scan's (no
``home_id`` column), so the single-home metric queries run on them unchanged.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from vakaudit.analyze._open import open_views
from vakaudit.errors import HomeNotFoundError, UsageError
from vakaudit.fleet import lake as L


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def lake_sources(lake: Path, hid: str | None = None) -> dict[str, str]:
    """Table -> DuckDB expression reading it from the lake (all homes, or the one ``hid``)."""
    out: dict[str, str] = {}
    for name in L.table_names(lake):
        if hid is None:
            if not any((lake / name).glob(f"{L.PARTITION_COLUMN}=*/*.parquet")):
                continue
            glob = str(lake / name / f"{L.PARTITION_COLUMN}=*" / "*.parquet")
            out[name] = (
                f"read_parquet({_sql_str(glob)}, hive_partitioning = true, union_by_name = true, "
                f"hive_types = {{{_sql_str(L.PARTITION_COLUMN)}: {L.PARTITION_TYPE}}})"
            )
        else:
            files = sorted(L.partition_dir(lake, name, hid).glob("*.parquet"))
            if files:
                listing = ", ".join(_sql_str(str(f)) for f in files)
                out[name] = f"read_parquet([{listing}], union_by_name = true)"
    return out


def open_lake(lake: str | Path, home_id: str | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the scan views over the lake (see the module docstring)."""
    lake_p = Path(lake)
    if not lake_p.is_dir():
        raise HomeNotFoundError(f"lake {lake_p} does not exist")
    L.read_lake_info(lake_p)
    sources = lake_sources(lake_p, home_id)
    if home_id is not None and L.HOMES_TABLE not in sources:
        raise UsageError(f"no home {home_id!r} in the lake {lake_p}")
    homes = sources.pop(L.HOMES_TABLE, None)
    partition = () if home_id is not None else ((L.PARTITION_COLUMN, L.PARTITION_TYPE),)
    con = open_views(sources, partition=partition)
    if homes is not None:
        con.execute(f"CREATE VIEW {_quote(L.HOMES_TABLE)} AS SELECT * FROM {homes}")
    else:
        con.register("_empty_homes_arrow", L.HOMES_SCHEMA.empty_table())  # a table: every cursor sees it
        con.execute("CREATE TABLE _empty_homes AS SELECT * FROM _empty_homes_arrow")
        con.unregister("_empty_homes_arrow")
        con.execute(
            f"CREATE VIEW {_quote(L.HOMES_TABLE)} AS SELECT *, NULL::{L.PARTITION_TYPE} AS "
            f"{L.PARTITION_COLUMN} FROM _empty_homes WHERE false"
        )
    return con
