"""``vakaudit analyze HOME_OR_SCAN``: the capacity figures of a home (scanning it first if needed)."""

from __future__ import annotations

from pathlib import Path

import typer

from vakaudit.cli._keys import KEYS_HELP, load_keys_for
from vakaudit.cli._output import output_option


def _parse_turns(text: str | None) -> tuple[int, ...] | None:
    from vakaudit.errors import UsageError

    if not text:
        return None
    try:
        values = tuple(int(v.replace("_", "")) for v in text.split(",") if v.strip())
    except ValueError:
        raise UsageError(f"--turns takes a comma-separated list of integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise UsageError("--turns values must be positive integers")
    return values


def _fmt_bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.4g}"
    return "-" if v is None else str(v)


def register(app: typer.Typer) -> None:
    @app.command("analyze")
    def analyze_cmd(
        home_or_scan: Path | None = typer.Argument(
            None,
            help="A vak home (scanned first) or a scan directory (default: $VAK_HOME, else the platform data home).",
        ),
        json_out: bool = typer.Option(False, "--json", help="Print every result as JSON."),
        turns: str | None = typer.Option(
            None, "--turns", help="Projection points, comma-separated (default 1000,10000,100000)."
        ),
        scan_out: Path | None = output_option(
            None,
            "--scan-out",
            help="Where to write the scan when given a home (default: the scan engine's).",
            folder=True,
        ),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress and no notes on stderr."),
        keys: str | None = typer.Option(None, "--keys", help=KEYS_HELP),
    ) -> None:
        """Print the capacity metrics of a home: ledger bytes, barriers, duplication, growth projection."""
        from vakaudit.cli._layout import note_v7

        if not quiet:
            note_v7(home_or_scan, "analyze", keys=keys is not None)
        from vakaudit.analyze import analyze
        from vakaudit.analyze.projection import DEFAULT_TURNS
        from vakaudit.cli._progress import ProgressDisplay
        from vakaudit.scan import resolve_home

        points = _parse_turns(turns) or DEFAULT_TURNS
        if home_or_scan is None:
            home_or_scan = resolve_home(None)
        ring = load_keys_for(keys, home_or_scan)
        with ProgressDisplay(quiet=quiet) as display:
            result = analyze(home_or_scan, turns=points, scan_out=scan_out, progress=display, keys=ring)
        if json_out:
            import json

            from vakaudit.schemas import schema_version

            doc = {"schema_version": schema_version("analyze"), **result.to_dict()}
            typer.echo(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False))
            return
        h = result.headline
        typer.echo(f"sessions {h['sessions']}  turns {h['turns']}  entries {h['entries']}")
        typer.echo(
            f"per turn: {_fmt(h['entries_per_turn'])} entries, {_fmt_bytes(h['bytes_per_turn'])}, "
            f"{_fmt(h['barriers_per_turn'])} barriers; binding share {_fmt(h['binding_share'])}"
        )
        typer.echo(f"ledger {_fmt_bytes(h['ledger_bytes'])} of home {_fmt_bytes(h['home_bytes'])}")
        for metric in result.metrics.values():
            typer.echo("")
            typer.echo(f"== {metric.title}  [{metric.name}]")
            typer.echo(f"   measured: {metric.measured}")
            if not metric.rows:
                typer.echo("   (no rows)")
                continue
            cols = list(metric.rows[0])
            typer.echo("   " + " | ".join(cols))
            for row in metric.rows[:40]:
                typer.echo("   " + " | ".join(_fmt(row[c]) for c in cols))
            if len(metric.rows) > 40:
                typer.echo(f"   ... {len(metric.rows) - 40} more rows (use --json)")
        p = result.projection
        typer.echo("")
        typer.echo("== Growth projection (estimate)")
        typer.echo(f"   method: {p.method}")
        typer.echo("   artifact | per turn | " + " | ".join(f"{n} turns" for n in p.turns) + " | bound")
        for row in p.rows:
            cells = " | ".join(_fmt_bytes(row.projected_bytes[str(n)]) for n in p.turns)
            typer.echo(f"   {row.artifact} | {_fmt_bytes(row.per_turn_bytes)} | {cells} | {row.bound}")
        if p.total_bytes:  # empty when no turn was observed (nothing to project)
            typer.echo("   total | | " + " | ".join(_fmt_bytes(p.total_bytes[str(n)]) for n in p.turns) + " |")
        for d in p.days_until:
            typer.echo(f"   {d['gb']} GB: after {_fmt(d['turns'])} turns, in {_fmt(d['days'])} days")
