"""``vakaudit scan [HOME]``: walk a vak home and write its tables (Parquet + manifest.json)."""

from __future__ import annotations

from pathlib import Path

import typer

from vakaudit.cli._keys import KEYS_HELP, load_keys
from vakaudit.cli._output import output_option


def register(app: typer.Typer) -> None:
    @app.command("scan")
    def scan_cmd(
        home: Path | None = typer.Argument(
            None, help="The vak home (default: $VAK_HOME, else the platform data home)."
        ),
        out: Path | None = output_option(
            None,
            "--out",
            help="Output directory, outside the home (default: a per-home folder under ~/.cache/vakaudit/scans).",
            folder=True,
        ),
        jobs: int | None = typer.Option(None, "--jobs", "-j", help="Worker processes (default: CPU count)."),
        full: bool = typer.Option(
            False, "--full", help="Read every file again instead of only what changed."
        ),
        json_out: bool = typer.Option(False, "--json", help="Print a JSON summary on stdout."),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar and no text summary."),
        keys: str | None = typer.Option(None, "--keys", help=KEYS_HELP),
    ) -> None:
        """Scan a vak home read-only into one Parquet folder per table; incremental on a second run
        (only appended bytes are read; on a 7.0 home, keyless: sealed segments as recorded are not
        opened and open segments are read on from their last verified frame)."""
        import json

        from vakaudit.cli._progress import ProgressDisplay
        from vakaudit.scan import scan_home

        ring = load_keys(keys, home)
        with ProgressDisplay(quiet=quiet or json_out) as display:
            result = scan_home(home, out=out, jobs=jobs, progress=display, full=full, keys=ring)
        summary = result.summary()
        if json_out:
            from vakaudit.schemas import schema_version

            typer.echo(json.dumps({"schema_version": schema_version("scan"), **summary}, indent=2, sort_keys=False))
            return
        if quiet:
            return
        files = summary["files"]
        mb = summary["bytes_scanned"] / 1e6
        typer.echo(
            f"scanned {summary['home']} ({summary['layout']}): {files['total']} files, "
            f"{files['full']} read, {files['appended']} appended, {files['unchanged']} unchanged; "
            f"{mb:.1f} MB in {summary['elapsed_s']:.2f} s"
        )
        for name, rows in summary["tables"].items():
            if rows:
                typer.echo(f"  {name:<22} {rows:>10} rows")
        if summary["findings"]:
            typer.echo("findings: " + ", ".join(f"{k} {v}" for k, v in summary["findings"].items()))
        typer.echo(f"tables in {summary['out']}")
