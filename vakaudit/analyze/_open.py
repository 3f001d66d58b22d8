"""Open a scan as DuckDB views: one view per Parquet table folder, plus the analysis views.

Everything stays in DuckDB: views read the Parquet files lazily, queries return small aggregates.
The only tables built in Python are tiny registries (one row per artifact kind: its write card).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from vakaudit.errors import HomeNotFoundError, ScanError
from vakaudit.scan.manifest import MANIFEST, is_scan_dir, read_manifest

LEDGER_KIND = "session_ledger"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@cache
def artifact_kinds() -> tuple[Any, ...]:
    """Every declared ArtifactKind (the write map), discovered from ``vakaudit.artifacts``."""
    import vakaudit.artifacts as pkg

    for attr in ("all_kinds", "kinds", "registry"):
        fn = getattr(pkg, attr, None)
        if callable(fn):
            got = fn()
            kinds = list(got.values()) if isinstance(got, dict) else list(got)
            if kinds:
                return tuple(sorted(kinds, key=lambda k: k.name))
    kinds = []
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{pkg.__name__}.{info.name}")
        kind = getattr(mod, "KIND", None)
        if kind is not None:
            kinds.append(kind)
    return tuple(sorted(kinds, key=lambda k: k.name))


def write_cards_table() -> pa.Table:
    kinds = artifact_kinds()
    return pa.table(
        {
            "kind": pa.array([k.name for k in kinds], pa.string()),
            "title": pa.array([k.title for k in kinds], pa.string()),
            "group": pa.array([str(k.card.group) for k in kinds], pa.string()),
            "discipline": pa.array([k.card.discipline for k in kinds], pa.string()),
            "barriers_per_write": pa.array([float(k.card.barriers_per_write) for k in kinds], pa.float64()),
            "read_class": pa.array([k.card.read_class for k in kinds], pa.string()),
            "bound": pa.array([k.card.bound for k in kinds], pa.string()),
            "append_only": pa.array([bool(k.append_only) for k in kinds], pa.bool_()),
        }
    )


def _scan_schemas() -> dict[str, pa.Schema]:
    """Declared schema of every table a scan can write (so an empty table still has its columns)."""
    from vakaudit.scan import all_tables

    return {name: spec[0] for name, spec in all_tables().items()}


def _table_dirs(scan: Path) -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {}
    for child in sorted(scan.iterdir()):
        if child.is_dir():
            files = sorted(child.glob("*.parquet"))
            if files:
                out[child.name] = files
        elif child.suffix == ".parquet":
            out[child.stem] = [child]
    return out


def open_scan(path: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with one view per scan table and the analysis views.

    ``path`` is a scan output directory (it holds ``manifest.json`` and one Parquet folder per
    table). Views: every scan table under its own name; ``write_cards`` (one row per declared
    artifact kind); ``ledger_file``; ``artifact_writes``; ``ledger_entry`` and ``ledger_turn``
    (``base_views.sql``).
    """
    scan = Path(os.fspath(path)).expanduser()
    if not scan.is_dir():
        raise HomeNotFoundError(f"scan directory {scan} does not exist")
    if not is_scan_dir(scan):
        raise ScanError(f"{scan} is not a scan directory (no {MANIFEST}); scan the home first")
    read_manifest(scan)  # a damaged manifest is named, with what to do
    sources = {
        name: "read_parquet([" + ", ".join(_sql_str(str(f)) for f in files) + "], union_by_name = true)"
        for name, files in _table_dirs(scan).items()
    }
    return open_views(sources)


def open_views(
    sources: dict[str, str], *, partition: tuple[tuple[str, str], ...] = ()
) -> duckdb.DuckDBPyConnection:
    """The views :func:`open_scan` makes, over any Parquet: ``sources`` maps a scan table that has
    files to the DuckDB expression reading them (``read_parquet(...)``). ``partition`` names columns
    (with their SQL types) that the sources carry on top of a scan's, e.g. a lake's ``home_id``: the
    derived views keep them and group by them, so rows of different partitions never merge."""
    con = duckdb.connect(":memory:")
    for name, schema in _scan_schemas().items():
        if name not in sources:  # no rows for it: an empty view with its schema
            con.register(f"_empty_{name}", schema.empty_table())
            extra = "".join(f", NULL::{typ} AS {_quote(col)}" for col, typ in partition)
            con.execute(
                f"CREATE VIEW {_quote(name)} AS SELECT *{extra} FROM {_quote('_empty_' + name)} WHERE false"
                if extra
                else f"CREATE VIEW {_quote(name)} AS SELECT * FROM {_quote('_empty_' + name)}"
            )
    for name, expr in sources.items():
        con.execute(f"CREATE VIEW {_quote(name)} AS SELECT * FROM {expr}")
    cards = write_cards_table()
    con.register("write_cards_arrow", cards)
    con.execute("CREATE TABLE write_cards AS SELECT * FROM write_cards_arrow")
    con.unregister("write_cards_arrow")
    keys = tuple(col for col, _ in partition)
    _ensure_required(con, partition)
    con.execute(f"CREATE VIEW ledger_file AS SELECT * FROM files WHERE kind = {_sql_str(LEDGER_KIND)}")
    con.execute(_artifact_writes_sql(set(sources), keys))
    for stmt in base_view_statements(keys):
        con.execute(stmt)
    return con


# what one write is, for kinds whose table rows are not one row per write: a checkpoint write is one
# snapshot file (its table has a row per captured file); store.db rows are b-tree objects, so its
# writes are counted as files (None)
WRITE_UNITS: dict[str, str | None] = {
    "checkpoints": "count(DISTINCT rel_path) FILTER (WHERE format IS DISTINCT FROM 'blob')",
    "store_db": None,
}

