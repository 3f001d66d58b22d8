"""store.db: the derived SQLite full-text index over every session ledger (vak-store).

Lives at ``<cache>/store.db`` with ``store.db-wal`` and ``store.db-shm`` (with ``VAK_HOME`` set:
``cache/store.db``; some older builds put it in a sessions home, so any depth is accepted). The
three files and a rollback ``-journal`` belong to this kind. Written by ``Store::import_session``,
spawned after each run and on session create/attach: WAL, ``synchronous=NORMAL``; v1 re-reads the
whole JSONL, one ``SELECT`` per line, one commit per insert; v2 keeps a byte cursor per ledger and
commits once. ``rebuild()`` drops and re-imports everything (home.md §8.1).

Rows: one per b-tree (table, index, FTS5 shadow table) of the main database file, plus a
``(freelist)`` row. The reader opens a private copy (:mod:`vakaudit._sqlite`) so SQLite
takes no lock in the home, creates no ``-wal``/``-shm`` there and writes nothing; the price is that
pages still only in ``store.db-wal`` are not seen (``wal_bytes`` on every row gives the size of the
``-wal`` beside it). Sizes come from the ``dbstat`` virtual table when SQLite is compiled with it
(``size_method = 'dbstat'``); otherwise each b-tree only gets its ``count(*)``, sizes are null, and a
``(database)`` row carries ``pragma page_count`` (``size_method = 'page_count'``). The ``-wal``/``-shm``/``-journal`` files give no rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import (
    ArtifactKind,
    Discipline,
    ReadContext,
    RegistryClass,
    WriteCard,
    WriteGroup,
)
from vakaudit.findings import Finding, FindingCode, Severity

if TYPE_CHECKING:
    import sqlite3

    import pyarrow as pa

#: vak-store's schema v1 of the index (home.md §8.1): synth writes it, and the read-scaling model
#: times its listing and id-probe queries against it
SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    entry_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    project_hash TEXT NOT NULL,
    parent_id TEXT,
    ts TEXT NOT NULL,
    kind TEXT NOT NULL,
    role TEXT,
    provider TEXT,
    model TEXT,
    tool_name TEXT,
    content_text TEXT NOT NULL DEFAULT '',
    is_error INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS idx_entries_session ON entries(session_id);
CREATE INDEX IF NOT EXISTS idx_entries_project ON entries(project_hash);
CREATE INDEX IF NOT EXISTS idx_entries_kind ON entries(kind);
CREATE INDEX IF NOT EXISTS idx_entries_ts ON entries(ts);
CREATE INDEX IF NOT EXISTS idx_entries_role ON entries(role);
CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(
    entry_id UNINDEXED, session_id UNINDEXED, project_hash UNINDEXED, ts UNINDEXED,
    kind UNINDEXED, role UNINDEXED, content, tokenize='porter unicode61'
);
"""

# sqlite3 and vakaudit._sqlite are imported by the functions that read a store.db: the registry
# imports every kind's module, and a home without the index (a 7.0 home) never needs them

_SCHEMA = decl.schema(
    [
        decl.field("rel_path", decl.string(), nullable=False),
        decl.field("home_scope", decl.string(), nullable=False),
        decl.field("object_name", decl.string(), nullable=False),  # b-tree name, or (freelist) / (database)
        decl.field("object_type", decl.string()),  # table | index | virtual | shadow | freelist | database
        decl.field("tbl_name", decl.string()),  # the table an index belongs to / the FTS table of a shadow
        decl.field("row_count", decl.int64()),  # tables only
        decl.field("page_count", decl.int64()),
        decl.field("size_bytes", decl.int64()),  # pages × page size
        decl.field("payload_bytes", decl.int64()),
        decl.field("unused_bytes", decl.int64()),
        decl.field("page_size", decl.int64()),
        decl.field("schema_version", decl.string()),  # meta 'schema' (v2) or 'version' (v1)
        decl.field("size_method", decl.string()),  # dbstat | page_count
        decl.field("wal_bytes", decl.int64()),  # size of store.db-wal beside it: frames these rows do not see
    ]
)


def _scalar(con: sqlite3.Connection, sql: str, *args: object) -> object:
    import sqlite3

    try:
        row = con.execute(sql, args).fetchone()
    except sqlite3.Error:
        return None
    return row[0] if row else None


def _schema_version(con: sqlite3.Connection) -> str | None:
    for key in ("schema", "version"):
        value = _scalar(con, "SELECT value FROM meta WHERE key = ?", key)
        if value is not None:
            return str(value)
    return None


def _objects(con: sqlite3.Connection) -> dict[str, tuple[str, str]]:
    """b-tree name -> (object_type, tbl_name); FTS5 shadow tables are typed ``shadow``."""
    from vakaudit._sqlite import ROW_LIMIT

    rows = con.execute("SELECT type, name, tbl_name, sql FROM sqlite_master LIMIT ?", (ROW_LIMIT,)).fetchall()
    virtual = {
        name
        for typ, name, _, sql in rows
        if typ == "table" and (sql or "").upper().startswith("CREATE VIRTUAL")
    }
    out: dict[str, tuple[str, str]] = {}
    for typ, name, tbl, _sql in rows:
        if typ not in ("table", "index"):
            continue
        if name in virtual:
            out[name] = ("virtual", tbl)
            continue
        owner = next((v for v in virtual if name.startswith(v + "_")), None)
        out[name] = ("shadow", owner) if owner else (typ, tbl)
    out.setdefault("sqlite_schema", ("table", "sqlite_schema"))
    return out


