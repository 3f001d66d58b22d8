"""``vakaudit scan [HOME]``: walk a vak home and write its tables (Parquet + manifest.json)."""

from __future__ import annotations

from pathlib import Path

from vakaudit.cli._keys import KEYS_HELP
from vakaudit.cli._params import Param, echo

HELP = """Scan a vak home read-only into one Parquet folder per table; incremental on a second run
(only appended bytes are read; on a 7.0 home, keyless: sealed segments as recorded are not
opened and open segments are read on from their last verified frame)."""

PARAMS = (
    Param("home", Path, None, "The vak home (default: $VAK_HOME, else the platform data home).", optional=True),
    Param("out", Path, None,
          "Output directory, outside the home (default: a per-home folder under ~/.cache/vakaudit/scans).",
          ("--out",), optional=True, output="folder"),  # fmt: skip
    Param("jobs", int, None, "Worker processes (default: CPU count).", ("--jobs", "-j"), optional=True),
    Param("full", bool, False, "Read every file again instead of only what changed.", ("--full",)),
    Param("json_out", bool, False, "Print a JSON summary on stdout.", ("--json",)),
    Param("quiet", bool, False, "No progress bar and no text summary.", ("--quiet", "-q")),
    Param("keys", str, None, KEYS_HELP, ("--keys",), optional=True),
)


def register(app) -> None:  # noqa: ANN001 - a typer.Typer
    from vakaudit.cli._params import typer_callback

    app.command("scan", help=HELP)(typer_callback(run, PARAMS))


def run(
    home: Path | None, out: Path | None, jobs: int | None, full: bool, json_out: bool, quiet: bool, keys: str | None
) -> int:
    """``vakaudit scan``: 0 (a scan's findings are in its tables, not its exit code)."""
    import json

    from vakaudit.cli._keys import load_keys
    from vakaudit.cli._progress import ProgressDisplay
    from vakaudit.scan import scan_home

    ring = load_keys(keys, home)
    with ProgressDisplay(quiet=quiet or json_out) as display:
        result = scan_home(home, out=out, jobs=jobs, progress=display, full=full, keys=ring)
    summary = result.summary()
    if json_out:
        from vakaudit.schemas import schema_version

        echo(json.dumps({"schema_version": schema_version("scan"), **summary}, indent=2, sort_keys=False))
        return 0
    if quiet:
        return 0
    files = summary["files"]
    mb = summary["bytes_scanned"] / 1e6
    echo(
        f"scanned {summary['home']} ({summary['layout']}): {files['total']} files, "
        f"{files['full']} read, {files['appended']} appended, {files['unchanged']} unchanged; "
        f"{mb:.1f} MB in {summary['elapsed_s']:.2f} s"
    )
    for name, rows in summary["tables"].items():
        if rows:
            echo(f"  {name:<22} {rows:>10} rows")
    if summary["findings"]:
        echo("findings: " + ", ".join(f"{k} {v}" for k, v in summary["findings"].items()))
    echo(f"tables in {summary['out']}")
    return 0
