"""The console script in a new interpreter, and what that process had imported when it ended.

Import-time tests (a command must not load what its input does not need) cannot run in the test
process, which has imported everything already: :func:`run_cli` starts one interpreter, runs
``vakaudit.cli.main()`` once per argument list in it, and reports the last exit code and every
module in ``sys.modules`` at the end.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

# runs the CLI once per argument list (main() always ends in SystemExit) until one fails, then prints
# the exit code of the last run and the modules the process had imported, on stderr after whatever
# the CLI wrote
_WRAPPER = """
import json, sys
from vakaudit.cli import main
code = 0
for argv in json.loads(sys.argv[1]):
    sys.argv = ["vakaudit", *argv]
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    if code:
        break
print("modules:" + json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


@dataclass(frozen=True)
class Fresh:
    code: int | str | None  # the exit code of the last run (of the first that failed); None or 0: success
    modules: frozenset[str]  # every module imported by the end
    stdout: str
    stderr: str


def run_cli(*runs: list[str]) -> Fresh:
    """``vakaudit ARGS`` for each argument list, one after the other in one new interpreter (up to
    the first that fails)."""
    out = subprocess.run([sys.executable, "-c", _WRAPPER, json.dumps(list(runs))],
                         capture_output=True, text=True, check=False)  # fmt: skip
    lines = [line for line in out.stderr.splitlines() if line.startswith("modules:")]
    assert lines, out.stdout + out.stderr
    got = json.loads(lines[-1].removeprefix("modules:"))
    return Fresh(got["code"], frozenset(got["modules"]), out.stdout, out.stderr)
