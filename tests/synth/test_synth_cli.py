"""`vakaudit synth` through the CLI runner (and once through the real entry point)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

import vakaudit.cli


def test_synth_writes_a_home(tmp_path: Path) -> None:
    out = tmp_path / "home"
    result = CliRunner().invoke(vakaudit.cli.app, ["synth", str(out), "--no-fsync", "--seed", "4", "-q"])
    assert result.exit_code == 0, result.output
    assert "24 turns" in result.output and "layout g2" in result.output
    assert list(out.glob("agents/vak/sessions/*/*.jsonl"))


def test_synth_turns_and_sessions(tmp_path: Path) -> None:
    out = tmp_path / "home"
    args = ["synth", str(out), "--turns", "40", "--sessions", "3", "--layout", "g1", "--no-fsync", "-q"]
    result = CliRunner().invoke(vakaudit.cli.app, args)
    assert result.exit_code == 0, result.output
    ledgers = list(out.glob("agents/vak/sessions/*/*.jsonl"))
    assert len(ledgers) == 3
    intents = sum(p.read_bytes().count(b'"kind":"intent"') for p in ledgers)
    assert intents == 40


def test_synth_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("keep me", encoding="utf-8")
    result = CliRunner().invoke(vakaudit.cli.app, ["synth", str(tmp_path)])
    assert result.exit_code == 2
    assert "not an empty directory" in result.output
    assert (tmp_path / "x.txt").read_text(encoding="utf-8") == "keep me"


def test_synth_rejects_unknown_options(tmp_path: Path) -> None:
    for args in (["--layout", "g3"], ["--profile", "huge"], ["--turns", "0"]):
        result = CliRunner().invoke(vakaudit.cli.app, ["synth", str(tmp_path / "h"), *args])
        assert result.exit_code == 2, (args, result.output)
    assert not (tmp_path / "h").exists()


def test_usage_errors_exit_2_from_the_entry_point(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "vakaudit", "synth", str(tmp_path / "h"), "--layout", "g3"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("vakaudit: unknown layout 'g3'")
