"""``vakaudit report HOME_OR_SCAN -o report.html``: the self-contained scale report of a home."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from vakaudit.cli._keys import KEYS_HELP
from vakaudit.cli._params import Param, echo

HELP = "Scan (if needed), analyze and render the write-paths-and-growth report of a home."

PARAMS = (
    Param("home_or_scan", Path, None,
          "A vak home (scanned first) or a scan directory (default: $VAK_HOME, else the platform data home).",
          optional=True),
    Param("out", Path, None, "Write the report here, outside the home (default, or -: stdout).", ("-o", "--out"),
          optional=True, output="file"),
    Param("fmt", str, "html", "html (one self-contained file), md or json.", ("--format",)),
    Param("include_content", bool, False,
          "Also show short excerpts of message text. Off by default: the report then holds structure, "
          "sizes, counts and digests only, safe to attach to a bug tracker.", ("--include-content",)),
    Param("readscale", Path, None, "A stored readscale result (default: readscale.json in the scan directory).",
          ("--readscale",), optional=True),
    Param("scan_out", Path, None, "Where to write the scan when given a home (default: the scan engine's).",
          ("--scan-out",), optional=True, output="folder"),
    Param("link_base", str, None, "Prefix that turns findings' home-relative paths into links.", ("--link-base",),
          optional=True),
    Param("generated_at", str, None,
          "Fixed 'generated on' time (ISO 8601, UTC), for reproducible output; default: now.", ("--generated-at",),
          optional=True),
    Param("verify", bool, False,
          "Also run the forensic cross checks (vakaudit verify) and list what they find; reads the home again.",
          ("--verify",)),
    Param("quiet", bool, False, "No progress on stderr.", ("--quiet", "-q")),
    Param("keys", str, None, KEYS_HELP, ("--keys",), optional=True),
    Param("compare", Path, None,
          "Another home or scan (either generation) to set beside this one: per-turn bytes, barriers, read "
          "classes and disk measured on both, with the difference; the as-is → to-be section then shows "
          "OTHER as the measured to-be.", ("--compare",), optional=True, metavar="OTHER"),
    Param("compare_keys", str, None, "Unlock OTHER when it is a sealed 7.0 home (same forms as --keys).",
          ("--compare-keys",), optional=True),
)  # fmt: skip


def register(app) -> None:  # noqa: ANN001 - a typer.Typer
    from vakaudit.cli._params import typer_callback

    app.command("report", help=HELP)(typer_callback(run, PARAMS))


def _fixed_time(text: str) -> datetime | None:
    """``--generated-at`` as a time (UTC when it names no zone); None when it is not ISO 8601."""
    from datetime import UTC

    try:
        fixed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return fixed if fixed.tzinfo is not None else fixed.replace(tzinfo=UTC)


def _refusal(fmt: str, generated_at: str | None, compare: Path | None, compare_keys: str | None,
             **_: object) -> tuple[str, str] | None:  # fmt: skip
    """(message, option) of a value :func:`run` refuses with click's usage error, or None."""
    from vakaudit.report import FORMATS

    if fmt not in FORMATS:
        return f"must be one of {', '.join(FORMATS)}, got {fmt!r}", "--format"
    if generated_at and _fixed_time(generated_at) is None:
        return f"takes an ISO 8601 time, got {generated_at!r}", "--generated-at"
    if compare is not None and not compare.exists():
        return f"{compare} does not exist", "--compare"
    if compare is None and compare_keys is not None:
        return "needs --compare OTHER", "--compare-keys"
    return None


def plain_ok(**kwargs: object) -> bool:
    """Whether :func:`run` takes these values; when not, the console script leaves the command line
    to Typer, where :func:`run` refuses them with click's usage error, as always."""
    return _refusal(**kwargs) is None  # type: ignore[arg-type]


def run(
    home_or_scan: Path | None, out: Path | None, fmt: str, include_content: bool, readscale: Path | None,
    scan_out: Path | None, link_base: str | None, generated_at: str | None, verify: bool, quiet: bool,
    keys: str | None, compare: Path | None, compare_keys: str | None,
) -> int:  # fmt: skip
    """``vakaudit report``: the exit code (0; a value it refuses is click's usage error)."""
    from vakaudit.cli._layout import note_v7

    note_v7(home_or_scan, "report", keys=keys is not None)
    from vakaudit.cli._keys import load_keys_for
    from vakaudit.outputs import is_stdout
    from vakaudit.report import build_report
    from vakaudit.scan import resolve_home

    if home_or_scan is None:
        home_or_scan = resolve_home(None)
    if is_stdout(out):
        out = None
    refused = _refusal(fmt, generated_at, compare, compare_keys)
    if refused is not None:
        import typer

        raise typer.BadParameter(refused[0], param_hint=refused[1])
    clock = None
    if generated_at:
        fixed = _fixed_time(generated_at)

        def clock() -> datetime:
            return fixed  # type: ignore[return-value]

    from vakaudit.cli._progress import ProgressDisplay

    ring = load_keys_for(keys, home_or_scan)
    other_ring = load_keys_for(compare_keys, compare) if compare is not None else None
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
        echo(text, nl=False)
    elif not quiet:
        echo(f"wrote {out} ({len(text.encode()):,} bytes)", err=True)
    return 0