_REQUIRED: dict[str, str] = {
    # table -> empty-view column list, used only when the scan wrote no file for it
    "entry_fields": "NULL::VARCHAR AS rel_path, NULL::VARCHAR AS session_id, NULL::VARCHAR AS kind, "
    "NULL::VARCHAR AS field, NULL::BIGINT AS entry_count, NULL::BIGINT AS size_bytes",
}


def _ensure_required(con: duckdb.DuckDBPyConnection, partition: tuple[tuple[str, str], ...]) -> None:
    existing = {
        r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
    }
    for must in ("files", "entries"):
        if must not in existing:
            raise ScanError(f"scan has no {must!r} table; re-run the scan")
    for name, cols in _REQUIRED.items():
        if name not in existing:
            extra = "".join(f", NULL::{typ} AS {_quote(col)}" for col, typ in partition)
            con.execute(f"CREATE VIEW {_quote(name)} AS SELECT {cols}{extra} WHERE false")


def _artifact_writes_sql(tables: set[str], keys: tuple[str, ...] = ()) -> str:
    """``artifact_writes(kind, writes, size_bytes)``: per artifact kind present in the home, the
    writes seen (ledger: entries; a kind with a rows table: its rows; else: its files) and bytes.
    ``keys``: partition columns (a lake's ``home_id``) counted apart and kept in front."""
    lead = "".join(f"{_quote(k)}, " for k in keys)
    kinds = {k.name for k in artifact_kinds()}
    counts = [
        f"SELECT {lead}{_sql_str(LEDGER_KIND)} AS kind, count(*) AS n FROM entries WHERE kind IS NOT NULL"
        + (f" GROUP BY {lead.rstrip(', ')}" if keys else "")
    ]
    for name in sorted(tables):
        if name not in kinds or name == LEDGER_KIND:
            continue
        unit = WRITE_UNITS.get(name, "count(*)")
        if unit:
            counts.append(
                f"SELECT {lead}{_sql_str(name)} AS kind, {unit} AS n FROM {_quote(name)}"
                + (f" GROUP BY {lead.rstrip(', ')}" if keys else "")
            )
    using = ", ".join([*(_quote(k) for k in keys), "kind"])
    return (
        "CREATE VIEW artifact_writes AS WITH f AS ("
        f"SELECT {lead}kind, count(*) AS files, sum(size_bytes) AS size_bytes FROM files GROUP BY {lead}kind"
        "), r AS ("
        + " UNION ALL ".join(counts)
        + ") "
        f"SELECT {''.join(f'f.{_quote(k)}, ' for k in keys)}f.kind, coalesce(r.n, f.files) AS writes, "
        "f.files AS file_count, f.size_bytes "
        f"FROM f LEFT JOIN r USING ({using})"
    )


@cache
def base_view_statements(keys: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The statements of ``base_views.sql``; its ``/*keys*/`` marks are where partition columns
    (``keys``, e.g. a lake's ``home_id``) go in a select list and a GROUP BY."""
    text = resources.files("vakaudit.analyze").joinpath("base_views.sql").read_text(encoding="utf-8")
    text = text.replace("/*keys*/", "".join(f"{_quote(k)}, " for k in keys))
    return tuple(s.strip() for s in text.split("\n;;\n") if s.strip() and not _only_comments(s))


def _only_comments(stmt: str) -> bool:
    return all(not line.strip() or line.strip().startswith("--") for line in stmt.splitlines())


def resolve_scan(
    home_or_scan: str | os.PathLike[str] | Any,
    *,
    out: str | os.PathLike[str] | None = None,
    progress: Callable[[Any], None] | None = None,
    keys: Any = None,
) -> Path:
    """The scan directory for ``home_or_scan``: itself when it is a scan (or a ``ScanResult``), else a
    fresh scan of the home written to ``out`` (or to the scan engine's default location); ``keys``
    (a :class:`~vakaudit.storage.KeyRing`) unlocks a 7.0 home's frames for that scan.

    ``progress`` receives the scan's :class:`~vakaudit.scan.ScanProgress` events, then a
    :class:`ScanReused` when the scan read nothing again (a cached scan of an unchanged home)."""
    p = _given_path(home_or_scan)
    if not p.exists():
        raise HomeNotFoundError(f"{p} does not exist; give a vak home or a scan directory")
    if is_scan_dir(p):
        read_manifest(p)
        return p
    from vakaudit.scan import scan_home

    result = scan_home(p, out=out, progress=progress, keys=keys)
    if not is_scan_dir(Path(result.out)):
        raise ScanError(f"scanning {p} produced no scan directory with a {MANIFEST} at {result.out}")
    stats = result.stats
    if progress and stats.files and not (stats.files_full or stats.files_appended):
        progress(ScanReused(Path(result.out)))
    return Path(result.out)


def _given_path(home_or_scan: str | os.PathLike[str] | Any) -> Path:
    out_attr = getattr(home_or_scan, "out", None)  # a vakaudit.scan.ScanResult
    return Path(os.fspath(out_attr if out_attr is not None else home_or_scan)).expanduser()


def scan_home_of(home_or_scan: str | os.PathLike[str] | Any) -> Path:
    """The home ``home_or_scan`` stands for: the home a scan folder was scanned from (its manifest's
    ``home``), else the path itself; what an output of a command given either must stay out of."""
    p = _given_path(home_or_scan)
    if is_scan_dir(p):
        return Path(read_manifest(p)["home"])
    return Path(os.path.abspath(p))


@dataclass(frozen=True, slots=True)
class ScanReused:
    """What :func:`resolve_scan` reports when the scan it found had everything: nothing was read again."""

    out: Path
