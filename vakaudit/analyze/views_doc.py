"""The analysis views :func:`vakaudit.analyze.open_scan` adds to the scan's tables, for docs/tables.md.

The scan tables are documented from their Arrow schemas (``vakaudit.scan.tables.render_tables_doc``);
this module documents the views defined here in ``analyze`` (``_open.py`` and ``base_views.sql``),
each with an example query. No I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass

from vakaudit.scan.tables import render_tables_doc


@dataclass(frozen=True, slots=True)
class ViewDoc:
    name: str
    what: str  # what one row is, and its columns when they are not a scan table's
    example: str  # one SQL statement over the view


ANALYSIS_VIEWS: tuple[ViewDoc, ...] = (
    ViewDoc(
        "artifact_writes",
        "One row per artifact kind present in the home: `kind`, `writes` (session ledger: parsed entries; a "
        "kind with a rows table: its rows, checkpoints: snapshot files; otherwise: its files), `file_count` "
        "and `size_bytes` (the kind's files in `files`).",
        "SELECT kind, writes, file_count, size_bytes FROM artifact_writes ORDER BY size_bytes DESC, kind",
    ),
    ViewDoc(
        "ledger_entry",
        "The rows of `entries` that parsed (`kind` is not null): the columns of `entries`, without blank and "
        "unparseable lines.",
        "SELECT kind, count(*) AS entry_count, sum(size_bytes) AS size_bytes FROM ledger_entry "
        "GROUP BY kind ORDER BY size_bytes DESC, kind",
    ),
    ViewDoc(
        "ledger_file",
        "The rows of `files` whose kind is `session_ledger`: one row per session ledger file, the columns of "
        "`files`.",
        "SELECT rel_path, size_bytes FROM ledger_file ORDER BY size_bytes DESC, rel_path",
    ),
    ViewDoc(
        "ledger_syncs",
        "One row for a 7.0 home (none for a JSONL-era one): the session ledgers' syncs under group commit "
        "(baseline7.md §8.3, §3.6): `commits` (entries that are commit points), `admitted` (request admissions, "
        "counted by their `req/` refs), `tails` (segments whose last frame is not a commit point), `seals` "
        "(sealed segments, four syncs each) and `syncs`, their total. The `barriers_per_turn` metric takes the "
        "ledger's figure from it.",
        "SELECT commits, admitted, tails, seals, syncs FROM ledger_syncs",
    ),
    ViewDoc(
        "chain_syncs",
        "One row per side record chain kind of a 7.0 home (none for a JSONL-era one): its syncs as vak's "
        "RecordChain makes them (baseline7.md §3.6, §8.3): `frames`, `commits` (rows appended with their own "
        "sync_data; rows its write card names relaxed, telemetry, have none), `tails` (segments whose last frame "
        "was appended relaxed: synced when the writer closes), `seals` (sealed segments, four syncs each) and "
        "`syncs`, their total. Sealed frames of a locked home count as commit points (their rows cannot be seen). "
        "The `barriers_per_turn` metric takes each chain's figure from it.",
        "SELECT kind, frames, commits, tails, seals, syncs FROM chain_syncs ORDER BY syncs DESC, kind",
    ),
    ViewDoc(
        "ledger_turn",
        "One row per turn of a ledger, as the scan attributes entries to turns: `rel_path`, `session_id`, "
        "`turn_no`, `entry_count`, `size_bytes`, `tool_call_count` (tool uses of its entries), "
        "`intent_count` (its intent entries) and `started_at` (its earliest entry time).",
        "SELECT rel_path, turn_no, entry_count, size_bytes FROM ledger_turn "
        "ORDER BY size_bytes DESC, rel_path, turn_no LIMIT 5",
    ),
    ViewDoc(
        "write_cards",
        "One row per declared artifact kind, from the kinds' write-map cards (`vakaudit kinds`): `kind`, "
        "`title`, `group`, `discipline`, `barriers_per_write`, `read_class`, `bound`, `append_only`. A table "
        "(not a view) of the connection; it holds every kind, present in the home or not.",
        "SELECT kind, discipline, barriers_per_write FROM write_cards WHERE append_only ORDER BY kind",
    ),
)


def render_views_doc() -> str:
    """The analysis-views part of docs/tables.md."""
    lines = [
        "# Analysis views",
        "",
        "`vakaudit sql` and `vakaudit.analyze.open_scan()` add these to the tables above (the metric",
        "queries in `vakaudit/analyze/queries/` use them), with the macro `ledger_kind()`: the session",
        "ledger's kind name as `files.kind` spells it (`WHERE kind = ledger_kind()`).",
        "",
    ]
    for view in ANALYSIS_VIEWS:
        lines += [f"## `{view.name}`", "", view.what, "", "```sql", view.example, "```", ""]
    return "\n".join(lines)


def render_doc() -> str:
    """All of docs/tables.md: the scan's tables, then the analysis views."""
    return render_tables_doc() + render_views_doc()
