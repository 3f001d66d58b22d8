"""``vakaudit verify HOME``: fsck for a vak home (hash chains, entry trees, sidecars vs ledgers)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vakaudit.cli._keys import KEYS_HELP
from vakaudit.cli._params import Param
from vakaudit.cli._params import echo as _echo
from vakaudit.findings import Severity
from vakaudit.ledger.policy import TornPolicy
from vakaudit.names import shown

HELP = """Verify a vak home read-only: every session ledger's hash chain and entry tree, every file's
place in the home, and the sidecars and index against the ledgers.

Output: a table of findings (code, severity, file, line, byte offset, entry id, expected/actual,
message), or JSON with --json. With --since SEAL, also prove that every append-only file only grew
since `vakaudit seal` wrote SEAL.

A 7.0 home (tenants/): every session ledger and record chain directory is verified keyless (frame
links and lengths, torn tails, segments against seals.log, gaps versus retention drops, .sealing
leftovers), scope keys (an erased conversation is info, never damage), object grants and doc refs;
--keys also opens every sealed frame and object (ids checked against content).

\b
--torn (how bad lines are graded; RocksDB WAL recovery modes):
  strict         a torn last line is an error like any bad line
  tolerate-tail  a torn last line is a warning (vak skips it too); the default
  skip           every bad line (torn, unparseable, invalid UTF-8, too deep) is a warning
Chain breaks (prev_hash_mismatch, line_modified, lines_reordered) are errors in every mode.

\b
Exit codes:
  0  no finding at or above --fail-on (default: error)
  1  findings at or above --fail-on
  2  usage error (bad option, home not found, not a vak home, unreadable seal file)
"""


PARAMS = (
    Param("home", Path, None, "The vak home directory (default: $VAK_HOME, else the platform data home).", optional=True),
    Param("json_out", bool, False, "Print the report as JSON on stdout.", ("--json",)),
    Param("torn", TornPolicy, TornPolicy.TOLERATE_TAIL, "How bad lines are graded.", ("--torn",), case_sensitive=False),
    Param("fail_on", Severity, Severity.ERROR, "Exit 1 when a finding is at least this bad.", ("--fail-on",),
          case_sensitive=False),  # fmt: skip
    Param("since", Path, None, "A seal file from `vakaudit seal`: prove append-only growth since then.", ("--since",),
          optional=True),  # fmt: skip
    Param("deep", bool, False, "JSON-decode every ledger line, also those the hash chain already attests.", ("--deep",)),
    Param("no_cross", bool, False, "Skip the cross-artifact checks.", ("--no-cross",)),
    Param("keys", str, None, KEYS_HELP, ("--keys",), optional=True),
    Param("quiet", bool, False, "No progress bar on stderr.", ("--quiet", "-q")),
)


def register(app) -> None:  # noqa: ANN001 - a typer.Typer
    from vakaudit.cli._params import typer_callback

    app.command("verify", help=HELP)(typer_callback(run, PARAMS))


def run(
    home: Path | None, json_out: bool, torn: TornPolicy, fail_on: Severity, since: Path | None, deep: bool,
    no_cross: bool, keys: str | None, quiet: bool,
) -> int:  # fmt: skip
    """``vakaudit verify``: the exit code (1 when a finding is at or above ``fail_on``)."""
    import json

    with _no_cycle_collector():
        from vakaudit.forensics import verify_home

        seal = None
        if since is not None:  # the seal module (and what it imports) only for --since
            from vakaudit.forensics import read_seal

            seal = read_seal(since)
        from vakaudit.cli._keys import load_keys

        ring = load_keys(keys, home)
        from vakaudit.cli._progress import ProgressDisplay

        with ProgressDisplay(quiet=quiet) as display:
            # off a terminal the display draws nothing for verify: then nothing is counted for it
            report = verify_home(home, torn=torn, deep=deep, cross=not no_cross, since=seal, keys=ring,
                                 progress=display if display.live else None)  # fmt: skip
        failing = report.at_or_above(fail_on)
        if json_out:
            from vakaudit.schemas import schema_version

            doc = {"schema_version": schema_version("verify"), **report.to_dict()}
            doc["fail_on"] = fail_on.value
            doc["exit_code"] = 1 if failing else 0
            _echo(json.dumps(doc, indent=2, ensure_ascii=False))
        else:
            _print_table(report, fail_on, sum(f.count for f in failing))
        return 1 if failing else 0


@contextmanager
def _no_cycle_collector() -> Iterator[None]:
    """The cyclic garbage collector off while verify runs (as it was, after).

    Verify makes no reference cycles worth collecting (reference counting frees what it drops): on a
    2.4 GB JSONL home the collector ran 1,014 times, for 0.5 s of 4.8 s, and found 433 objects, and
    the peak memory is the same without it; on a 7.0 home of segments it costs ~3.5 ms of imports.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            # what verify allocated goes to the oldest generation, as a full collection would leave it,
            # rather than be traversed as one young generation by the first collection after enable()
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def _print_table(report, fail_on: Severity, failing: int) -> None:  # noqa: ANN001 - a HomeReport
    rows = [
        (
            f.severity.value,
            f.code.value,
            shown(f.rel_path or ""),
            _line_or_frame(f),
            "" if f.offset_bytes is None else str(f.offset_bytes),
            shown(f.message + _expected_actual(f)),
        )
        for f in report.findings
    ]
    head = ("SEVERITY", "CODE", "FILE", "LINE", "OFFSET", "MESSAGE")
    if rows:
        widths = [max(len(head[i]), *(len(r[i]) for r in rows)) for i in range(5)]
        widths = [min(w, 90) for w in widths]
        _echo("  ".join(h.ljust(w) for h, w in zip(head[:5], widths, strict=True)) + "  " + head[5])
        for r in rows:
            cells = [c if len(c) <= w else "…" + c[-(w - 1) :] for c, w in zip(r[:5], widths, strict=True)]
            _echo("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + "  " + r[5])
        _echo("")
    counts = report.counts()
    if report.segment_dirs:
        _echo(f"7.0 segment directories: {report.segment_dirs}, frames verified: {report.frames:,}")
    _echo(
        f"verified {report.ledger_count} ledger(s), {report.bytes_verified:,} bytes, {report.file_count} file(s) "
        f"({report.layout} layout, --torn {report.torn.value}); cross checks: "
        f"{', '.join(report.cross_checks) or 'none (their inputs are absent)'}"
    )
    _echo(
        "findings: " + ", ".join(f"{counts[s.value]} {s.value}" for s in reversed(Severity))
        + f"; {failing} at or above {fail_on.value}"
    )  # fmt: skip


def _line_or_frame(f) -> str:  # noqa: ANN001 - a Finding
    """A JSONL line number, or a 7.0 frame as ``seg <n> frame <i>`` (either part may be unknown)."""
    if f.line_no is not None:
        return str(f.line_no)
    parts = []
    if f.segment is not None:
        parts.append(f"seg {f.segment}")
    if f.frame_index is not None:
        parts.append(f"frame {f.frame_index}")
    return " ".join(parts)


def _expected_actual(f) -> str:  # noqa: ANN001 - a Finding
    if f.expected is None and f.actual is None:
        return ""
    return f" [expected {f.expected if f.expected is not None else '-'}, actual {f.actual if f.actual is not None else '-'}]"
