"""The tables a scan writes: explicit Arrow schemas, one Parquet folder and one SQL view each.

Core tables are declared here (``files``, ``turns``, ``sessions``, ``findings``) or by the session
ledger kind (``entries``, ``entry_fields``); every artifact kind with a schema adds one table named
after the kind. :func:`render_tables_doc` renders ``docs/tables.md`` from these schemas, so the
document cannot drift from the code. No I/O here.
"""

from __future__ import annotations

import pyarrow as pa

from vakaudit.artifacts import all_kinds
from vakaudit.artifacts._timestamps import TIMESTAMP as _TIMESTAMP
from vakaudit.artifacts.session_ledger import ENTRIES_SCHEMA, ENTRY_FIELDS_SCHEMA
from vakaudit.findings import FINDINGS_SCHEMA
from vakaudit.scan.tables7 import CHAIN_COLUMN_NOTES, CHAIN_TABLES, STORE_COLUMN_NOTES, STORE_TABLES

TS = _TIMESTAMP.arrow()  # the pyarrow type of every ``*_at`` column

FILES_SCHEMA = pa.schema(
    [
        pa.field("rel_path", pa.string(), nullable=False),
        pa.field("rel_path_raw", pa.binary()),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("file_type", pa.string(), nullable=False),
        pa.field("size_bytes", pa.int64(), nullable=False),
        pa.field("allocated_bytes", pa.int64(), nullable=False),
        pa.field("mtime", TS),
        pa.field("mtime_ns", pa.int64(), nullable=False),
        pa.field("inode", pa.int64()),
        pa.field("home_scope", pa.string(), nullable=False),
        pa.field("session_id", pa.string()),
        pa.field("readable", pa.bool_(), nullable=False),
        pa.field("scan_state", pa.string(), nullable=False),
        pa.field("scanned_bytes", pa.int64(), nullable=False),
    ]
)

TURNS_SCHEMA = pa.schema(
    [
        pa.field("rel_path", pa.string(), nullable=False),
        pa.field("session_id", pa.string()),
        pa.field("agent_id", pa.string()),
        pa.field("workspace_key", pa.string()),
        pa.field("turn_no", pa.int64(), nullable=False),
        pa.field("turn_id", pa.string()),
        pa.field("started_at", TS),
        pa.field("ended_at", TS),
        pa.field("entry_count", pa.int64(), nullable=False),
        pa.field("size_bytes", pa.int64(), nullable=False),
        pa.field("binding_bytes", pa.int64(), nullable=False),
        pa.field("binding_count", pa.int64(), nullable=False),
        pa.field("message_count", pa.int64(), nullable=False),
        pa.field("assistant_count", pa.int64(), nullable=False),
        pa.field("control_count", pa.int64(), nullable=False),
        pa.field("receipt_count", pa.int64(), nullable=False),
        pa.field("activity_count", pa.int64(), nullable=False),
        pa.field("tool_use_count", pa.int64(), nullable=False),
        pa.field("tool_result_count", pa.int64(), nullable=False),
        pa.field("tool_result_bytes", pa.int64(), nullable=False),
        pa.field("input_tokens", pa.int64(), nullable=False),
        pa.field("output_tokens", pa.int64(), nullable=False),
        pa.field("cache_read_input_tokens", pa.int64(), nullable=False),
        pa.field("cache_creation_input_tokens", pa.int64(), nullable=False),
        pa.field("model", pa.string()),
        pa.field("chain_broken_count", pa.int64(), nullable=False),
    ]
)

SESSIONS_SCHEMA = pa.schema(
    [
        pa.field("rel_path", pa.string(), nullable=False),
        pa.field("session_id", pa.string()),
        pa.field("agent_id", pa.string()),
        pa.field("workspace_key", pa.string()),
        pa.field("app_version", pa.string()),
        pa.field("provider", pa.string()),
        pa.field("model", pa.string()),
        pa.field("first_at", TS),
        pa.field("last_at", TS),
        pa.field("entry_count", pa.int64(), nullable=False),
        pa.field("turn_count", pa.int64(), nullable=False),
        pa.field("size_bytes", pa.int64(), nullable=False),
        pa.field("binding_bytes", pa.int64(), nullable=False),
        pa.field("unparseable_count", pa.int64(), nullable=False),
        pa.field("chain_broken_count", pa.int64(), nullable=False),
        pa.field("unchained_count", pa.int64(), nullable=False),
        pa.field("chain_ok", pa.bool_(), nullable=False),
        pa.field("input_tokens", pa.int64(), nullable=False),
        pa.field("output_tokens", pa.int64(), nullable=False),
        pa.field("cache_read_input_tokens", pa.int64(), nullable=False),
        pa.field("cache_creation_input_tokens", pa.int64(), nullable=False),
    ]
)

