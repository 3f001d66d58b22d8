"""``vakaudit timeline [HOME] -o timeline.jsonl``: ledger entries, sidecar rows and file times in time order."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from vakaudit.cli._output import output_option


class TimelineFormat(StrEnum):
    JSONL = "jsonl"
    CSV = "csv"


def register(app: typer.Typer) -> None:
    @app.command("timeline")
    def timeline_cmd(
        home: Path | None = typer.Argument(
            None, help="The vak home directory (default: $VAK_HOME, else the platform data home)."
        ),
        out: Path = output_option(
            ..., "-o", "--out", help="File to write (outside the home; - for standard output)."
        ),
        fmt: TimelineFormat = typer.Option(TimelineFormat.JSONL, "--format", case_sensitive=False),
        json_out: bool = typer.Option(False, "--json", help="Print a JSON summary (rows, format, file) on stdout."),
    ) -> None:
        """Write a forensic timeline: one row per ledger entry, sidecar row and file time, sorted by time,
        with the fields timeline tools import (datetime, timestamp, timestamp_desc, source, message,
        rel_path, line_no, entry_id). In CSV a text cell that a spreadsheet would run as a formula
        (starting with =, +, -, @, a tab or a carriage return) is written with a leading '.

        Exit codes: 0 written; 2 usage error (home not found, not a vak home, output inside the home).
        """
        from vakaudit.cli._layout import note_v7
        from vakaudit.cli._output import stdout_binary
        from vakaudit.forensics import build_timeline, write_timeline
        from vakaudit.outputs import check_output, is_stdout
        from vakaudit.scan import resolve_home

        root = resolve_home(home)
        note_v7(root, "timeline")
        to_stdout = is_stdout(out)
        if not to_stdout:
            out = check_output(out, root)
        table = build_timeline(root)
        n = write_timeline(table, stdout_binary() if to_stdout else out, fmt.value, root)
        if json_out:
            import json

            from vakaudit.schemas import schema_version

            doc = {"schema_version": schema_version("timeline"), "rows": n, "format": fmt.value,
                   "out": "-" if to_stdout else str(out)}  # fmt: skip
            typer.echo(json.dumps(doc, indent=2), err=to_stdout)
            return
        typer.echo(
            f"wrote {n:,} timeline row(s) ({fmt.value}) -> {'standard output' if to_stdout else out}",
            err=to_stdout,
        )
