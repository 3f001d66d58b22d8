"""Open a scan as DuckDB views: the scan's own table views (:meth:`ScanResult.duckdb`'s), plus the
analysis views.

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

from vakaudit.artifacts._base import LEDGER_KIND, V7_LAYOUTS, Discipline
from vakaudit.errors import HomeNotFoundError, ScanError
from vakaudit.scan.manifest import MANIFEST, is_scan_dir, read_manifest
from vakaudit.scan.result import open_scan as read_scan
from vakaudit.scan.result import sql_str as _sql_str
from vakaudit.scan.result import table_views
from vakaudit.storage.commit import REQUEST_REF_PREFIX, SEAL_SYNCS, commit_point_sql


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


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


def card_for(kind: Any, layout: str | None) -> Any:
    """The write-map card of ``kind`` in a home of ``layout``: its 7.0 card (a side ledger that
    became a record chain) in a 7.0 home when it has one, else its own."""
    v7 = getattr(kind, "v7", None)
    if layout in V7_LAYOUTS and v7 is not None and v7.card is not None:
        return v7.card
    return kind.card


def write_cards_table(layout: str | None = None) -> pa.Table:
    """One row per declared kind: its write-map card in a home of ``layout`` (:func:`card_for`)."""
    kinds = artifact_kinds()
    cards = [card_for(k, layout) for k in kinds]
    return pa.table(
        {
            "kind": pa.array([k.name for k in kinds], pa.string()),
            "title": pa.array([k.title for k in kinds], pa.string()),
            "group": pa.array([str(c.group) for c in cards], pa.string()),
            "discipline": pa.array([c.discipline for c in cards], pa.string()),
            "barriers_per_write": pa.array([float(c.barriers_per_write) for c in cards], pa.float64()),
            "read_class": pa.array([c.read_class for c in cards], pa.string()),
            "bound": pa.array([c.bound for c in cards], pa.string()),
            "append_only": pa.array([bool(k.append_only) for k in kinds], pa.bool_()),
        }
    )


def open_scan(path: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with one view per scan table and the analysis views.

    ``path`` is a scan output directory (it holds ``manifest.json`` and one Parquet folder per
    table). Views: every scan table under its own name; ``write_cards`` (one row per declared
    artifact kind); ``artifact_writes``; ``ledger_file``, ``ledger_entry`` and ``ledger_turn`` and the
    macro ``ledger_kind()``, the session ledger's kind name (``base_views.sql``).
    """
    scan = Path(os.fspath(path)).expanduser()
    if not scan.is_dir():
        raise HomeNotFoundError(f"scan directory {scan} does not exist")
    if not is_scan_dir(scan):
        raise ScanError(f"{scan} is not a scan directory (no {MANIFEST}); scan the home first")
    result = read_scan(scan)  # a damaged manifest is named, with what to do
    return open_views(result.sources(), layout=result.layout)


def open_views(
    sources: dict[str, str], *, partition: tuple[tuple[str, str], ...] = (), layout: str | None = None
) -> duckdb.DuckDBPyConnection:
    """The views :func:`open_scan` makes, over any Parquet: ``sources`` maps a scan table that has
    files to the DuckDB expression reading them (``read_parquet(...)``). ``partition`` names columns
    (with their SQL types) that the sources carry on top of a scan's, e.g. a lake's ``home_id``: the
    derived views keep them and group by them, so rows of different partitions never merge.
    ``layout``: the home's layout, which picks each kind's write-map card (:func:`card_for`)."""
    con = duckdb.connect(":memory:")
    table_views(con, sources, partition)
    cards = write_cards_table(layout)
    con.register("write_cards_arrow", cards)
    con.execute("CREATE TABLE write_cards AS SELECT * FROM write_cards_arrow")
    con.unregister("write_cards_arrow")
    keys = tuple(col for col, _ in partition)
    _ensure_required(con, partition)
    con.execute(_artifact_writes_sql(set(sources), keys))
    con.execute(_ledger_syncs_sql(keys))
    con.execute(_chain_syncs_sql(set(sources), keys))
    for stmt in base_view_statements(keys):
        con.execute(stmt)
    return con


