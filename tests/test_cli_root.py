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
