"""``vakaudit baseline HOME -o baseline.json``: record the figures a CI gate compares."""

from __future__ import annotations

from pathlib import Path

import typer

from vakaudit.cli._keys import KEYS_HELP, load_keys
from vakaudit.cli._output import output_option

HELP = """Record a baseline of a fixture home for `vakaudit check`: bytes per turn by ledger entry kind and by
artifact, entries and barriers per turn, sidecar bytes per turn, read-scaling classes (when a readscale
result is stored in the scan directory), finding counts by code, replay check results and undeclared
files. The same home gives the same file (no absolute paths, no times), so it can be committed.

\b
Exit codes:
  0  written
  2  usage error (home not found, output inside the home)
"""


def register(app: typer.Typer) -> None:
    @app.command("baseline", help=HELP)
    def baseline_cmd(
        home: Path = typer.Argument(..., help="The vak home (a fixture home) to record."),
        out: Path = output_option(..., "-o", "--out", help="Baseline file to write (outside the home; - for stdout)."),
        scan_out: Path | None = output_option(
            None, "--scan-out", help="Where to write the scan (default: the scan engine's location).", folder=True
        ),
        json_out: bool = typer.Option(False, "--json", help="Also print the baseline as JSON on stdout."),
        keys: str | None = typer.Option(None, "--keys", help=KEYS_HELP),
    ) -> None:
        import json

        from vakaudit.cli._output import stdout_binary
        from vakaudit.gates import build_baseline
        from vakaudit.outputs import check_output, is_stdout, write_output
        from vakaudit.scan import resolve_home

        root = resolve_home(home)
        target = None if is_stdout(out) else check_output(out, root)
        if scan_out is not None:
            check_output(scan_out, root, folder=True)
        doc = build_baseline(root, scan_out=scan_out, keys=load_keys(keys, root))
        data = (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
        if target is None:
            stdout_binary().write(data)
        else:
            write_output(target, data, root)
        if json_out:
            if str(out) != "-":
                typer.echo(data.decode("utf-8"), nl=False)
            return
        if str(out) != "-":
            typer.echo(
                f"baseline of {doc['turns']} turn(s), {len(doc['metrics'])} metric(s), "
                f"{sum(doc['findings'].values())} finding(s) -> {out}"
            )