def _ledger_syncs_sql(keys: tuple[str, ...] = ()) -> str:
    """``ledger_syncs(commits, admitted, tails, seals, syncs)``: the session ledgers' syncs of a 7.0
    home under group commit (:mod:`vakaudit.storage.commit`, baseline7.md §8.3, §3.6): one fdatasync
    per commit point, one per request admission (the scan's ``commit_point`` activities; on a scan
    without that column, the ``req/`` ref each admission creates), one per
    segment whose last frame is not a commit point (its tail synced when the writer is dropped or the
    segment sealed) and ``SEAL_SYNCS`` per sealed segment. No row for a JSONL-era home (its ledger
    syncs once per entry: the write card's rule). ``keys``: a lake's partition columns."""
    lead = "".join(f"{_quote(k)}, " for k in keys)
    group = f"GROUP BY {lead.rstrip(', ')}" if keys else ""
    on = " AND ".join(f"x.{_quote(k)} IS NOT DISTINCT FROM y.{_quote(k)}" for k in keys) or "true"
    admitted = "(CASE WHEN x.seen THEN x.admissions ELSE coalesce(r.admitted, 0) END)"
    return f"""CREATE VIEW ledger_syncs AS
WITH f AS (
    SELECT {lead}regexp_replace(rel_path, '/[^/]*$', '') AS dir, rel_path, segment, frame_index,
           coalesce(commit_point, {commit_point_sql()}) AS is_commit,
           coalesce(commit_point AND kind = 'activity', false) AS admission, commit_point IS NOT NULL AS seen
    FROM entries WHERE segment IS NOT NULL AND kind IS NOT NULL
),
last AS (
    SELECT {lead}dir, segment, any_value(rel_path) AS rel_path, arg_max(is_commit, frame_index) AS last_commit
    FROM f GROUP BY {lead}dir, segment
),
x AS (
    SELECT {lead}count(*) FILTER (WHERE is_commit AND NOT admission) AS commits,
           count(*) FILTER (WHERE admission) AS admissions, bool_or(seen) AS seen
    FROM f {group} HAVING count(*) > 0
),
y AS (
    SELECT {lead}count(*) FILTER (WHERE NOT last_commit) AS tails,
           count(*) FILTER (WHERE ends_with(rel_path, '.sealed')) AS seals
    FROM last {group}
),
r AS (
    SELECT {lead}count(*) AS admitted FROM refs WHERE starts_with(name, {_sql_str(REQUEST_REF_PREFIX)}) {group}
)
SELECT {''.join(f'x.{_quote(k)}, ' for k in keys)}x.commits, {admitted} AS admitted, y.tails, y.seals,
       x.commits + {admitted} + y.tails + {SEAL_SYNCS} * y.seals AS syncs
FROM x JOIN y ON {on} LEFT JOIN r ON {on.replace('y.', 'r.')}"""


#: a frame's place in a record chain: ``<chain dir>/seg-NNNNNNNN.log`` or ``.sealed`` (baseline7.md §3.6)
_SEGMENT_FILE = r"/seg-[0-9]+\.(log|sealed)$"


def chain_relaxed_rows() -> dict[str, str | None]:
    """The 7.0 record chain kinds other than the session ledger, with their card's ``relaxed_rows``
    (the SQL predicate picking rows appended without a sync of their own; None: none are)."""
    out: dict[str, str | None] = {}
    for k in artifact_kinds():
        card = card_for(k, V7_LAYOUTS[0])
        if k.name != LEDGER_KIND and card.style is Discipline.RECORD_CHAIN:
            out[k.name] = card.relaxed_rows
    return out


