"""One progress display for every long command: on a terminal's stderr only, never on stdout."""

from __future__ import annotations

import itertools
import json
import os
import pty
import select
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vakaudit.cli import app

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "sample_homes" / "tiny"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(TINY, home, symlinks=True)
    return home


def test_under_clirunner_report_prints_no_raw_progress_lines(home: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["report", str(home), "-o", str(tmp_path / "r.html"), "--scan-out", str(tmp_path / "s")])
    assert res.exit_code == 0, res.output
    assert "ScanProgress(" not in res.output
    assert "metric " not in res.output
    assert res.output.strip().splitlines() == [f"wrote {tmp_path / 'r.html'} ({(tmp_path / 'r.html').stat().st_size:,} bytes)"]


def test_a_reused_cached_scan_says_where_in_one_line_and_quiet_silences_it(home: Path, tmp_path: Path) -> None:
    scan = tmp_path / "s"
    first = CliRunner().invoke(app, ["sql", str(home), "select count(*) AS n from ledger_file", "--json", "--scan-out", str(scan)])
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout) == [{"n": 6}]  # the sample home's 6 session ledgers
    assert "reused" not in first.stderr
    again = CliRunner().invoke(app, ["sql", str(home), "select count(*) AS n from ledger_file", "--json", "--scan-out", str(scan)])
    assert json.loads(again.stdout) == [{"n": 6}]
    assert again.stderr == f"scan: reused the cached scan in {scan} (nothing changed in the home)\n"
    quiet = CliRunner().invoke(app, ["sql", str(home), "select 1 AS n", "--json", "--scan-out", str(scan), "-q"])
    assert quiet.stderr == "" and json.loads(quiet.stdout) == [{"n": 1}]


def _run_with_stderr_on_a_terminal(args: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    """Runs ``python -m vakaudit ARGS`` with stderr on a pseudo-terminal and stdout on a pipe."""
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100", "TERM": "xterm"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "vakaudit", *args], stdout=subprocess.PIPE, stderr=follower, cwd=cwd, env=env
    )
    os.close(follower)
    # stdout is drained on a thread: a result larger than the pipe's buffer must not block the
    # process while this loop waits on stderr
    chunks: list[bytes] = []
    drain = threading.Thread(target=lambda: chunks.append(proc.stdout.read() if proc.stdout else b""))
    drain.start()
    err = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            proc.kill()
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the follower side closed: the process ended
            break
        if not chunk:
            break
        err += chunk
    drain.join(timeout=60)
    out = b"".join(chunks)
    rc = proc.wait(timeout=60)
    os.close(leader)
    return rc, out, err


def test_on_a_terminal_the_scan_progress_goes_to_stderr_and_stdout_has_only_the_result(home: Path, tmp_path: Path) -> None:
    rc, out, err = _run_with_stderr_on_a_terminal(
        ["analyze", str(home), "--json", "--scan-out", str(tmp_path / "s")], tmp_path
    )
    assert rc == 0, err
    result = json.loads(out)  # stdout is the JSON result and nothing else
    assert result["headline"]["sessions"] == 6
    assert b"scanning" in err  # the progress display, drawn on the terminal
    assert b"ScanProgress(" not in err and b"ScanProgress(" not in out


def test_quiet_draws_no_progress_even_on_a_terminal(home: Path, tmp_path: Path) -> None:
    rc, out, err = _run_with_stderr_on_a_terminal(
        ["scan", str(home), "--out", str(tmp_path / "s"), "--quiet"], tmp_path
    )
    assert rc == 0, err
    assert out == b"" and err == b""


def test_verify_reports_progress_files_and_bytes_it_reads(home: Path) -> None:
    from vakaudit.forensics import VerifyProgress, verify_home

    events: list[VerifyProgress] = []
    report = verify_home(home, jobs=1, progress=events.append)
    total = events[0].files_total
    assert (events[0].files_done, events[0].bytes_done, events[0].rel_path) == (0, 0, None)
    assert (events[-1].files_done, events[-1].bytes_done) == (total, events[-1].bytes_total)
    assert len(events) == total + 1  # one before the first file, one after each
    assert [e.files_done for e in events] == list(range(total + 1))
    assert all(a.bytes_done <= b.bytes_done <= b.bytes_total for a, b in itertools.pairwise(events))
    named = [e.rel_path for e in events[1:]]
    assert len(set(named)) == total
    ledgers = {p.relative_to(home).as_posix() for p in home.glob("**/sessions/*/*.jsonl")}
    assert len(ledgers) == 6 and ledgers <= set(named) and report.ledger_count == 6
    assert "cost-log.jsonl" in named  # a side ledger read by its kind's reader
    assert events[-1].bytes_total == sum((home / rel).stat().st_size for rel in named)


def test_replay_reports_progress_per_ledger_and_the_steps_so_far(home: Path) -> None:
    from vakaudit.replay import ReplayProgress, iter_requests

    events: list[ReplayProgress] = []
    steps = sum(1 for _ in iter_requests(home, progress=events.append))
    ledgers = sorted(home.glob("**/sessions/*/*.jsonl"))
    assert [(e.ledgers_done, e.ledgers_total) for e in events] == [(i, len(ledgers)) for i in range(len(ledgers) + 1)]
    assert [e.ledger for e in events] == [*map(str, ledgers), None]
    assert events[0].steps_done == 0 and events[-1].steps_done == steps > 0
    assert all(a.steps_done <= b.steps_done for a, b in itertools.pairwise(events))


def test_replay_on_error_reports_a_bad_ledger_and_replays_the_others(home: Path) -> None:
    from vakaudit.replay import iter_requests

    ledgers = sorted(home.glob("**/sessions/*/*.jsonl"))
    ledgers[0].write_bytes(b"\xff\xfe not a ledger\n")
    errors: list[Path] = []
    steps = list(iter_requests(home, on_error=lambda path, exc: errors.append(path)))
    assert errors == [ledgers[0]]
    assert steps and str(ledgers[0]) not in {s.ledger_path for s in steps}


def test_verify_and_replay_print_no_progress_off_a_terminal(home: Path, tmp_path: Path) -> None:
    for args in (["verify", str(home), "--json"], ["replay", str(home), "--json"], ["verify", str(home)],
                 ["replay", str(home)]):  # fmt: skip
        res = CliRunner().invoke(app, args)
        assert res.exit_code in (0, 1), res.output
        assert res.stderr == "", (args, res.stderr)
        if "--json" in args:
            json.loads(res.stdout)


@pytest.mark.parametrize("command", ["verify", "replay"])
def test_on_a_terminal_verify_and_replay_draw_progress_on_stderr_only(command: str, home: Path, tmp_path: Path) -> None:
    # replay's JSON outgrows a pipe buffer the helper reads only at the end: its text summary instead
    args = [command, str(home), "--json"] if command == "verify" else [command, str(home)]
    rc, out, err = _run_with_stderr_on_a_terminal(args, tmp_path)
    assert rc in (0, 1), err
    if command == "verify":
        json.loads(out)  # stdout is the JSON result and nothing else
    else:
        assert out.startswith(b"steps replayed: ") and b"replaying" not in out
    assert (b"verifying" if command == "verify" else b"replaying") in err
    rc, out, err = _run_with_stderr_on_a_terminal([*args, "-q"], tmp_path)
    assert rc in (0, 1) and err == b"" and out
