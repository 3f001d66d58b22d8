"""The console script registers only the command its arguments name: ``vakaudit verify …`` imports
the module of ``verify`` and no other command's (each fresh process below); the root's help, an
unknown name and ``vakaudit.cli.app`` see every command, in the same order as before."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import pytest
import typer.main

import vakaudit.cli
from vakaudit.cli import app

# the command modules of vakaudit.cli (each registers the command it is named after)
COMMANDS = sorted(m.name for m in pkgutil.iter_modules(vakaudit.cli.__path__) if not m.name.startswith("_"))

# runs vakaudit.cli.main() with the given arguments, then prints the command modules it imported;
# with a second argument, the whole app is registered first (as before commands were lazy)
_WRAPPER = """
import json, sys
from vakaudit.cli import main
if len(sys.argv) > 2:
    from vakaudit.cli import app
sys.argv = ["vakaudit", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
import vakaudit.cli as cli
loaded = sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("vakaudit.cli.") and not m.rsplit(".", 1)[1].startswith("_"))
print("result:" + json.dumps({"code": code, "loaded": loaded}))
"""


def _fresh(args: list[str], extra: str = "", *, whole: bool = False) -> tuple[dict, str, str]:
    argv = [sys.executable, "-c", _WRAPPER + extra, json.dumps(args), *(["whole"] if whole else [])]
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    lines = [line for line in out.stdout.splitlines() if line.startswith("result:")]
    assert lines, out.stdout + out.stderr
    return json.loads(lines[-1].removeprefix("result:")), out.stdout, out.stderr


def test_every_command_module_registers_the_command_it_is_named_after() -> None:
    assert sorted(typer.main.get_command(app).commands) == COMMANDS


def test_verify_help_imports_no_other_command_module() -> None:
    result, stdout, _ = _fresh(["verify", "--help"])
    assert result == {"code": 0, "loaded": ["verify"]}
    assert "Usage: vakaudit verify [OPTIONS] [home]" in stdout and "--debug" in stdout


@pytest.mark.parametrize("name", COMMANDS)
def test_a_command_named_imports_only_its_own_module(name: str) -> None:
    for args in ([name, "--help"], ["--debug", name, "--help"]):
        result, stdout, stderr = _fresh(args)
        assert result == {"code": 0, "loaded": [name]}, stderr
        assert stdout.startswith(f"Usage: vakaudit {name} "), stdout
        whole, whole_stdout, whole_stderr = _fresh(args, whole=True)
        assert whole == {"code": 0, "loaded": COMMANDS}
        assert (stdout.replace(json.dumps(result), ""), stderr) == (whole_stdout.replace(json.dumps(whole), ""), whole_stderr)


def test_the_root_help_and_an_unknown_command_see_every_command() -> None:
    result, stdout, _ = _fresh(["--help"])
    assert result == {"code": 0, "loaded": COMMANDS}
    assert stdout.startswith("Usage: vakaudit [OPTIONS] COMMAND [ARGS]...")
    for name in COMMANDS:
        assert f"  {name} " in stdout or f"  {name}\n" in stdout, name

    result, _, stderr = _fresh(["verfy", "x"])
    assert result == {"code": 2, "loaded": COMMANDS}
    assert "No such command 'verfy'" in stderr


def test_the_whole_app_after_one_command_lists_every_command_in_discovery_order() -> None:
    """A process that ran one command and then uses ``vakaudit.cli.app`` sees the app unchanged (the
    commands in registration order, then the groups: ``fleet``)."""
    extra = (
        "names = list(typer.main.get_command(cli.app).commands)\n"
        "print('names:' + json.dumps(names))\n"
    )
    _, stdout, stderr = _fresh(["verify", "--help"], "import typer.main\n" + extra)
    names = [line for line in stdout.splitlines() if line.startswith("names:")]
    assert names, stdout + stderr
    assert json.loads(names[-1].removeprefix("names:")) == list(typer.main.get_command(app).commands)
