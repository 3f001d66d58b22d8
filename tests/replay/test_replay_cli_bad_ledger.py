"""`vakaudit replay` on a home holding a ledger that cannot be read: reported, the rest replayed, no exit 2."""

from __future__ import annotations

import json
import shutil

from typer.testing import CliRunner

import vakaudit.cli

runner = CliRunner()


def _home(sample_homes, tmp_path):
    """The invalid_utf8 sample home plus the clean sample's ledger under another workspace key."""
    home = tmp_path / "home"
    shutil.copytree(sample_homes / "broken" / "invalid_utf8" / "home", home, symlinks=True)
    clean = next((sample_homes / "broken" / "clean" / "home").glob("agents/vak/sessions/*/*.jsonl"))
    good = home / "agents" / "vak" / "sessions" / "0000000000000000" / "s-clean.jsonl"
    good.parent.mkdir(parents=True)
    shutil.copyfile(clean, good)
    bad = next(p for p in home.glob("agents/vak/sessions/*/*.jsonl") if p != good)
    raw = bad.read_bytes().split(b"\n")
    assert b"\xff" in raw[1]  # the defect is on line 2 (sample_homes/README.md)
    return home, good, bad


def test_bad_ledger_is_reported_and_the_others_replay(sample_homes, tmp_path) -> None:
    home, good, bad = _home(sample_homes, tmp_path)
    r = runner.invoke(vakaudit.cli.app, ["replay", str(home), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    by = {row["ledger"]: row for row in out["ledgers"]}
    assert by[str(bad)]["line"] == 2
    assert "not valid UTF-8" in by[str(bad)]["error"]
    assert by[str(bad)]["steps"] == 0
    assert by[str(good)]["error"] is None
    assert by[str(good)]["steps"] == len(out["steps"]) == 1  # the clean sample has one execute receipt


def test_bad_ledger_line_in_the_table(sample_homes, tmp_path) -> None:
    home, _, bad = _home(sample_homes, tmp_path)
    r = runner.invoke(vakaudit.cli.app, ["replay", str(home)])
    assert r.exit_code == 0, r.output
    assert "steps replayed: 1" in r.stdout
    assert "ledgers not replayable: 1" in r.stdout
    assert f"{bad} (line 2): " in r.stdout


def test_only_the_bad_ledger(sample_homes) -> None:
    home = sample_homes / "broken" / "invalid_utf8" / "home"
    r = runner.invoke(vakaudit.cli.app, ["replay", str(home), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["steps"] == []
    assert [row["line"] for row in out["ledgers"]] == [2]