def _chain_syncs_sql(tables: set[str], keys: tuple[str, ...] = ()) -> str:
    """``chain_syncs(kind, frames, commits, tails, seals, syncs)``: the syncs of a 7.0 home's side
    record chains, per kind, as vak's ``RecordChain`` makes them (baseline7.md §3.6, §8.3): one
    ``sync_data`` per append, none for a row appended relaxed (its card's ``relaxed_rows``), one per
    segment whose last frame was appended relaxed (the tail synced when the writer is dropped or the
    segment sealed) and ``SEAL_SYNCS`` per sealed segment. Frames are the kind tables' rows that sit in
    a segment file plus ``chain_records`` (frames no kind reader took: a locked home's sealed frames,
    counted as commit points unless every row of the kind is relaxed, since their content cannot
    be seen). Empty for a JSONL-era home. ``keys``: a lake's partition columns."""
    lead = "".join(f"{_quote(k)}, " for k in keys)
    kinds = chain_relaxed_rows()
    parts = []
    for name in sorted(kinds):
        if name not in tables:
            continue
        relaxed = kinds[name] or "false"
        parts.append(
            f"SELECT {lead}{_sql_str(name)} AS kind, rel_path, line_no - 1 AS frame_index, "
            f"NOT coalesce(({relaxed}), false) AS is_commit FROM {_quote(name)} "
            f"WHERE regexp_matches(rel_path, {_sql_str(_SEGMENT_FILE)})"
        )
    if "chain_records" in tables:
        all_relaxed = [n for n, r in kinds.items() if r == "true"]
        relaxed_kinds = ", ".join(_sql_str(n) for n in all_relaxed) or "NULL"
        parts.append(
            f"SELECT {lead}kind, rel_path, frame_index, kind NOT IN ({relaxed_kinds}) AS is_commit FROM chain_records"
        )
    group_keys = f"{lead}kind"
    if not parts:
        cols = "".join(f"NULL AS {_quote(k)}, " for k in keys)
        return (
            f"CREATE VIEW chain_syncs AS SELECT {cols}NULL::VARCHAR AS kind, 0::BIGINT AS frames, "
            "0::BIGINT AS commits, 0::BIGINT AS tails, 0::BIGINT AS seals, 0::BIGINT AS syncs WHERE false"
        )
    return f"""CREATE VIEW chain_syncs AS
WITH f AS ({' UNION ALL '.join(parts)}),
seg AS (
    SELECT {group_keys}, rel_path, count(*) AS frames, count(*) FILTER (WHERE is_commit) AS commits,
           arg_max(is_commit, frame_index) AS last_commit
    FROM f GROUP BY {group_keys}, rel_path
)
SELECT {group_keys}, sum(frames)::BIGINT AS frames, sum(commits)::BIGINT AS commits,
       (count(*) FILTER (WHERE NOT last_commit))::BIGINT AS tails,
       (count(*) FILTER (WHERE ends_with(rel_path, '.sealed')))::BIGINT AS seals,
       (sum(commits) + count(*) FILTER (WHERE NOT last_commit)
        + {SEAL_SYNCS} * count(*) FILTER (WHERE ends_with(rel_path, '.sealed')))::BIGINT AS syncs
FROM seg GROUP BY {group_keys}"""


def write_units() -> dict[str, str | None]:
    """What one write is, per artifact kind: its card's ``write_unit`` (an aggregate over its table,
    or None when a write is counted as a file)."""
    return {k.name: k.card.write_unit for k in artifact_kinds()}


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
    units = write_units()
    kinds = set(units)
    counts = [
        f"SELECT {lead}{_sql_str(LEDGER_KIND)} AS kind, count(*) AS n FROM entries WHERE kind IS NOT NULL"
        + (f" GROUP BY {lead.rstrip(', ')}" if keys else "")
    ]
    for name in sorted(tables):
        if name not in kinds or name == LEDGER_KIND:
            continue
        unit = units[name]
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
    (``keys``, e.g. a lake's ``home_id``) go in a select list and a GROUP BY, its ``/*ledger_kind*/``
    mark where the session ledger's kind name (:data:`~vakaudit.artifacts.LEDGER_KIND`) goes."""
    text = resources.files("vakaudit.analyze").joinpath("base_views.sql").read_text(encoding="utf-8")
    text = text.replace("/*keys*/", "".join(f"{_quote(k)}, " for k in keys))
    text = text.replace("/*ledger_kind*/", _sql_str(LEDGER_KIND))
    return tuple(s.strip() for s in text.split("\n;;\n") if s.strip() and not _only_comments(s))


def _only_comments(stmt: str) -> bool:
    return all(not line.strip() or line.strip().startswith("--") for line in stmt.splitlines())


def resolve_scan(
    home_or_scan: str | os.PathLike[str] | Any,
    *,
    out: str | os.PathLike[str] | None = None,
    progress: Callable[[Any], None] | None = None,
    keys: Any = None,
    jobs: int | None = None,
) -> Path:
    """The scan directory for ``home_or_scan``: itself when it is a scan (or a ``ScanResult``), else a
    fresh scan of the home written to ``out`` (or to the scan engine's default location); ``keys``
    (a :class:`~vakaudit.storage.KeyRing`) unlocks a 7.0 home's frames for that scan, ``jobs`` is its
    worker processes (the scan engine's default when None).

    ``progress`` receives the scan's :class:`~vakaudit.scan.ScanProgress` events, then a
    :class:`ScanReused` when the scan read nothing again (a cached scan of an unchanged home)."""
    p = _given_path(home_or_scan)
    if not p.exists():
        raise HomeNotFoundError(f"{p} does not exist; give a vak home or a scan directory")
    if is_scan_dir(p):
        read_manifest(p)
        return p
    from vakaudit.scan import scan_home

    result = scan_home(p, out=out, progress=progress, keys=keys, jobs=jobs)
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
        return Path(read_manifest(p, finished=False)["home"])
    return Path(os.path.abspath(p))


@dataclass(frozen=True, slots=True)
class ScanReused:
    """What :func:`resolve_scan` reports when the scan it found had everything: nothing was read again."""

    out: Path
