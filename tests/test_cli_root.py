from __future__ import annotations

import subprocess
import sys

from typer.testing import CliRunner

from vakaudit import __version__
from vakaudit.cli import app


def test_version_flag_prints_package_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"vakaudit {__version__}"


def test_python_dash_m_runs_the_cli() -> None:
    out = subprocess.run([sys.executable, "-m", "vakaudit", "--help"], capture_output=True, text=True, check=True)
    assert "Usage" in out.stdout and "vakaudit" in out.stdout


def test_a_missing_home_is_a_usage_error_with_exit_2_under_the_runner_too(tmp_path) -> None:
    result = CliRunner().invoke(app, ["verify", str(tmp_path / "no-such-home")])
    assert result.exit_code == 2
    assert "vakaudit:" in result.output


def test_a_missing_home_exits_2_from_the_console_script(tmp_path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "vakaudit", "scan", str(tmp_path / "no-such-home"), "--quiet"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    assert out.stderr.startswith("vakaudit:") and out.stderr.count("\n") == 1


def _command_names() -> list[str]:
    """Every command of the app, from the click group Typer builds (so a new command is included)."""
    import typer.main

    group = typer.main.get_command(app)
    return sorted(group.commands)


def test_every_command_is_enumerated() -> None:
    names = _command_names()
    # the commands the README's table lists, at least
    assert {"scan", "kinds", "analyze", "sql", "readscale", "report", "replay", "verify", "seal", "timeline", "synth"} <= set(names)


def test_debug_is_accepted_after_every_command_name() -> None:
    for name in _command_names():
        result = CliRunner().invoke(app, [name, "--help"])
        assert result.exit_code == 0, name
        assert "--debug" in result.output, name
        before = CliRunner().invoke(app, ["--debug", name, "--help"])
        after = CliRunner().invoke(app, [name, "--debug", "--help"])
        assert before.exit_code == 0 and after.exit_code == 0, name
        assert "No such option" not in after.output, name


def test_debug_after_the_command_shows_the_traceback_like_debug_before_it(tmp_path) -> None:
    missing = str(tmp_path / "no-such-home")
    runs = {
        "before": ["--debug", "report", missing, "-o", str(tmp_path / "r.html")],
        "after": ["report", missing, "-o", str(tmp_path / "r.html"), "--debug"],
        "none": ["report", missing, "-o", str(tmp_path / "r.html")],
    }
    out = {
        k: subprocess.run([sys.executable, "-m", "vakaudit", *args], capture_output=True, text=True)
        for k, args in runs.items()
    }
    for k in ("before", "after"):
        assert out[k].returncode == 2, k
        assert "Traceback (most recent call last)" in out[k].stderr, k
        assert out[k].stderr.rstrip().endswith(out["none"].stderr.rstrip()), k
    assert out["none"].returncode == 2
    assert "Traceback" not in out["none"].stderr and out["none"].stderr.count("\n") == 1
    assert not (tmp_path / "r.html").exists()


def test_debug_after_a_command_does_not_stick_to_the_next_run(tmp_path) -> None:
    from vakaudit.cli import _errors

    CliRunner().invoke(app, ["kinds", "--debug"])
    assert _errors.DEBUG is True
    CliRunner().invoke(app, ["kinds"])
    assert _errors.DEBUG is False


def test_no_arguments_prints_the_help_and_exits_0() -> None:
    out = subprocess.run([sys.executable, "-m", "vakaudit"], capture_output=True, text=True)
    assert out.returncode == 0
    assert out.stdout.startswith("Usage:") and "Commands" in out.stdout and "report" in out.stdout
    assert out.stderr == ""
    runner = CliRunner().invoke(app, [])
    assert runner.exit_code == 0 and runner.output.startswith("Usage:")
