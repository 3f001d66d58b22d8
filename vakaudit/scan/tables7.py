"""The tables a scan of a 7.0 home writes, and the parts holding its rows, declared without the readers.

:mod:`~vakaudit.scan.tables` lists every table a scan may write, and :mod:`~vakaudit.scan.parts`
every part a scan rewrites whole; a scan of a JSONL-era home names them too, so they are declared
here, not beside the readers of a 7.0 home (:mod:`~vakaudit.scan.frames7`,
:mod:`~vakaudit.scan.chains7`, :mod:`~vakaudit.scan.store7`), whose imports (``vakaudit.storage``,
sqlite3) only a 7.0 scan pays for. Imports no pyarrow: the schemas are declared, built on first use
(``from vakaudit.scan.tables7 import STORE_TABLES`` gives them built).
"""

from __future__ import annotations

from vakaudit.artifacts import _declare as decl

#: the file name of the ``entries`` part holding every frame row of a 7.0 home (rewritten each scan)
FRAMES_PART = "frames7.parquet"
#: a 7.0 conversation's frame order where its turns and sessions are derived: ``segment *
#: FRAME_ORDER_BASE + line_no`` (a frame's ``line_no`` counts within its segment file; a segment
#: holds far fewer than 2**32 frames, and a segment number below 2**31 keeps the key in BIGINT)
FRAME_ORDER_BASE = 1 << 32
#: the file name of the part holding a 7.0 home's chain rows in each table folder (rewritten each scan)
CHAINS_PART = "chains7.parquet"
#: the key of a record chain segment's facts in the manifest's per-file ``state``
CHAIN_STATE_KEY = "chains7"

_OBJECTS_SCHEMA = decl.schema(
    [
        decl.field("tenant", decl.string(), nullable=False),
        decl.field("object_id", decl.string(), nullable=False),
        decl.field("rel_path", decl.string()),
        decl.field("stored_bytes", decl.int64()),
        decl.field("scopes", decl.list_(decl.string()), nullable=False),
        decl.field("referenced_by", decl.list_(decl.string()), nullable=False),
    ]
)

_REFS_SCHEMA = decl.schema(
    [
        decl.field("tenant", decl.string(), nullable=False),
        decl.field("rel_path", decl.string(), nullable=False),
        decl.field("name", decl.string(), nullable=False),
        decl.field("generation", decl.int64(), nullable=False),
        decl.field("epoch", decl.int64(), nullable=False),
        decl.field("target", decl.string()),
        decl.field("target_bytes", decl.int64(), nullable=False),
        decl.field("target_object_id", decl.string()),
    ]
)

_DOCUMENTS_SCHEMA = decl.schema(
    [
        decl.field("tenant", decl.string(), nullable=False),
        decl.field("name", decl.string(), nullable=False),
        decl.field("scope", decl.string(), nullable=False),
        decl.field("forgotten", decl.bool_(), nullable=False),
        decl.field("version_id", decl.string()),
        decl.field("content_id", decl.string()),
        decl.field("seq", decl.int64()),
        decl.field("content_bytes", decl.int64()),
        decl.field("version_count", decl.int64()),
    ]
)

#: the tables of a 7.0 home's tenant stores, with what one row is
_STORE_TABLES: dict[str, tuple[decl.DSchema, str]] = {
    "objects": (
        _OBJECTS_SCHEMA,
        "one row per object of a 7.0 tenant store (a body on disk or a grant directory without one)",
    ),
    "refs": (_REFS_SCHEMA, "one row per ref of a 7.0 tenant store's `refs.db`"),
    "documents": (_DOCUMENTS_SCHEMA, "one row per Document (`doc/` ref) of a 7.0 tenant store"),
}

STORE_COLUMN_NOTES: dict[tuple[str, str], str] = {
    ("objects", "tenant"): "tenant directory name under `tenants/`",
    ("objects", "rel_path"): "the object body's path (relative to the home); null when only its grants exist",
    ("objects", "stored_bytes"): "size of the body on disk (sealed, compressed); null without a body",
    ("objects", "scopes"): "the scopes its grant file names give, sorted (keyless)",
    ("objects", "referenced_by"): "`ref:<name>` for each ref whose target is the id; unlocked, "
    "`doc:<name>` for each Document version or content object of the current version chain and "
    "`entry:<segment rel_path>#<frame_index>` for each session-ledger entry holding an ObjectRef to it "
    "(a binding's interface, an evidence body, a sealed field)",
    ("refs", "rel_path"): "the `refs.db` the ref was read from (a private copy is opened)",
    ("refs", "target"): "the target as UTF-8 text; null when it is not UTF-8",
    ("refs", "target_bytes"): "length of the target in bytes",
    ("refs", "target_object_id"): "the target when it is an object id (64 hex digits)",
    ("documents", "scope"): "the scope a Document's objects are granted to (`agent:<name>` or `tenant`)",
    ("documents", "forgotten"): "the ref holds vak's `forgotten` marker",
    ("documents", "version_id"): "object id of the current version (the ref's target)",
    ("documents", "content_id"): "unlocked: object id of the current version's content",
    ("documents", "seq"): "unlocked: the current version's sequence number",
    ("documents", "content_bytes"): "unlocked: plaintext size of the current content",
    ("documents", "version_count"): "unlocked: versions reachable from the current one through `parent`",
}


_CHAIN_RECORDS_SCHEMA = decl.schema(
    [
        decl.field("kind", decl.string(), nullable=False),
        decl.field("rel_path", decl.string(), nullable=False),
        decl.field("segment", decl.int64(), nullable=False),
        decl.field("frame_index", decl.int64(), nullable=False),
        decl.field("offset_bytes", decl.int64(), nullable=False),
        decl.field("stored_bytes", decl.int64(), nullable=False),
        decl.field("plain_bytes", decl.int64()),
        decl.field("sealed", decl.bool_(), nullable=False),
    ]
)

#: the generic table of a 7.0 home's record chains, with what one row is
_CHAIN_TABLES: dict[str, tuple[decl.DSchema, str]] = {
    "chain_records": (
        _CHAIN_RECORDS_SCHEMA,
        "one row per frame of a 7.0 record chain whose kind has no JSONL-era table (or whose frame "
        "gives no row of it)",
    ),
}

CHAIN_COLUMN_NOTES: dict[tuple[str, str], str] = {
    ("chain_records", "kind"): "artifact kind of the chain directory (`vakaudit kinds`)",
    ("chain_records", "rel_path"): "the segment file holding the frame",
    ("chain_records", "offset_bytes"): "the frame's offset in its segment's chain (as in `entries`)",
    ("chain_records", "stored_bytes"): "the frame's bytes (4 + length + 32); in a compressed `.sealed` segment "
    "(flag 01, plaintext chains) its bytes in the decompressed body",
    ("chain_records", "plain_bytes"): "bytes of the record's JSON; null when sealed and locked",
}

__getattr__ = decl.exports(__name__, STORE_TABLES=_STORE_TABLES, CHAIN_TABLES=_CHAIN_TABLES,
                           CHAIN_RECORDS_SCHEMA=_CHAIN_RECORDS_SCHEMA)
