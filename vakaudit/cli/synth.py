"""``vakaudit synth OUT``: write a deterministic synthetic vak home."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from vakaudit.cli._output import output_argument, output_option


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
            "g2",
            "--layout",
            help="g1 (flat, v3.x rows) | g2 (rows carry trace/actor) | v7 (vak's 7.0 data baseline: sealed "
            "segment ledgers, record chains, tenant store; needs --keys-out).",
        ),
        keys_out: Path | None = output_option(
            None,
            "--keys-out",
            help="--layout v7: write the home's key file here (the JSON key file --keys reads; outside OUT).",
        ),
        record: Path | None = output_option(
            None,
            "--record",
            help="--layout v7: write the synth record (JSON: bytes per entry kind and object role, syncs "
            "per turn) here, outside OUT; - for standard output.",
        ),
        no_fsync: bool = typer.Option(
            False, "--no-fsync", help="Skip the fdatasync calls of ledger appends (faster; v7 still counts them)."
        ),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr; only the summary line."),
    ) -> None:
        """Write a complete synthetic vak home (ledgers, side ledgers, checkpoints, store.db, config).

        With --layout v7 the same workload (same seed, profile, --turns, --sessions) is written in
        vak's 7.0 layout; its keys go to --keys-out, never into the home.
        """
        import time

        from vakaudit.cli._output import homes_around
        from vakaudit.cli._progress import ProgressDisplay
        from vakaudit.errors import UsageError
        from vakaudit.outputs import check_output, is_stdout, write_output
        from vakaudit.storage.tenant_writer import json_key_file_text
        from vakaudit.synth import build_home

        out = check_output(out, homes_around(out), folder=True)
        keys_target = record_target = None
        if layout == "v7":
            if keys_out is None:
                raise UsageError("a v7 home needs --keys-out FILE: its keys are written there, never inside the home")
            if is_stdout(keys_out):
                raise UsageError("--keys-out needs a file: key material is never printed")
            keys_target = check_output(keys_out, [out, *homes_around(keys_out)])
            if record is not None and not is_stdout(record):
                record_target = check_output(record, [out, *homes_around(record)])
        elif keys_out is not None or record is not None:
            raise UsageError("--keys-out and --record are for --layout v7 only")

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
        if keys_target is not None:
            write_output(keys_target, json_key_file_text({0: result.keys.kek}, result.keys.id_key), [out])
        if record is not None:
            from vakaudit.schemas import schema_version

            text = json.dumps({"schema_version": schema_version("synth"), **result.record}, indent=2) + "\n"
            if record_target is None:
                typer.echo(text, nl=False)
            else:
                write_output(record_target, text, [out])
        size = sum(p.stat().st_size for p in Path(out).rglob("*") if p.is_file())
        versions = ", ".join(f"{v}×{n}" for v, n in sorted(result.app_versions.items()))
        line = (
            f"wrote {out}: {result.sessions} sessions, {result.turns} turns, {result.ledger_entries} ledger entries, "
            f"{size / 1e6:.1f} MB in {elapsed:.1f} s (profile {result.profile}, layout {result.layout}, "
            f"seed {result.seed}; app versions {versions})"
        )
        if result.record is not None:
            r = result.record
            line += (
                f"; ledger {r['ledger_stored_bytes_per_turn'] / 1e3:.1f} KB and {r['ledger_syncs_per_turn']} syncs "
                f"per turn; keys in {keys_target}"
            )
        typer.echo(line, err=is_stdout(record) if record is not None else False)
