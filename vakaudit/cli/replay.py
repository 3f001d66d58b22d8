"""``vakaudit replay``: rebuild every provider request of a home's sessions and check them."""

from __future__ import annotations

from pathlib import Path

import typer

from vakaudit.cli._keys import KEYS_HELP, load_keys
from vakaudit.cli._output import output_option
from vakaudit.names import shown


def register(app: typer.Typer) -> None:
    @app.command("replay")
    def replay(
        home_or_ledger: Path | None = typer.Argument(
            None,
            help="A vak home directory (JSONL era or 7.0) or one ledger .jsonl file (default: $VAK_HOME, else the "
            "platform data home).",
        ),
        keys: str | None = typer.Option(None, "--keys", help=KEYS_HELP),
        session: str | None = typer.Option(None, "--session", help="Only this session id."),
        turn: int | None = typer.Option(None, "--turn", min=1, help="Only steps of this turn number."),
        step: int | None = typer.Option(None, "--step", min=1, help="Only this step within each turn."),
        provider: str = typer.Option("anthropic", "--provider", help="Wire format: anthropic or openai."),
        as_json: bool = typer.Option(False, "--json", help="Print every step and check as JSON."),
        diff: bool = typer.Option(False, "--diff", help="Show what changed between consecutive requests."),
        export: Path | None = output_option(
            None,
            "--export",
            help="Write the reconstructed requests as JSONL to this file (outside the home; - for standard "
            "output, the summary then goes to standard error).",
        ),
        temporal: str = typer.Option(
            "", "--turn-context", help="Host <turn_context> text (not in 3.x ledgers)."
        ),
        stance: str = typer.Option("", "--stance", help="Host <stance> text (not in 3.x ledgers)."),
        max_tokens: int | None = typer.Option(None, "--max-tokens", help="Output cap (not in the ledger)."),
        regime: str | None = typer.Option(None, "--regime", help="Force request regime A or B."),
        horizon: int = typer.Option(
            200_000, "--horizon", help="Context horizon when no profile is recorded."
        ),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar on stderr."),
    ) -> None:
        """Re-derive each step's request from the ledger and run the checks of the replay spec.

        Exit 0 when every checkable check passes, 1 when a check failed, 2 on a usage error. A ledger
        that cannot be read (invalid UTF-8, an undecodable line, a payload field of a type vak never
        writes, no permission, vanished, not a regular file) is a data problem, not a usage error:
        it is listed as not replayable, with the reason and the line (the table's "not replayable"
        lines; in --json, the "ledgers" list with its "error" and "line"), the other ledgers are
        replayed, and it does not change the exit code (`vakaudit verify` reports the defect).

        A 7.0 home is replayed from its conversation directories with --keys: the frames' entries go
        through the same projection as a JSONL ledger, each binding's interface and each evidence
        body are read from the tenant store (an object that is missing or does not open is listed
        under "object problems" and, in --json, in the ledger's "objects"; it fails the replay, exit
        1). Without --keys nothing of a 7.0 home is replayed: one line per check says what it needs
        the keys for ("needs_keys" in --json), and the exit code is 0 (nothing checked, nothing
        failed).
        """
        import json
        from contextlib import ExitStack

        from vakaudit.cli._output import stdout_binary
        from vakaudit.errors import HomeNotFoundError, KeyFileError, LedgerError, UsageError
        from vakaudit.ledger.jsonenc import dumps
        from vakaudit.outputs import check_output, is_stdout, open_output
        from vakaudit.replay import (
            HostParams,
            Regime,
            conversation_dirs,
            is_v7_home,
            iter_requests,
            serialize,
        )
        from vakaudit.replay.checks import CHECK_NAMES, V7_NEEDS_KEYS
        from vakaudit.replay.diff import request_diff
        from vakaudit.scan.paths import is_vak_home, resolve_home

        try:
            if provider not in ("anthropic", "openai"):
                raise UsageError(f"--provider must be anthropic or openai, not {provider!r}")
            if regime is not None and regime.upper() not in ("A", "B"):
                raise UsageError(f"--regime must be A or B, not {regime!r}")
            if home_or_ledger is not None and home_or_ledger.expanduser().is_file():
                home_or_ledger = home_or_ledger.expanduser()
                # the home a single ledger lives in: the nearest folder above it that is a vak home
                home = next(
                    (p for p in home_or_ledger.resolve().parents if is_vak_home(p)), home_or_ledger.parent
                )
            elif home_or_ledger is not None and not home_or_ledger.expanduser().exists():
                raise HomeNotFoundError(f"{home_or_ledger} does not exist; pass a vak home or a ledger file")
            else:
                home = home_or_ledger = resolve_home(home_or_ledger)
            export_to_stdout = is_stdout(export)
            if export_to_stdout and as_json:
                raise UsageError("--export - and --json both write to standard output; choose one")
            if export is not None and not export_to_stdout:
                export = check_output(export, home)
            v7 = is_v7_home(home_or_ledger)
            ring = load_keys(keys, home) if v7 or keys is not None else None
        except (UsageError, HomeNotFoundError, KeyFileError) as exc:
            from vakaudit.cli._errors import failed  # the line and code every command gives

            raise typer.Exit(failed(exc)) from None
        host = HostParams(
            temporal=temporal,
            stance=stance,
            max_tokens=max_tokens,
            regime=Regime(regime.upper()) if regime else None,
            horizon_tokens=horizon,
        )
        counts = {name: {"pass": 0, "fail": 0, "not_checkable": 0} for name in CHECK_NAMES}
        if v7 and ring is None:
            _keyless_v7(home_or_ledger, as_json, counts, conversation_dirs, V7_NEEDS_KEYS)
            return
        reasons: dict[str, dict[str, int]] = {name: {} for name in CHECK_NAMES}
        steps_total = 0
        any_fail = False
        breaks: list[str] = []
        prev_by_session: dict[str, object] = {}
        out_json: list[dict] = []

        records: dict[str, dict] = {}  # per ledger listed: its steps, or why it is not replayable
        current: list[dict] = []

        def record_of(path: object) -> dict:
            return records.setdefault(str(path), {"ledger": shown(str(path)), "steps": 0, "error": None, "line": None})

        def started(path: str) -> None:
            current[:] = [record_of(path)]

        def failed(path: Path, exc: Exception) -> None:
            # a bad ledger is reported, the others still replay (OSError: a ledger that vanished after
            # it was listed, or a read that failed)
            record = record_of(path)
            why = str(exc) if isinstance(exc, LedgerError) else f"{path}: {getattr(exc, 'strerror', None) or exc}"
            record["error"] = shown(why)
            record["line"] = getattr(exc, "line", None) or None

        def v7_read(ledger) -> None:  # noqa: ANN001 - a V7Ledger
            record = record_of(home_or_ledger / ledger.rel_dir)
            if ledger.locked:
                record["error"] = "its frames are sealed and the keys given do not open them"
            problems = [f"binding {eid}: {why}" for eid, why in ledger.interfaces.items() if isinstance(why, str)]
            problems += [f"evidence_body {eid} ({tool}): {why}" for eid, tool, why in ledger.evidence if why]
            if problems:
                record["objects"] = [shown(p) for p in problems]

        def steps_of_each_ledger(progress):  # noqa: ANN001, ANN202 - a ProgressDisplay
            for s in iter_requests(home_or_ledger, host=host, session=session, on_ledger=started,
                                   on_error=failed, progress=progress, keys=ring, on_v7=v7_read):  # fmt: skip
                current[0]["steps"] += 1
                yield s

        echo = typer.echo
        if export_to_stdout:

            def echo(message: str = "", **kwargs: object) -> None:
                typer.echo(message, err=True)

        from vakaudit.cli._progress import ProgressDisplay

        with ExitStack() as stack:
            display = stack.enter_context(ProgressDisplay(quiet=quiet))
            export_fh = None
            if export_to_stdout:
                export_fh = stdout_binary()
            elif export is not None:
                export_fh = stack.enter_context(open_output(export, home))
            for s in steps_of_each_ledger(display):
                key = s.ledger_path
                prev = prev_by_session.get(key)
                prev_by_session[key] = s.request
                if turn is not None and s.turn != turn:
                    continue
                if step is not None and s.step != step:
                    continue
                steps_total += 1
                for c in s.checks:
                    counts[c.name][str(c.status)] += 1
                    if c.status != "pass":
                        label = f"{c.status}: {c.reason}"
                        reasons[c.name][label] = reasons[c.name].get(label, 0) + 1
                    any_fail = any_fail or c.failed
                if s.prefix_break is not None:
                    all_parts = s.prefix_break.parts
                    parts = ", ".join(all_parts[:6]) or "digest only"
                    if len(all_parts) > 6:
                        parts += f", … (+{len(all_parts) - 6} more; --json lists all)"
                    breaks.append(f"  {s.session_id} turn {s.turn} step {s.step} ({s.receipt_id}): {parts}")
                if as_json:
                    item = s.to_dict()
                    if diff and prev is not None:
                        item["diff"] = request_diff(prev, s.request)
                    out_json.append(item)
                elif diff and prev is not None:
                    d = request_diff(prev, s.request)
                    echo(f"--- {s.session_id} turn {s.turn} step {s.step} ({s.receipt_id})")
                    echo(json.dumps(d, ensure_ascii=False, indent=2))
                if export_fh is not None:
                    row = {
                        "session_id": s.session_id,
                        "turn": s.turn,
                        "step": s.step,
                        "receipt_id": s.receipt_id,
                        "provider": provider,
                        "neutral": s.request.to_dict(),
                        "body": serialize(s.request, provider),
                    }
                    export_fh.write(dumps(row) + b"\n")
        ledgers = [r for r in records.values() if r["steps"] or r["error"] or r.get("objects")]
        object_problems = [(r["ledger"], p) for r in ledgers for p in r.get("objects", ())]
        if as_json:
            from vakaudit.schemas import schema_version

            doc = {"schema_version": schema_version("replay"), "steps": out_json, "summary": counts, "ledgers": ledgers}
            typer.echo(json.dumps(doc, ensure_ascii=False, indent=2))
        else:
            echo(f"steps replayed: {steps_total}")
            echo(f"{'check':<26}{'pass':>7}{'fail':>7}{'n/c':>7}")
            for name in CHECK_NAMES:
                c = counts[name]
                echo(f"{name:<26}{c['pass']:>7}{c['fail']:>7}{c['not_checkable']:>7}")
            for name in CHECK_NAMES:
                for label, n in sorted(reasons[name].items(), key=lambda kv: -kv[1])[:5]:
                    echo(f"  {name} × {n}: {label}")
            echo(f"prefix-cache breaks: {len(breaks)}")
            for line in breaks:
                echo(line)
            bad = [r for r in ledgers if r["error"]]
            if bad:
                echo(f"ledgers not replayable: {len(bad)}")
                for r in bad:
                    at = f" (line {r['line']})" if r["line"] else ""
                    echo(f"  {r['ledger']}{at}: {r['error']}")
            if object_problems:
                echo(f"object problems: {len(object_problems)}")
                for ledger, p in object_problems:
                    echo(f"  {ledger}: {p}")
        if any_fail or object_problems:
            raise typer.Exit(1)


def _keyless_v7(home: Path, as_json: bool, counts: dict, conversation_dirs, needs: dict) -> None:  # noqa: ANN001
    """A 7.0 home without --keys: nothing replayed; what each check needs the keys for."""
    import json

    dirs = [shown(str(d)) for d in conversation_dirs(home)]
    why = "a 7.0 ledger: its frames and objects are sealed; give --keys"
    if as_json:
        from vakaudit.schemas import schema_version

        doc = {"schema_version": schema_version("replay"), "steps": [], "summary": counts,
               "ledgers": [{"ledger": d, "steps": 0, "error": why, "line": None} for d in dirs],
               "needs_keys": {str(k): v for k, v in needs.items()}}
        typer.echo(json.dumps(doc, ensure_ascii=False, indent=2))
        return
    typer.echo(f"steps replayed: 0 ({len(dirs)} 7.0 ledgers; their frames and objects are sealed: give --keys)")
    for name, what in needs.items():
        typer.echo(f"{name}: needs keys: {what}")