def _row_count(con: sqlite3.Connection, name: str, typ: str) -> int | None:
    if typ not in ("table", "shadow") or name == "sqlite_schema":
        return None
    value = _scalar(con, f'SELECT count(*) FROM "{name.replace(chr(34), chr(34) * 2)}"')
    return value if isinstance(value, int) else None


def _wal_bytes(ctx: ReadContext) -> int | None:
    try:
        return ctx.path.with_name(ctx.path.name + "-wal").lstat().st_size  # metadata only
    except OSError:
        return None


def _rows(con: sqlite3.Connection, ctx: ReadContext) -> list[dict[str, object]]:
    import sqlite3

    page_size = _scalar(con, "PRAGMA page_size")
    version = _schema_version(con)
    objects = _objects(con)
    try:
        stats = {
            name: (pages, size, payload, unused)
            for name, pages, size, payload, unused in con.execute(
                "SELECT name, count(*), sum(pgsize), sum(payload), sum(unused) FROM dbstat GROUP BY name"
            )
        }
        method = "dbstat"
    except sqlite3.Error:
        stats = None
        method = "page_count"
    common = {
        "rel_path": ctx.rel_path,
        "home_scope": ctx.home_scope,
        "page_size": page_size,
        "schema_version": version,
        "size_method": method,
        "wal_bytes": _wal_bytes(ctx),
    }
    rows: list[dict[str, object]] = []
    names = sorted(set(objects) | set(stats or ()))
    for name in names:
        typ, tbl = objects.get(name, ("table", name))
        if stats is not None:
            # a virtual table has no b-tree of its own (0 pages): its shadow tables hold the data
            pages, size, payload, unused = stats.get(name, (0, 0, 0, 0))
        else:
            pages = size = payload = unused = None
        rows.append(
            {
                **common,
                "object_name": name,
                "object_type": typ,
                "tbl_name": tbl,
                "row_count": _row_count(con, name, typ),
                "page_count": pages,
                "size_bytes": size,
                "payload_bytes": payload,
                "unused_bytes": unused,
            }
        )
    free = _scalar(con, "PRAGMA freelist_count")
    if isinstance(free, int) and isinstance(page_size, int):
        rows.append(
            {
                **common,
                "object_name": "(freelist)",
                "object_type": "freelist",
                "tbl_name": None,
                "row_count": None,
                "page_count": free,
                "size_bytes": free * page_size,
                "payload_bytes": None,
                "unused_bytes": None,
            }
        )
    if stats is None:
        total = _scalar(con, "PRAGMA page_count")
        if isinstance(total, int) and isinstance(page_size, int):
            rows.append(
                {
                    **common,
                    "object_name": "(database)",
                    "object_type": "database",
                    "tbl_name": None,
                    "row_count": None,
                    "page_count": total,
                    "size_bytes": total * page_size,
                    "payload_bytes": None,
                    "unused_bytes": None,
                }
            )
    return rows


def reader(ctx: ReadContext) -> Iterator[pa.RecordBatch]:
    """One row per b-tree of a ``store.db`` file; its companions give no rows."""
    import sqlite3

    import pyarrow as pa

    from vakaudit._sqlite import TIME_BUDGET_S, open_private_copy

    if not ctx.rel_path.endswith("store.db"):
        return
    try:
        with open_private_copy(ctx.path) as db:
            rows = _rows(db.con, ctx)
            timed_out = db.timed_out
    except (OSError, sqlite3.Error) as exc:
        ctx.emit(
            Finding(
                FindingCode.UNREADABLE_FILE,
                Severity.WARNING,
                ctx.rel_path,
                f"store.db does not open as SQLite read-only ({exc})",
            )
        )
        return
    if timed_out:
        ctx.emit(
            Finding(
                FindingCode.DATABASE_TIME_LIMIT,
                Severity.WARNING,
                ctx.rel_path,
                f"reading store.db took longer than {TIME_BUDGET_S:g} s; the sizes and counts not read by then "
                "are null",
            )
        )
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=_SCHEMA.arrow())


KIND = ArtifactKind(
    name="store_db",
    title="Search index (store.db)",
    patterns=("**/store.db", "**/store.db-wal", "**/store.db-shm", "**/store.db-journal"),
    card=WriteCard(
        writer="Store::import_session — vak-store, spawned after each run finishes and on session create/attach",
        trigger="after RunFinished, on session create/attach, and rebuild()",
        discipline="WAL, synchronous=NORMAL; re-reads the whole JSONL, one SELECT per line, autocommit per insert",
        barriers_per_write=0,
        read="indexed queries — flat",
        bound="≈ 12% of ledger bytes (11.4 MB over 92 MB, measured); rebuildable",
        group=WriteGroup.DERIVED,
        read_class="flat",
        write_unit=None,  # its rows are b-tree objects: a write is counted as a file
        style=Discipline.DATABASE,
    ),
    registry_class=RegistryClass.DERIVED,
    description=__doc__,
    declared_schema=_SCHEMA,
    reader=reader,
    priority=10,  # beats the generic cache-directory kind
    read_cost=0.25,  # read page by page (0.6 ns/B)
)

__getattr__ = decl.exports(__name__, SCHEMA=_SCHEMA)