#: tables every scan writes whatever kinds are registered, with what one row is
CORE_TABLES: dict[str, tuple[pa.Schema, str]] = {
    "files": (
        FILES_SCHEMA,
        "one row per non-directory entry of the home (every byte lands in exactly one kind)",
    ),
    "entries": (
        ENTRIES_SCHEMA,
        "one row per physical line of every session ledger (a 7.0 ledger: one row per frame of its segments)",
    ),
    "entry_fields": (
        ENTRY_FIELDS_SCHEMA,
        "bytes per top-level payload member, per entry kind, per ledger file",
    ),
    "turns": (
        TURNS_SCHEMA,
        "one row per turn of a ledger (file order), derived from entries; on a 7.0 home `rel_path` is the "
        "conversation's directory (its frames span segment files) and a keyless scan has no turns",
    ),
    "sessions": (
        SESSIONS_SCHEMA,
        "one row per session ledger file, derived from entries; on a 7.0 home one per conversation "
        "directory (`rel_path`), also keyless (frames and stored bytes)",
    ),
    "findings": (FINDINGS_SCHEMA, "one row per data problem found, with provenance"),
}

COLUMN_NOTES: dict[tuple[str, str], str] = {
    ("files", "kind"): "artifact kind (`vakaudit kinds`); `unclassified` when no kind claims the path",
    ("files", "size_bytes"): "lstat size: a symlink counts its own bytes, never its target's",
    ("files", "allocated_bytes"): "st_blocks × 512 (what the file occupies on disk)",
    ("files", "mtime"): "modification time as the walk saw it (microseconds)",
    ("files", "mtime_ns"): "the same, exact nanoseconds since the epoch (what incremental scans compare)",
    ("files", "home_scope"): "agent home holding the file: `` (data root), `agents/vak`, or deeper (D2)",
    ("files", "readable"): "a read-only open succeeded (false for secrets, symlinks, sockets, FIFOs)",
    ("files", "scan_state"): "`full` (read from byte 0), `appended` (only new bytes read), `unchanged` "
    "(not reopened), `not_read` (no reader, secret, unreadable, G3 home)",
    ("files", "scanned_bytes"): "bytes newly covered by the kind's reader in this scan",
    ("entries", "line_no"): "1-based physical line number",
    ("entries", "offset_bytes"): "byte offset of the line's first byte (7.0: the frame's offset in its "
    "segment's chain, the AAD of a sealed frame; after the header in a `.sealed` file)",
    ("entries", "size_bytes"): "the line including its terminator: the sum per file equals the file size",
    (
        "entries",
        "kind",
    ): "envelope kind; null for a line that does not parse (a finding says why) or is blank",
    ("entries", "ts_at"): "`ts` parsed (RFC 3339: `T`, `t` or a space, `Z` or an offset, a leap second as the next "
    "second; microseconds, fraction digits past them cut); null when it names no instant. Every `*_at` column of "
    "every table is read the same way",
    (
        "entries",
        "line_sha256",
    ): "SHA-256 of the line without LF / stripped CR (the next line's expected prev_hash)",
    ("entries", "chain_ok"): "true: prev_hash verified; false: mismatch; null: nothing to verify (header, "
    "first line after a skipped one, unchained, unparseable). 7.0: the frame link, verified for every row "
    "(a break ends the rows of that segment and is a finding)",
    ("entries", "chain_status"): "chain_ok | broken | unchained | unchecked | unparseable | blank "
    "(ledger.md §3 reader rules)",
    ("entries", "turn_no"): "1-based turn of the file in file order (branches included). Preparation entries "
    "written before their directive (capability binding, goal update, an intent right after them) carry "
    "the number of the turn they prepare. On a 7.0 frame an entry whose `at_turn` names a directive of its "
    "conversation has that directive's turn (baseline7.md §8.1), before or after it",
    ("entries", "turn_id"): "entry id of the turn's directive (G4 `at_turn` when present); null on "
    "preparation entries and before the first turn",
    ("entries", "is_directive"): "user message, not control, with a text block and no tool result",
    ("entries", "control"): "a message's `meta.control`: a string as written, any other value as compact JSON "
    "(`false`, `{...}`: still a control message); null when absent or null",
    ("entries", "model"): "message meta model, receipt model, or the header contract's model",
    ("entries", "provider"): "receipt provider or the header contract's provider",
    ("entries", "input_tokens"): "message meta usage (receipts are not counted: no double counting)",
    ("entries", "tool_result_bytes"): "UTF-8 bytes of tool_result contents in a message",
    ("entries", "purpose"): "receipt purpose",
    ("entries", "attempt_count"): "receipt attempts",
    ("entries", "prefix_digest"): "receipt prefix digest (empty string stored as null)",
    ("entries", "epoch"): "capability epoch of turn_capabilities_bound / _ref",
    ("entries", "app_version"): "header contract app_version",
    ("files", "rel_path_raw"): "the name's bytes when it is not valid UTF-8 (`rel_path` then shows it "
    "escaped, `\\xNN`); null otherwise",
    ("findings", "rel_path_raw"): "the bytes of `rel_path` when it is not valid UTF-8; null otherwise",
    ("entries", "segment"): "7.0: number of the segment file holding the frame (`rel_path` is that file); null on JSONL rows",
    ("entries", "frame_index"): "7.0: 0-based index of the frame in its segment (`line_no` is it plus 1)",
    ("entries", "stored_bytes"): "7.0: the frame's bytes (4 + length + 32), also its `size_bytes`; per segment "
    "file the rows add up to the file size (a `.sealed` file: minus its 9-byte `VAKSEG01` header and flag; a "
    "compressed one, flag 01: the decompressed body)",
    ("entries", "plain_bytes"): "7.0: bytes of the entry's JSON; null when the frame is sealed and no `--keys` "
    "opened it (then every plaintext column is null too)",
    ("entries", "sealed"): "7.0: the frame is sealed (AES-256-GCM under the conversation's scope key)",
    ("entries", "commit_point"): "7.0: vak's group commit syncs right after this frame (a header, turn_card or "
    "call_effect; a user message without `meta.control`; an activity whose `data` has `request_id`: "
    "baseline7.md §8.3); null when the frame could not be read",
    ("entry_fields", "field"): "top-level payload key; `(envelope)` = id, parent_id, ts, prev_hash, at_turn, "
    "kind, braces and the line terminator; `(unparsed)` / `(blank)` = whole lines",
    (
        "entry_fields",
        "size_bytes",
    ): '`,"key":value` bytes as written; per file all rows add up to the file size',
    ("turns", "binding_bytes"): "bytes of turn_capabilities_bound lines of the turn",
    ("turns", "model"): "model of the turn's last assistant message",
    ("sessions", "chain_ok"): "no broken and no unparseable line",
    ("findings", "count"): "findings the row stands for: 1, or more for a fold of the repeats of its code in "
    "its file beyond the first 100 (line, offset and entry id of the first folded); sum it to count findings",
    **STORE_COLUMN_NOTES,
    **CHAIN_COLUMN_NOTES,
}


