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
