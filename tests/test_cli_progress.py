"""One progress display for every long command: on a terminal's stderr only, never on stdout."""

from __future__ import annotations

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
