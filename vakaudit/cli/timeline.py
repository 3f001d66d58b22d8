"""``vakaudit timeline HOME -o timeline.jsonl``: ledger entries, sidecar rows and file times in time order."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer


class TimelineFormat(StrEnum):
    JSONL = "jsonl"
    CSV = "csv"


def register(app: typer.Typer) -> None:
    @app.command("timeline")
    def timeline_cmd(
        home: Path = typer.Argument(..., help="The vak home directory."),
        out: Path = typer.Option(..., "-o", "--out", help="File to write (outside the home)."),
        fmt: TimelineFormat = typer.Option(TimelineFormat.JSONL, "--format", case_sensitive=False),
        json_out: bool = typer.Option(False, "--json", help="Print a JSON summary (rows, format, file) on stdout."),
    ) -> None:
        """Write a forensic timeline: one row per ledger entry, sidecar row and file time, sorted by time,
        with the fields timeline tools import (datetime, timestamp, timestamp_desc, source, message,
        rel_path, line_no, entry_id).

        Exit codes: 0 written; 2 usage error (home not found, output inside the home).
        """
        from vakaudit.cli._layout import note_v7

        note_v7(home, "timeline")
        from vakaudit.errors import UsageError
        from vakaudit.forensics import build_timeline, is_inside, write_timeline
        from vakaudit.scan import resolve_home

        root = resolve_home(home)
        if is_inside(root, out):
            raise UsageError(
                f"{out} is inside the home; vakaudit never writes into a home, choose another path"
            )
        table = build_timeline(root)
        n = write_timeline(table, out, fmt.value)
        if json_out:
            import json

            from vakaudit.schemas import schema_version

            doc = {"schema_version": schema_version("timeline"), "rows": n, "format": fmt.value, "out": str(out)}
            typer.echo(json.dumps(doc, indent=2))
            return
        typer.echo(f"wrote {n:,} timeline row(s) ({fmt.value}) -> {out}")
