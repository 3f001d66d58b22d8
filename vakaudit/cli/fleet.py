"""``vakaudit fleet scan|analyze|report``: many homes scanned on Dask into one Parquet lake."""

from __future__ import annotations

from pathlib import Path

import typer

from vakaudit.cli._output import output_option

EXIT_HOME_FAILED = 1


def _read_list(path: Path) -> list[str]:
    from vakaudit.errors import UsageError

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--from-file {path}: cannot read it ({exc.strerror})") from None
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _fmt_bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def register(app: typer.Typer) -> None:
    fleet = typer.Typer(
        name="fleet",
        help="Many homes: scan a fleet on Dask distributed into one Hive-partitioned Parquet lake, "
        "analyze it and report on it.",
        no_args_is_help=True,
        rich_markup_mode=None,
    )
    app.add_typer(fleet, name="fleet")

    @fleet.command("scan")
    def scan_cmd(
        homes: list[Path] | None = typer.Argument(None, metavar="HOME...", help="vak homes to scan (one task each)."),
        from_file: Path | None = typer.Option(
            None, "--from-file", help="A file listing one home per line (blank lines and # comments skipped)."
        ),
        lake: Path = output_option(..., "--lake", folder=True, help="The lake folder (created when missing; never inside a home)."),
        scheduler: str | None = typer.Option(
            None, "--scheduler", help="Address of a running Dask scheduler (tcp://host:8786) instead of a local cluster."
        ),
        workers: int | None = typer.Option(
            None, "--workers", help="Worker processes of the local cluster on 127.0.0.1 (default: CPU count, at most 4)."
        ),
        keys: str | None = typer.Option(
            None, "--keys", help="Unlock 7.0 homes: a key file (read by each worker at this path) or 'home' (each home's own credential store)."
        ),
        full: bool = typer.Option(False, "--full", help="Read every file of every home again instead of only what changed."),
        json_out: bool = typer.Option(False, "--json", help="Print a JSON summary (one outcome per home) on stdout."),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No per-home progress on stderr."),
    ) -> None:
        """Scan every home as one Dask task into LAKE; rescans are incremental per home.

        Exit 0 when every home was scanned, 1 when at least one home failed (the others are in the
        lake; each failure is listed with its error), 2 for a usage error."""
        import json

        from vakaudit.fleet import fleet_scan

        listed = [str(h) for h in homes or []]
        if from_file is not None:
            listed += _read_list(from_file)

        def progress(o: dict) -> None:
            if quiet:
                return
            if o["ok"]:
                typer.echo(f"scanned {o['home']} -> home_id={o['home_id']} ({o['scan_duration_ms']:.0f} ms)", err=True)
            else:
                typer.echo(f"failed  {o['home']}: {o['error']}", err=True)

        result = fleet_scan(listed, lake, scheduler=scheduler, workers=workers, keys=keys, full=full, progress=progress)
        summary = result.summary()
        if json_out:
            typer.echo(json.dumps(summary, indent=2))
        elif not quiet:
            typer.echo(f"{summary['scanned']} of {summary['homes']} homes in {summary['lake']}; {summary['failed']} failed")
            for o in result.failed:
                typer.echo(f"  failed {o['home']}: {o['error']}")
        if result.failed:
            raise typer.Exit(EXIT_HOME_FAILED)

    @fleet.command("analyze")
    def analyze_cmd(
        lake: Path = typer.Argument(..., help="A lake written by `vakaudit fleet scan`."),
        json_out: bool = typer.Option(False, "--json", help="Print every figure as JSON."),
        gb: float = typer.Option(100.0, "--gb", help="The size for 'days until N GB' (decimal GB)."),
    ) -> None:
        """Homes ranked by bytes and barriers per turn and by growth, days until N GB, findings by
        code per home, and outliers against the fleet (robust z-score on median and MAD)."""
        import json

        from vakaudit.errors import UsageError
        from vakaudit.fleet import analyze_fleet

        if gb <= 0:
            raise UsageError(f"--gb must be positive, not {gb}")
        a = analyze_fleet(lake, gb=gb)
        if json_out:
            typer.echo(json.dumps(a.to_dict(), indent=2, sort_keys=True))
            return
        typer.echo(f"{len(a.homes)} homes in {lake}")
        typer.echo(
            f"{'home_id':<17} {'size':>9} {'turns':>7} {'B/turn':>9} {'barriers/turn':>13} "
            f"{'growth/day':>10} {'days→' + format(gb, 'g') + 'GB':>11}  findings"
        )
        order = {r["home_id"]: r["rank"] for r in a.rankings["bytes_per_turn"]}
        for h in sorted(a.homes, key=lambda h: (order.get(h.home_id, 1 << 30), h.home_id)):
            bpt = "-" if h.bytes_per_turn is None else f"{h.bytes_per_turn:.0f}"
            bar = "-" if h.barriers_per_turn is None else f"{h.barriers_per_turn:.2f}"
            days = "-" if h.days_until is None else f"{h.days_until:.0f}"
            found = ", ".join(f"{k} {v}" for k, v in h.findings.items()) or "-"
            typer.echo(
                f"{h.home_id:<17} {_fmt_bytes(h.home_bytes):>9} {h.turns:>7} {bpt:>9} {bar:>13} "
                f"{_fmt_bytes(h.growth_bytes_per_day):>10} {days:>11}  {found}"
            )
        if a.outliers:
            typer.echo("outliers (" + a.provenance["outliers"] + "):")
            for o in a.outliers:
                typer.echo(f"  {o['home_id']} {o['figure']} {o['value']} (z {o['z']:+.1f})")
        for r in a.needs_a_look:
            typer.echo(f"needs a look: {r['home_id']}: {'; '.join(r['reasons'])}")

    @fleet.command("report")
    def report_cmd(
        lake: Path = typer.Argument(..., help="A lake written by `vakaudit fleet scan`."),
        out: Path = output_option(..., "-o", "--out", help="Write the HTML page here (never inside a home of the lake)."),
        gb: float = typer.Option(100.0, "--gb", help="The size for 'days until N GB' (decimal GB)."),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No message on stderr."),
    ) -> None:
        """The fleet on one offline HTML page: distributions, ranked tables, the homes that need a
        look. Private by default: no message text, homes shown by id and folder name."""
        from vakaudit.fleet import build_fleet_report, check_output_path, open_lake
        from vakaudit.outputs import write_output

        con = open_lake(lake)
        try:
            homes = [Path(r[0]) for r in con.execute("SELECT home_path FROM homes").fetchall()]
        finally:
            con.close()
        target = check_output_path(out, homes)
        text = build_fleet_report(lake, gb=gb)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_output(target, text, homes)
        if not quiet:
            typer.echo(f"wrote {out} ({len(text.encode()):,} bytes)", err=True)
