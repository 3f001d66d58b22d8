"""The console script hands what the process holds to the collector's permanent generation as it
exits (the interpreter's shutdown then skips its last cyclic collections); a caller of the app in
its own process (CliRunner, a library) keeps its collector as it was."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from vakaudit.cli import app

TINY = Path(__file__).resolve().parents[1] / "sample_homes" / "tiny"

_WRAPPER = """
import atexit, gc, json, sys
atexit.register(lambda: print("frozen:" + json.dumps(gc.get_freeze_count()), file=sys.stderr))
from vakaudit.cli import main
sys.argv = ["vakaudit", *json.loads(sys.argv[1])]
main()
"""


def _console(*args: str) -> tuple[int, int, str]:
    out = subprocess.run([sys.executable, "-c", _WRAPPER, json.dumps(list(args))],
                         capture_output=True, text=True, check=False)  # fmt: skip
    frozen = [line for line in out.stderr.splitlines() if line.startswith("frozen:")]
    assert frozen, out.stderr
    return out.returncode, int(frozen[-1].removeprefix("frozen:")), out.stdout


def test_the_console_script_exits_with_its_objects_frozen_and_its_output_whole() -> None:
    code, frozen, stdout = _console("verify", str(TINY), "--json")
    assert code == 0
    assert frozen > 10_000  # the modules, the app and the report
    assert json.loads(stdout)["ledger_count"] > 0  # the output is complete and flushed


def test_an_error_exit_is_frozen_too_and_keeps_its_code(tmp_path: Path) -> None:
    code, frozen, _ = _console("verify", str(tmp_path / "no-such-home"))
    assert code == 2
    assert frozen > 0


def test_the_app_run_in_this_process_freezes_nothing() -> None:
    before = gc.get_freeze_count()
    result = CliRunner().invoke(app, ["verify", str(TINY), "--json"])
    assert result.exit_code == 0, result.output
    assert gc.get_freeze_count() == before
