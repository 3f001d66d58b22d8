"""``vakaudit report HOME_OR_SCAN -o report.html``: the self-contained scale report of a home."""

from __future__ import annotations

from pathlib import Path

import typer

from vakaudit.cli._keys import KEYS_HELP, load_keys_for
from vakaudit.cli._output import output_option


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report_cmd(
        home_or_scan: Path | None = typer.Argument(
            None,
            help="A vak home (scanned first) or a scan directory (default: $VAK_HOME, else the platform data home).",
        ),
        out: Path | None = output_option(
            None, "-o", "--out", help="Write the report here, outside the home (default, or -: stdout)."
        ),
        fmt: str = typer.Option("html", "--format", help="html (one self-contained file), md or json."),
        include_content: bool = typer.Option(
            False,
            "--include-content",
            help="Also show short excerpts of message text. Off by default: the report then holds structure, "
            "sizes, counts and digests only, safe to attach to a bug tracker.",
        ),
        readscale: Path | None = typer.Option(
            None,
            "--readscale",
            help="A stored readscale result (default: readscale.json in the scan directory).",
        ),
        scan_out: Path | None = output_option(
            None,
            "--scan-out",
            help="Where to write the scan when given a home (default: the scan engine's).",
            folder=True,
        ),
        link_base: str | None = typer.Option(
            None, "--link-base", help="Prefix that turns findings' home-relative paths into links."
        ),
        generated_at: str | None = typer.Option(
            None,
            "--generated-at",
            help="Fixed 'generated on' time (ISO 8601, UTC), for reproducible output; default: now.",
        ),
        verify: bool = typer.Option(
            False,
            "--verify",
            help="Also run the forensic cross checks (vakaudit verify) and list what they find; reads the home again.",
        ),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr."),
        keys: str | None = typer.Option(None, "--keys", help=KEYS_HELP),
        compare: Path | None = typer.Option(
            None,
            "--compare",
            metavar="OTHER",
            help="Another home or scan (either generation) to set beside this one: per-turn bytes, "
            "barriers, read classes and disk measured on both, with the difference; the as-is → to-be "
            "section then shows OTHER as the measured to-be.",
        ),
        compare_keys: str | None = typer.Option(
            None, "--compare-keys", help="Unlock OTHER when it is a sealed 7.0 home (same forms as --keys)."
        ),
    ) -> None:
        """Scan (if needed), analyze and render the write-paths-and-growth report of a home."""
        from vakaudit.cli._layout import note_v7

        note_v7(home_or_scan, "report", keys=keys is not None)
        from datetime import UTC, datetime

        from vakaudit.outputs import is_stdout
        from vakaudit.report import FORMATS, build_report
        from vakaudit.scan import resolve_home

        if home_or_scan is None:
            home_or_scan = resolve_home(None)
        if is_stdout(out):
            out = None

        if fmt not in FORMATS:
            raise typer.BadParameter(
                f"must be one of {', '.join(FORMATS)}, got {fmt!r}", param_hint="--format"
            )
        clock = None
        if generated_at:
            try:
                fixed = datetime.fromisoformat(generated_at.replace("Z", "+00:00"))
            except ValueError:
                raise typer.BadParameter(
                    f"takes an ISO 8601 time, got {generated_at!r}", param_hint="--generated-at"
                ) from None
            if fixed.tzinfo is None:
                fixed = fixed.replace(tzinfo=UTC)

            def clock() -> datetime:
                return fixed

        from vakaudit.cli._progress import ProgressDisplay

        ring = load_keys_for(keys, home_or_scan)
        other_ring = None
        if compare is not None:
            if not compare.exists():
                raise typer.BadParameter(f"{compare} does not exist", param_hint="--compare")
            other_ring = load_keys_for(compare_keys, compare)
        elif compare_keys is not None:
            raise typer.BadParameter("needs --compare OTHER", param_hint="--compare-keys")
        with ProgressDisplay(quiet=quiet) as display:
            text = build_report(
                home_or_scan,
                out=out,
                format=fmt,
                include_content=include_content,
                clock=clock,
                readscale=readscale,
                scan_out=scan_out,
                link_base=link_base,
                verify=verify,
                progress=display,
                keys=ring,
                compare=compare,
                compare_keys=other_ring,
            )
        if out is None:
            typer.echo(text, nl=False)
        elif not quiet:
            typer.echo(f"wrote {out} ({len(text.encode()):,} bytes)", err=True)
