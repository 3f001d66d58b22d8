"""``vakaudit synth OUT``: write a deterministic synthetic vak home."""

from __future__ import annotations

from pathlib import Path

import typer

from vakaudit.cli._output import output_argument


def register(app: typer.Typer) -> None:
    @app.command("synth")
    def synth(
        out: Path = output_argument(
            ..., help="Directory to create the home in (missing or empty; not inside another vak home)."
        ),
        profile: str = typer.Option(
            "tiny", "--profile", help="tiny | measured (the capacity report's home)."
        ),
        turns: int | None = typer.Option(None, "--turns", help="Turns (intent entries) in the home."),
        sessions: int | None = typer.Option(
            None, "--sessions", help="Session ledgers; by default scaled with --turns."
        ),
        seed: int = typer.Option(0, "--seed", help="Seed: same seed and options, same bytes."),
        layout: str = typer.Option(
            "g2", "--layout", help="g1 (flat, v3.x rows) | g2 (rows carry trace/actor)."
        ),
        no_fsync: bool = typer.Option(
            False, "--no-fsync", help="Skip the per-entry fdatasync of ledger appends (faster)."
        ),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr; only the summary line."),
    ) -> None:
        """Write a complete synthetic vak home (ledgers, side ledgers, checkpoints, store.db, config)."""
        import time

        from vakaudit.cli._output import homes_around
        from vakaudit.cli._progress import ProgressDisplay
        from vakaudit.outputs import check_output
        from vakaudit.synth import build_home

        out = check_output(out, homes_around(out), folder=True)

        started = time.perf_counter()
        with ProgressDisplay(quiet=quiet) as display:
            result = build_home(
                out,
                profile=profile,
                turns=turns,
                sessions=sessions,
                seed=seed,
                layout=layout,
                fsync=not no_fsync,
                progress=display.count,
            )
        elapsed = time.perf_counter() - started
        size = sum(p.stat().st_size for p in Path(out).rglob("*") if p.is_file())
        versions = ", ".join(f"{v}×{n}" for v, n in sorted(result.app_versions.items()))
        typer.echo(
            f"wrote {out}: {result.sessions} sessions, {result.turns} turns, {result.ledger_entries} ledger entries, "
            f"{size / 1e6:.1f} MB in {elapsed:.1f} s (profile {result.profile}, layout {result.layout}, "
            f"seed {result.seed}; app versions {versions})"
        )
