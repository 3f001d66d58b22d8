"""The one line analyze and report print for a 7.0 home: locked, it names what needs --keys;
unlocked (keys given, or a scan that opened every frame), it says every figure applies."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from vakaudit.cli import app

SAMPLES = Path(__file__).resolve().parents[1] / "sample_homes"
HOME, KEYS = SAMPLES / "v7", SAMPLES / "v7-keys.json"


def _note(args: list[str]) -> str:
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("note: ")]
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_a_locked_7_0_home_names_what_needs_keys_and_an_unlocked_one_does_not(tmp_path: Path) -> None:
    locked = _note(["analyze", str(HOME), "--scan-out", str(tmp_path / "locked")])
    assert "per-turn figures need the plaintext" in locked and "--keys" in locked
    unlocked = _note(["analyze", str(HOME), "--keys", str(KEYS), "--scan-out", str(tmp_path / "open")])
    assert "unlocked: every figure applies" in unlocked and "need" not in unlocked
    # a scan remembers whether it opened every frame: the locked scan still says what needs keys
    assert "per-turn figures need the plaintext" in _note(["analyze", str(tmp_path / "locked")])
    assert "unlocked: every figure applies" in _note(["analyze", str(tmp_path / "open")])