def kind_tables() -> dict[str, tuple[pa.Schema, str]]:
    """One table per registered kind that declares a schema, named after it, unless its rows go to a
    core table (the session ledger's ``table`` is ``entries``)."""
    kinds = [k for k in all_kinds() if k.schema is not None and k.table_name not in CORE_TABLES]
    return {k.table_name: (k.schema, k.title) for k in kinds}


def all_tables() -> dict[str, tuple[pa.Schema, str]]:
    """Every table a scan writes: core tables first, then a 7.0 home's store and chain tables, then kind tables by name."""
    return {**CORE_TABLES, **STORE_TABLES, **CHAIN_TABLES, **kind_tables()}


def _type_name(t: pa.DataType) -> str:
    return str(t)


def render_tables_doc() -> str:
    """``docs/tables.md``: every table with its columns, types and notes."""
    lines = [
        "# Tables written by `vakaudit scan`",
        "",
        "Generated from the Arrow schemas in `vakaudit/scan/tables.py`, `vakaudit/artifacts/session_ledger.py`,",
        "`vakaudit/findings.py` and each artifact kind module by `render_tables_doc()`; a test fails when this",
        "file and the schemas disagree (`pytest tests/scan --update-golden` rewrites it).",
        "",
        "Each table is one folder of Parquet files under the scan's `--out` directory and one view in",
        "`ScanResult.duckdb()`. Paths are `rel_path`, relative to the home, POSIX separators. Sizes are bytes.",
        "`manifest.json` beside the folders records the tool version, the scan time and the per-file state",
        "used by incremental rescans: per file, the Parquet parts holding its rows (`parts`) and how many",
        "rows it has in them (`part_rows`). A scan creates `.scan-incomplete` there before it changes",
        "anything and removes it once the new manifest is in place: a folder that still holds it after the",
        "scan ended (killed, crashed, disk full) is refused by every reader, and the next scan into it",
        "starts over.",
        "",
        "A table folder may hold several Parquet files. `entries` holds one part per worker task",
        "(`t<generation>-<task>.parquet`) with the rows of all the session ledgers of the task (small",
        "ledgers are bundled, a big one is a task of its own), and after incremental rescans the parts with",
        "the rows appended since; a ledger's rows may thus span parts, and a part holds several ledgers.",
        "A side-ledger table holds one shared part per worker task for small side files",
        "(`b<generation>-<task>.parquet`) and one part per side file with many rows, named after the file",
        "and the scan generation. `turns`, `sessions`, `files` and `entry_fields` are rewritten whole;",
        "`findings` holds the walk's findings (`walk.parquet`) and the readers' (`files.parquet`). Read a",
        "folder as one table (`ScanResult.table()`, `read_parquet('<dir>/*.parquet')`).",
        "",
        "Every table is also a view of `vakaudit sql` and `vakaudit.analyze.open_scan()`, which add the",
        "analysis views documented at the end (`vakaudit/analyze/views_doc.py`). Each section ends with",
        "an example query; a test runs every one of them on the scan of `sample_homes/tiny`.",
        "",
        "Side-ledger tables are declared by their kind modules (`vakaudit kinds --json`); their common",
        "columns `rel_path`, `home_scope`, `line_no`, `offset_bytes`, `size_bytes` mean what they mean in `entries`.",
        "",
        "File names that are not UTF-8. A POSIX file name is bytes; every text column (and every JSON and",
        "text output of vakaudit) shows such a name escaped (`vakaudit/names.py`, `shown()`): each byte",
        "that is not part of a UTF-8 sequence is written `\\xNN`, two lowercase hex digits (Python's",
        "`backslashreplace` of the `surrogateescape` bytes), so `caf\\xe9.txt` is the file whose name is the",
        "bytes `caf` 0xE9 `.txt`. A valid UTF-8 name is never changed. The escaped form alone is ambiguous (a",
        "valid name may spell `\\xe9` itself), so `files` and `findings` also keep the name's bytes in",
        "`rel_path_raw` (binary; null when the name is valid UTF-8). Every other table joins `files` on",
        "`rel_path` for them; a `session_id` or `home_scope` taken from such a name is escaped the same way.",
        "",
    ]
    for name, (schema, what) in all_tables().items():
        by = next(c for c in ("rel_path", "name", schema.names[0]) if c in schema.names)
        lines += [
            f"## `{name}`",
            "",
            what[0].upper() + what[1:] + ".",
            "",
            "| column | type | notes |",
            "|---|---|---|",
        ]
        for f in schema:
            note = COLUMN_NOTES.get((name, f.name), "")
            null = "" if f.nullable else " not null"
            lines.append(f"| `{f.name}` | {_type_name(f.type)}{null} | {note} |")
        lines += [
            "",
            "```sql",
            f"SELECT {by}, count(*) AS row_count FROM {name} GROUP BY {by} ORDER BY row_count DESC, {by} LIMIT 5",
            "```",
            "",
        ]
    return "\n".join(lines)
