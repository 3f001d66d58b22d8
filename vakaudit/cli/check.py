"""``vakaudit check HOME --baseline baseline.json``: gate a fixture home against its baseline."""

from __future__ import annotations

from pathlib import Path

import typer

from vakaudit.cli._keys import KEYS_HELP, load_keys
from vakaudit.cli._output import output_option

HELP = """Compare a freshly built fixture home with a baseline from `vakaudit baseline`, under a budget: growth
tolerances per metric (bytes per turn may grow at most 5%), absolute ceilings (zero chain findings;
e.g. barriers per turn <= 14) and rules (no warning or worse counted more often, no new undeclared file, no replay check
failing more often, no read becoming home-class). Without --budget the documented defaults apply
(docs/ci-gates.md shows the default budget file).

On a regression: a table of what moved, by how much, beyond which bound, and which entry kind or
artifact caused it. Otherwise one summary line. --junit writes one JUnit test case per metric.

\b
Exit codes:
  0  every metric within its budget
  1  a regression
  2  usage error (home or baseline not found, bad budget file, output inside the home)
"""


def register(app: typer.Typer) -> None:
    @app.command("check", help=HELP)
    def check_cmd(
        home: Path = typer.Argument(..., help="The vak home to check (a freshly built fixture home)."),
        baseline: Path = typer.Option(..., "--baseline", help="Baseline file from `vakaudit baseline`."),
        budget: Path | None = typer.Option(None, "--budget", help="Budget TOML (default: the documented defaults)."),
        junit: Path | None = output_option(None, "--junit", help="Write JUnit XML here (outside the home; - for stdout)."),
        json_out: bool = typer.Option(False, "--json", help="Print every compared row as JSON."),
        scan_out: Path | None = output_option(
            None, "--scan-out", help="Where to write the scan (default: the scan engine's location).", folder=True
        ),
        keys: str | None = typer.Option(None, "--keys", help=KEYS_HELP),
    ) -> None:
        import json

        from vakaudit.cli._output import stdout_binary
        from vakaudit.gates import build_baseline, compare, load_budget, read_baseline, render_junit
        from vakaudit.outputs import check_output, is_stdout, write_output
        from vakaudit.scan import resolve_home

        root = resolve_home(home)
        junit_target = None if junit is None or is_stdout(junit) else check_output(junit, root)
        if scan_out is not None:
            check_output(scan_out, root, folder=True)
        base = read_baseline(baseline)
        rules = load_budget(budget)
        result = compare(base, build_baseline(root, scan_out=scan_out, keys=load_keys(keys, root)), rules)
        if junit_target is not None:
            write_output(junit_target, render_junit(result), root)
        elif junit is not None:
            stdout_binary().write(render_junit(result))
        if json_out:
            typer.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        elif result.ok:
            typer.echo(f"check: pass: {len(result.rows)} metric(s) within budget of {baseline.name}")
        else:
            _print_failures(result)
        raise typer.Exit(0 if result.ok else 1)


def _print_failures(result) -> None:  # noqa: ANN001 - a CheckResult
    def cell(v: object) -> str:
        if isinstance(v, float):
            return f"{v:.6g}"
        return "-" if v is None else str(v)

    head = ("METRIC", "BASELINE", "NOW", "CHANGE", "BOUND", "CAUSE")
    rows = [(r.metric, cell(r.baseline), cell(r.current), r.change, r.bound, r.cause) for r in result.failed]
    widths = [max(len(head[i]), *(len(r[i]) for r in rows)) for i in range(5)]
    typer.echo("  ".join(h.ljust(w) for h, w in zip(head[:5], widths, strict=True)) + "  " + head[5])
    for r in rows:
        typer.echo("  ".join(c.ljust(w) for c, w in zip(r[:5], widths, strict=True)) + "  " + r[5])
    typer.echo(f"check: FAIL: {len(result.failed)} of {len(result.rows)} metric(s) beyond their budget")
