"""``turns`` and ``sessions``, derived from the ``entries`` parts of the ledgers read (the files of the
kinds whose rows go to ``entries``: :func:`feeds_turns`).

Their definition is the DuckDB queries ``turns.sql`` and ``sessions.sql`` beside this module. Ledgers
unchanged since a scan that derived them keep their rows (``carry``); the others are derived in groups
bounded in rows, a large ledger's turns in slices, here or in fresh processes. A group of a few
thousand rows is aggregated in Python instead (:mod:`vakaudit.scan.aggregate`, tested against the
queries): DuckDB's import, connection and first query cost more than such a group.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from vakaudit.artifacts import get_kind
from vakaudit.scan.aggregate import aggregate
from vakaudit.scan.manifest import ScanState, _ItemResult, _manifest_entry
from vakaudit.scan.parts import ENTRIES_GROUP_ROWS, PARQUET_COMPRESSION, _as_table, _keep_rows, _read_part
from vakaudit.scan.tables import SESSIONS_SCHEMA, TURNS_SCHEMA
from vakaudit.scan.tables7 import FRAME_ORDER_BASE
from vakaudit.scan.walk import HomeFile

#: the table ``turns`` and ``sessions`` are derived from
SOURCE_TABLE = "entries"


def feeds_turns(kind: str | None) -> bool:
    """Whether the rows of the kind named ``kind`` go to :data:`SOURCE_TABLE` (its files' turns and
    sessions are derived); False for a name no kind has (a manifest's)."""
    try:
        return get_kind(kind).table_name == SOURCE_TABLE
    except KeyError:
        return False


def _sql(name: str) -> str:
    """A query of this folder (``turns.sql``, ``sessions.sql``)."""
    return resources.files("vakaudit.scan").joinpath(name).read_text(encoding="utf-8")


DERIVE_APART_BYTES = 256 << 20  # from this much ledger data to derive, turns/sessions are derived in a child
# entries rows aggregated per DuckDB query when deriving turns and sessions (a single larger ledger
# is still one query): every row can open a turn, and ~100k turns fill the query's 96 MB
DERIVE_GROUP_ROWS = 65_536
# turns aggregated per DuckDB query: a query's turns are in one hash table (DuckDB cannot spill its
# ~25 aggregate states per turn; 50k turns need more than 48 MB), so a ledger of more turns is
# derived in slices of this many (rel_path, turn_no) keys, in order
DERIVE_TURN_SLICE = 16_384
# a derivation group of at most this many entries rows is aggregated in Python (vakaudit.scan.aggregate):
# on this project's machine that costs ~6 µs a row (~0.11 s for the measured profile's 18,416 rows),
# and DuckDB's import, connection and first query over them ~0.15-0.19 s (bench/RESULTS.md)
HERE_ROWS = 24_576

_TURNS_SQL = _sql("turns.sql")
# every DERIVE_TURN_SLICE-th (rel_path, turn_no) key in order: the upper bounds of the turns slices
_TURN_BOUNDS_SQL = """
SELECT rel_path, turn_no FROM (SELECT DISTINCT rel_path, turn_no FROM entries WHERE turn_no IS NOT NULL)
QUALIFY row_number() OVER (ORDER BY rel_path, turn_no) % $slice = 0 ORDER BY rel_path, turn_no
"""


_AFTER = "(rel_path > ${0}r OR (rel_path = ${0}r AND turn_no > ${0}t))"
_UP_TO = "(rel_path < ${0}r OR (rel_path = ${0}r AND turn_no <= ${0}t))"


def _turn_slices(con: Any) -> list[tuple[str, dict[str, Any]]]:
    """The turns query of the current ``entries`` view in slices of at most ``DERIVE_TURN_SLICE``
    turns, in (rel_path, turn_no) order: (SQL, its parameters) each."""
    bounds = con.execute(_TURN_BOUNDS_SQL, {"slice": DERIVE_TURN_SLICE}).fetchall()
    out = []
    for lo, hi in zip([None, *bounds], [*bounds, None], strict=True):
        cond, params = [], {}
        if lo is not None:
            cond.append(_AFTER.format("lo"))
            params.update(lor=lo[0], lot=lo[1])
        if hi is not None:
            cond.append(_UP_TO.format("hi"))
            params.update(hir=hi[0], hit=hi[1])
        out.append((_TURNS_SQL.format(slice="".join(" AND " + c for c in cond)), params))
    return out


_SESSIONS_SQL = _sql("sessions.sql")


def _derive_groups(
    derive: dict[str, list[str]], rows: dict[str, int], ledgers: dict[str, dict[str, Any]]
) -> list[tuple[list[str], list[str] | None]]:
    """The DuckDB queries deriving ``turns`` and ``sessions`` of the ledgers in ``derive`` (rel_path ->
    its parts): (parts to read, ledgers to keep of them, or None when the parts hold no other rows).

    Every part of a ledger is read by the query of that ledger, so its aggregates are final. Ledgers
    linked by a shared part go to the same query when they fit in ``DERIVE_GROUP_ROWS`` rows with
    the others of the query; a larger set linked that way is cut by ledger (its shared parts are
    then read by more than one query, each keeping its own ledgers' rows). ``ledgers`` is every
    ledger of the manifest, for which other files a part holds.
    """
    root = {rel: rel for rel in derive}

    def find(rel: str) -> str:
        while root[rel] != rel:
            root[rel] = root[root[rel]]
            rel = root[rel]
        return rel

    first: dict[str, str] = {}
    for rel in sorted(derive):
        for part in derive[rel]:
            a, b = find(rel), find(first.setdefault(part, rel))
            if a != b:
                root[max(a, b)] = min(a, b)
    linked: dict[str, list[str]] = {}
    for rel in sorted(derive):
        linked.setdefault(find(rel), []).append(rel)

    chunks: list[list[str]] = []
    cur: list[str] = []
    cur_rows = 0
    for comp in linked.values():
        if sum(rows[rel] for rel in comp) > DERIVE_GROUP_ROWS:
            # too many rows for one query: cut by ledger, the ledgers of a part side by side
            pieces = [[rel] for rel in sorted(comp, key=lambda rel: (derive[rel], rel))]
        else:
            pieces = [comp]
        for piece in pieces:
            n = sum(rows[rel] for rel in piece)
            if cur and cur_rows + n > DERIVE_GROUP_ROWS:
                chunks.append(cur)
                cur, cur_rows = [], 0
            cur.extend(piece)
            cur_rows += n
    if cur:
        chunks.append(cur)

    holders: dict[str, set[str]] = {}
    for rel, e in ledgers.items():
        for part in e.get("parts", []):
            holders.setdefault(part, set()).add(rel)
    groups: list[tuple[list[str], list[str] | None]] = []
    for chunk in chunks:
        parts = sorted({part for rel in chunk for part in derive[rel]})
        own = set(chunk)
        mixed = any(holders.get(part, set()) - own for part in parts)
        groups.append((parts, sorted(chunk) if mixed else None))
    return groups


# (groups, carry, apart) of a turns/sessions derivation: see _derive_plan
DerivePlan = tuple[list[tuple[list[str], list[str] | None]], set[str], int]


def _derive_plan(
    ledgers: dict[str, dict[str, Any]],
    states: dict[str, str],
    prev_files: dict[str, dict[str, Any]],
    derived_before: bool,
    current: dict[str, HomeFile],
    n_jobs: int,
) -> DerivePlan | None:
    """``(groups, carry, apart)`` of the turns/sessions derivation over the manifest entries of the
    ledgers that have parts, or None when the previous tables stand as they are: the rows of the
    ledgers in ``carry`` (unchanged since a scan that derived them) are kept, the others derived by
    ``groups`` (:func:`_derive_groups`), in ``apart`` processes (0: here)."""
    carry = {rel for rel in ledgers if states.get(rel) == ScanState.UNCHANGED} if derived_before else set()
    derive = {rel: e["parts"] for rel, e in ledgers.items() if rel not in carry}
    before = {rel for rel, e in prev_files.items() if e.get("parts") and feeds_turns(e.get("kind"))}
    if derived_before and not derive and carry == before:
        return None
    groups = _derive_groups(derive, {rel: ledgers[rel]["part_rows"] for rel in derive}, ledgers)
    derive_bytes = sum(current[rel].size_bytes for rel in derive)
    # DuckDB's working memory goes to fresh processes, not to the parent's high-water mark
    apart = min(n_jobs, 4, len(groups)) if n_jobs > 1 and derive_bytes >= DERIVE_APART_BYTES else 0
    return groups, carry, apart


def _early_derive_plan(
    files: list[HomeFile],
    results: list[_ItemResult],
    states: dict[str, str],
    prev_files: dict[str, dict[str, Any]],
    derived_before: bool,
    current: dict[str, HomeFile],
    n_jobs: int,
) -> DerivePlan | None:
    """The derivation plan once every ledger was read (side files may still be read), or None when
    there is nothing to derive or it must wait: a ledger found rewritten has old rows still to prune."""
    by_rel = {r.rel_path: r for r in results}
    if any(r.mode != ScanState.APPEND and states.get(r.rel_path) == ScanState.APPEND for r in results):
        return None
    ledgers = {}
    for hf in files:
        if hf.kind.table_name == SOURCE_TABLE:
            e = _manifest_entry(hf, by_rel.get(hf.rel_path), prev_files.get(hf.rel_path, {}), states)
            if e.get("parts"):
                ledgers[hf.rel_path] = e
    return _derive_plan(ledgers, states, prev_files, derived_before, current, n_jobs)


def _derive_turns_sessions(
    out: Path, groups: list[tuple[list[str], list[str] | None]], carry: set[str], jobs: int = 0
) -> dict[str, int]:
    """``turns`` and ``sessions``: the previous rows of the ledgers in ``carry``, then those derived
    by ``groups`` (see :func:`_derive_groups`); in ``jobs`` fresh processes if any (each over a
    contiguous share of the groups, concatenated in order: the rows of one sequential pass), else here."""
    if jobs:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futs = [pool.submit(_derive_shard, out, groups, i, jobs) for i in range(jobs)]
            results = [f.result() for f in futs]
    else:
        results = [_derive_shard(out, groups, 0, 1)]
    return _merge_derived(out, results, carry)


def _merge_derived(out: Path, results: list[dict[str, int]], carry: set[str]) -> dict[str, int]:
    """The final ``turns`` and ``sessions`` tables: the carried rows, then each shard's ``.derive-<i>.tmp``."""
    counts = {name: sum(r[name] for r in results) for name in ("turns", "sessions")}
    for name, schema in (("turns", TURNS_SCHEMA), ("sessions", SESSIONS_SCHEMA)):
        final = out / name / "all.parquet"
        tmp = [out / name / f".derive-{i}.tmp" for i in range(len(results))]
        if len(tmp) == 1 and not carry:
            os.replace(tmp[0], final)
            continue
        with pq.ParquetWriter(out / name / ".all.parquet.tmp", schema, compression=PARQUET_COMPRESSION) as w:
            # ParquetFile, not pq.read_table, and no cast of a table already of the schema: neither
            # Arrow's dataset layer nor its compute module is imported for it (~50 ms)
            if carry:
                pf = pq.ParquetFile(final)
                rows = pf.metadata.num_rows
                for batch in pf.iter_batches(batch_size=ENTRIES_GROUP_ROWS):
                    t = _as_table(_keep_rows(pa.Table.from_batches([batch]), carry, rows=rows), schema)
                    w.write_table(t)
                    counts[name] += t.num_rows
                pf.close()
            for path in tmp:
                w.write_table(_read_part(path, schema))
        for path in tmp:
            path.unlink()
        os.replace(out / name / ".all.parquet.tmp", final)
    return counts


def _quoted(path: Path) -> str:
    """``path`` inside a single-quoted SQL string."""
    return str(path).replace("'", "''")


def _derive_shard(out: Path, groups: list[tuple[list[str], list[str] | None]], shard: int, shards: int) -> dict[str, int]:
    """Share ``shard`` of ``shards`` (contiguous) of the derivation ``groups``, written to
    ``<table>/.derive-<shard>.tmp``: a group of at most :data:`HERE_ROWS`
    rows aggregated here (:func:`~vakaudit.scan.aggregate.aggregate`), a larger one by the queries
    on a DuckDB connection (DuckDB imported and the connection opened on the first such group)."""
    groups = groups[len(groups) * shard // shards : len(groups) * (shard + 1) // shards]
    writers, counts = _derive_writers(out, shard)
    con = spill = None
    try:
        for parts, only in groups:
            paths = [out / p for p in parts if (out / p).is_file()]  # (a part deleted by hand: rows gone)
            if not paths:
                continue
            if _aggregated_here(paths, only, writers, counts):
                continue
            if con is None:
                # outside the home: DuckDB may spill sorts here
                spill = tempfile.mkdtemp(prefix="vakaudit-derive-")
                con = _derive_connection(spill)
            files = ", ".join("'" + _quoted(p) + "'" for p in paths)
            view = f"CREATE OR REPLACE VIEW entries AS SELECT * FROM read_parquet([{files}])"
            if only is not None:  # the parts hold other ledgers' rows too
                # a table of the connection, not a registered Arrow table: DuckDB 1.x imports Arrow's
                # dataset layer and compute module (~50 ms) to scan a registered one
                con.execute(
                    "CREATE OR REPLACE TABLE derive_rel_paths AS SELECT unnest($paths::VARCHAR[]) AS rel_path",
                    {"paths": only},
                )
                view += " WHERE rel_path IN (SELECT rel_path FROM derive_rel_paths)"
            con.execute(view)
            _derive_view(con, writers, counts)
    finally:
        if con is not None:
            con.close()
        if spill is not None:
            shutil.rmtree(spill, ignore_errors=True)
        for w in writers.values():
            w.close()
    return counts


def _aggregated_here(
    paths: list[Path], only: list[str] | None, writers: dict[str, pq.ParquetWriter], counts: dict[str, int],
    *, frames: bool = False,
) -> bool:
    """``turns`` and ``sessions`` of the parts ``paths`` aggregated in Python and appended to
    ``writers`` when they hold at most :data:`HERE_ROWS` rows in all (True), else nothing (False: the
    queries' turn)."""
    if sum(pq.read_metadata(p).num_rows for p in paths) > HERE_ROWS:
        return False
    for (name, _, _), t in zip(_SPECS, aggregate(paths, only, frames=frames), strict=True):
        writers[name].write_table(t)
        counts[name] += t.num_rows
    return True


_SPECS = (("turns", _TURNS_SQL, TURNS_SCHEMA), ("sessions", _SESSIONS_SQL, SESSIONS_SCHEMA))


def _derive_writers(out: Path, shard: int) -> tuple[dict[str, pq.ParquetWriter], dict[str, int]]:
    writers = {}
    for name, _, schema in _SPECS:
        (out / name).mkdir(parents=True, exist_ok=True)
        writers[name] = pq.ParquetWriter(out / name / f".derive-{shard}.tmp", schema, compression=PARQUET_COMPRESSION)
    return writers, {name: 0 for name, _, _ in _SPECS}


def _derive_connection(spill: str) -> Any:
    import duckdb

    return duckdb.connect(
        config={"threads": 1, "memory_limit": "96MB", "preserve_insertion_order": False, "temp_directory": spill}
    )


def _as_schema(t: pa.Table, schema: pa.Schema) -> pa.Table:
    """``t``'s columns as ``schema`` without Arrow compute where DuckDB already gave their types
    (the queries cast their sums to BIGINT): relabelled as they are, a timestamp of another zone
    name (DuckDB says ``Etc/UTC`` for UTC) viewed as the schema's. Cast otherwise."""
    t = t.select(schema.names)
    columns = []
    for c, f in zip(t.columns, schema, strict=True):
        if c.type == f.type:
            columns.append(c)
        elif pa.types.is_timestamp(c.type) and pa.types.is_timestamp(f.type) and c.type.unit == f.type.unit \
                and _utc(c.type.tz) and _utc(f.type.tz):
            columns.append(pa.chunked_array([chunk.view(f.type) for chunk in c.chunks], type=f.type))
        else:
            return t.cast(schema)
    return pa.Table.from_arrays(columns, schema=schema)


def _utc(tz: str | None) -> bool:
    return tz in ("UTC", "Etc/UTC", "+00:00", "Z")


def _derive_view(con: Any, writers: dict[str, pq.ParquetWriter], counts: dict[str, int]) -> None:
    """``turns`` and ``sessions`` of the current ``entries`` view on ``con``, appended to ``writers``."""
    for name, sql, schema in _SPECS:
        queries = _turn_slices(con) if name == "turns" else [(sql, {})]
        for query, params in queries:
            t = _as_schema(con.sql(query, params=params or None).to_arrow_table(), schema)
            writers[name].write_table(t)
            counts[name] += t.num_rows


def derive_frame_ledgers(out: Path, part: Path | None) -> dict[str, int]:
    """``turns`` and ``sessions`` of a 7.0 home, written whole, from its frames' ``entries`` part
    (``part``; None: no frames): the same queries as for JSONL ledgers, over the frames of each
    conversation directory, whose path is the ``rel_path`` of its turns and sessions rows (a
    conversation's frames lie in several segment files, ordered by segment, then by their
    ``line_no`` in it: :data:`~vakaudit.scan.tables7.FRAME_ORDER_BASE`). A locked frame has no kind
    and no turn: a keyless scan gives each conversation its sessions row (entries, bytes) and no
    turns. At most :data:`HERE_ROWS` frames are aggregated in Python, more by DuckDB's queries."""
    writers, counts = _derive_writers(out, 0)
    try:
        if part is not None and part.is_file() and not _aggregated_here([part], None, writers, counts, frames=True):
            spill = tempfile.mkdtemp(prefix="vakaudit-derive-")
            con = _derive_connection(spill)
            try:
                src = "'" + _quoted(part) + "'"
                # a frame's line_no counts within its segment file: the queries order a conversation's
                # frames (arg_min/arg_max over line_no) by segment, then line_no
                con.execute(
                    "CREATE OR REPLACE VIEW entries AS SELECT * REPLACE "
                    "(regexp_replace(rel_path, '/[^/]*$', '') AS rel_path, "
                    f"coalesce(segment, 0) * {FRAME_ORDER_BASE} + line_no AS line_no) FROM read_parquet([{src}])"
                )
                _derive_view(con, writers, counts)
            finally:
                con.close()
                shutil.rmtree(spill, ignore_errors=True)
    finally:
        for w in writers.values():
            w.close()
    return _merge_derived(out, [counts], set())
