"""``vakaudit readscale``: measure how each turn-path read scales with the size of a home."""

from __future__ import annotations

from pathlib import Path

import typer

from vakaudit.cli._output import output_option


def register(app: typer.Typer) -> None:
    @app.command("readscale")
    def readscale_cmd(
        turns: str = typer.Option("1000,5000,20000", "--turns", help="Home sizes in turns, comma-separated."),
        json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
        out: Path | None = output_option(
            None,
            "--out",
            help="Store the result as JSON here (a .json path, or a directory, e.g. a scan; - prints it like --json).",
        ),
        repeats: int = typer.Option(3, "--repeats", help="Timed runs per read and size (best is kept)."),
        workdir: Path | None = output_option(
            None, "--workdir", help="Where to build the synthetic homes.", folder=True
        ),
        home: Path | None = typer.Option(
            None, "--home", help="A 7.0 home (layout g3): classify its turn-path reads on it instead of sweeping "
            "synthetic homes (read only; each read says whether it was measured on the home or estimated)."
        ),
    ) -> None:
        """Build synthetic homes of growing size, time each read, fit cost against size, classify it.

        With --home (a 7.0 home) the reads 7.0 does instead (catalog queries, rollup Documents, req/
        refs, the segment walk) are classified on that home: measured from SQLite query plans of its
        catalog.db and refs.db and a fit over its conversations, or estimated from the baseline
        section named (basis "estimated")."""
        from vakaudit.analyze import readscale

        if home is not None:
            _v7(home, json_out)
            return
        from vakaudit.cli._output import homes_around
        from vakaudit.cli.analyze import _parse_turns
        from vakaudit.outputs import check_output, is_stdout

        sizes = _parse_turns(turns) or readscale.DEFAULT_TURNS
        if is_stdout(out):
            out, json_out = None, True
        if out is not None:
            out = check_output(out, homes_around(out))
        if workdir is not None:
            workdir = check_output(workdir, homes_around(workdir), folder=True)

        from vakaudit.cli._progress import ProgressDisplay

        with ProgressDisplay() as display:  # on a terminal only: stdout carries the result
            result = readscale.run(turns=sizes, out=out, repeats=repeats, workdir=workdir, progress=display)
        if json_out:
            typer.echo(result.to_json(), nl=False)
            return
        typer.echo(f"sizes (turns): {', '.join(str(t) for t in result.turns)}")
        typer.echo(f"method: {result.method}")
        typer.echo(
            "read | class | k(home) | k(session) | slope home us/kturn | slope session us/kturn | ms home | ms session"
        )
        for r in result.reads:
            typer.echo(
                f"{r.name} | {r.read_class} | {r.home_exponent} | {r.session_exponent} | "
                f"{r.home_slope_us_per_kturn} | {r.session_slope_us_per_kturn} | "
                f"{' '.join(map(str, r.home_ms))} | {' '.join(map(str, r.session_ms))}"
            )
        if result.stored_at:
            typer.echo(f"stored: {result.stored_at}")


def _v7(home: Path, json_out: bool) -> None:
    import json
    from dataclasses import asdict

    from vakaudit.analyze import readscale7
    from vakaudit.cli._layout import v7_form

    if v7_form(home.expanduser()) != "home":
        typer.echo(f"vakaudit: --home {home}: not a 7.0 home (no tenants/ tree)", err=True)
        raise typer.Exit(2)
    reads = readscale7.v7_read_classes(home)
    if json_out:
        typer.echo(json.dumps({"home": str(home), "reads": [asdict(r) for r in reads]}, indent=2))
        return
    typer.echo("read | replaces | class | basis | evidence")
    for r in reads:
        typer.echo(f"{r.name} | {r.replaces} | {r.read_class} | {r.basis} | {r.evidence}")
