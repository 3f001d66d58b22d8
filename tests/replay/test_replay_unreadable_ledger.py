"""`vakaudit replay` on ledgers it cannot read: not replayable (with the reason), the others replayed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

import vakaudit.cli
from tests.hostile_homes import LEDGER, REPO, SESSIONS, tiny_copy
from vakaudit.replay import iter_ledger_paths, iter_requests

runner = CliRunner()


def _steps_per_ledger(out: dict) -> dict[str, dict]:
    return {Path(row["ledger"]).name: row for row in out["ledgers"]}


@pytest.fixture
def home(tmp_path):
    return tiny_copy(tmp_path / "home")


# Run as root, the child replays once (which imports every module it needs: the interpreter's own
# folder is not readable by nobody), drops to uid 65534, then replays again as the test.
_AS_NOBODY = """
import io, json, os, sys
from typer.testing import CliRunner
import vakaudit.cli
home = sys.argv[1]
runner = CliRunner()
assert runner.invoke(vakaudit.cli.app, ["replay", home, "--json"]).exit_code == 0
if os.geteuid() == 0:
    os.setgid(65534)
    os.setuid(65534)
r = runner.invoke(vakaudit.cli.app, ["replay", home, "--json"])
sys.stdout.write(json.dumps({"exit_code": r.exit_code, "stdout": r.stdout, "exception": repr(r.exception)}))
"""


def test_replay_of_a_mode_000_ledger_as_non_root_is_not_replayable() -> None:
    # a home nobody (uid 65534) can walk: pytest's tmp_path sits in a root-only folder
    base = Path(tempfile.mkdtemp(prefix="vakaudit-mode000-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        home = tiny_copy(base / "home")
        (home / LEDGER).chmod(0o000)
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        r = subprocess.run([sys.executable, "-c", _AS_NOBODY, str(home)], cwd=base, env=env,
                           capture_output=True, timeout=300)  # fmt: skip
        assert r.returncode == 0, r.stderr.decode()
        res = json.loads(r.stdout)
        assert res["exit_code"] == 0, res
        by = _steps_per_ledger(json.loads(res["stdout"]))
        assert "cannot be opened for reading: Permission denied" in by[LEDGER.name]["error"]
        assert by[LEDGER.name]["steps"] == 0
        assert sum(row["steps"] for row in by.values()) > 0  # the other ledgers were replayed
    finally:
        shutil.rmtree(base)


def test_replay_of_a_fifo_named_like_a_ledger_does_not_block(home) -> None:
    os.mkfifo(home / SESSIONS / "019fc57b-1111-7066-a68c-cce18aef18b7.jsonl")
    r = runner.invoke(vakaudit.cli.app, ["replay", str(home), "--json"])
    assert r.exit_code == 0, r.output
    by = _steps_per_ledger(json.loads(r.stdout))
    assert "not a regular file" in by["019fc57b-1111-7066-a68c-cce18aef18b7.jsonl"]["error"]
    assert by[LEDGER.name]["error"] is None and by[LEDGER.name]["steps"] > 0


def test_ledger_that_vanished_after_listing_is_not_found_and_the_rest_replay(home) -> None:
    # the CLI's loop: list once, then replay each listed path
    paths = list(iter_ledger_paths(home))
    gone = home / LEDGER
    assert gone in paths
    gone.unlink()
    steps = 0
    errors = []
    for p in paths:
        try:
            steps += sum(1 for _ in iter_requests(p))
        except FileNotFoundError as exc:
            errors.append((p, str(exc)))
    assert [p for p, _ in errors] == [gone]
    assert "No such file or directory" in errors[0][1]
    assert steps > 0


def test_replay_cli_on_a_ledger_path_that_is_gone_is_a_usage_error(home) -> None:
    r = runner.invoke(vakaudit.cli.app, ["replay", str(home / SESSIONS / "nope.jsonl")])
    assert r.exit_code == 2
    assert "does not exist" in r.output

