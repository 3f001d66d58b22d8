"""``vakaudit sql HOME_OR_SCAN "SELECT …"``: ad-hoc SQL over the same views ``analyze`` uses."""

from __future__ import annotations

from pathlib import Path

import typer

from vakaudit.cli._output import output_option


def register(app: typer.Typer) -> None:
    @app.command("sql")
    def sql_cmd(
        home_or_scan: Path = typer.Argument(
            ..., help="A vak home (scanned first), a scan directory, or a fleet lake (views gain home_id)."
        ),
        query: str = typer.Argument(..., help="One SQL statement over the scan's views."),
        json_out: bool = typer.Option(False, "--json", help="Print the rows as a JSON array."),
        scan_out: Path | None = output_option(
            None, "--scan-out", help="Where to write the scan when given a home.", folder=True
        ),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress and no notes on stderr."),
    ) -> None:
        """Run one SQL statement with DuckDB over a scan's tables and the analysis views (over a fleet
        lake: the same views across every home, each with a home_id column, plus the homes table)."""
        import json

        import duckdb

        from vakaudit.analyze import open_scan
        from vakaudit.analyze._open import resolve_scan
        from vakaudit.analyze.metrics import query_rows
        from vakaudit.cli._progress import ProgressDisplay
        from vakaudit.errors import UsageError
        from vakaudit.fleet import is_lake, open_lake

        if is_lake(home_or_scan):
            con = open_lake(home_or_scan)
        else:
            with ProgressDisplay(quiet=quiet) as display:
                scan = resolve_scan(home_or_scan, out=scan_out, progress=display)
            con = open_scan(scan)
        try:
            try:
                rows = query_rows(con, query)
            except duckdb.Error as exc:
                raise UsageError(f"query failed: {str(exc).rstrip()}") from None  # all of it: hints too
        finally:
            con.close()
        if json_out:
            typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
            return
        if not rows:
            typer.echo("(no rows)")
            return
        cols = list(rows[0])
        typer.echo("\t".join(cols))
        for row in rows:
            typer.echo("\t".join("" if row[c] is None else str(row[c]) for c in cols))
