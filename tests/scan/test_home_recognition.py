"""What is a vak home, and where is it when none is named (home.md §1-2, baseline7.md §1.4, §2.1).

A directory with nothing vak writes (an empty folder, the project's docs/) is "not a vak home":
every command that takes a HOME exits 2 with one line saying what was looked for. An empty but
real home (an empty ``agents/``) is still a home, and so is every committed sample home.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from vakaudit.cli import app
from vakaudit.errors import HomeNotFoundError, NotAHomeError
from vakaudit.scan.paths import home_candidates, is_vak_home, resolve_home

REPO = Path(__file__).resolve().parents[2]

#: every command that takes a HOME, called with it (and what else it needs)
HOME_COMMANDS = {
    "scan": lambda h, t: ["scan", h, "--out", str(t / "scan"), "-q"],
    "verify": lambda h, t: ["verify", h],
    "seal": lambda h, t: ["seal", h, "-o", str(t / "seal.json")],
    "timeline": lambda h, t: ["timeline", h, "-o", str(t / "t.jsonl")],
    "replay": lambda h, t: ["replay", h],
    "report": lambda h, t: ["report", h, "--scan-out", str(t / "scan"), "-o", str(t / "r.html"), "-q"],
    "analyze": lambda h, t: ["analyze", h, "--scan-out", str(t / "scan")],
    "sql": lambda h, t: ["sql", h, "select 1", "--scan-out", str(t / "scan")],
}


@pytest.mark.parametrize("command", sorted(HOME_COMMANDS))
@pytest.mark.parametrize("where", ["empty", "docs"])
def test_a_directory_with_nothing_vak_writes_is_not_a_vak_home(
    command: str, where: str, tmp_path: Path
) -> None:
    # `vakaudit verify /tmp/empty` and `verify docs` printed "verified 0 ledger(s)" and exited 0
    folder = tmp_path / "empty"
    folder.mkdir()
    target = str(folder) if where == "empty" else str(REPO / "docs")
    result = CliRunner().invoke(app, HOME_COMMANDS[command](target, tmp_path / "o"))
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vakaudit: not a vak home:"), result.output
    assert "tenants/, agents/, sessions/" in lines[0]
    assert not (tmp_path / "o").exists()


def test_an_empty_but_real_home_is_a_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "agents").mkdir(parents=True)
    result = CliRunner().invoke(app, ["verify", str(home)])
    assert result.exit_code == 0, result.output
    assert "verified 0 ledger(s)" in result.output


@pytest.mark.parametrize(
    "layout",
    [
        ("tenants",),  # G3 / the 7.0 baseline: tenants/ marks a data home
        ("agents", "vak"),  # G2 agent homes
        ("sessions",),  # G1 flat ledgers
    ],
)
def test_each_layout_marker_makes_a_home(layout: tuple[str, ...], tmp_path: Path) -> None:
    (tmp_path.joinpath(*layout)).mkdir(parents=True)
    assert is_vak_home(tmp_path)


def test_a_side_ledger_at_the_root_makes_a_home_but_a_wildcard_name_does_not(tmp_path: Path) -> None:
    (tmp_path / "notes.log").write_text("x")  # *.log is a kind's wildcard, no mark of a home
    (tmp_path / "README.md").write_text("x")
    assert not is_vak_home(tmp_path)
    (tmp_path / "cost-log.jsonl").write_text("")
    assert is_vak_home(tmp_path)


def test_a_symlinked_marker_is_no_mark(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "agents").mkdir(parents=True)
    home = tmp_path / "h"
    home.mkdir()
    (home / "agents").symlink_to(real / "agents", target_is_directory=True)
    assert not is_vak_home(home)


def test_every_committed_sample_home_is_a_home() -> None:
    homes = [REPO / "sample_homes" / "tiny", *sorted((REPO / "sample_homes" / "broken").glob("*/home"))]
    assert len(homes) > 20
    assert [h for h in homes if not is_vak_home(h)] == []


def test_not_a_home_is_a_home_not_found_error(tmp_path: Path) -> None:
    with pytest.raises(NotAHomeError):
        resolve_home(tmp_path)
    assert issubclass(NotAHomeError, HomeNotFoundError)


# --- discovery with no HOME ---------------------------------------------------------------------


def test_discovery_order_is_vak_home_then_the_platform_data_root(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    assert [p for _, p in home_candidates(env)][-1] == tmp_path / ".local" / "share" / "vak"
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    assert next(p for _, p in home_candidates(env) if p) == tmp_path / "xdg" / "vak"
    env["VAK_HOME"] = str(tmp_path / "vh")
    assert next(p for _, p in home_candidates(env) if p) == tmp_path / "vh"


def test_no_home_argument_uses_the_platform_data_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VAK_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    data = tmp_path / ".local" / "share" / "vak"
    (data / "agents").mkdir(parents=True)
    assert resolve_home(None) == data
    result = CliRunner().invoke(app, ["verify"])
    assert result.exit_code == 0, result.output


def test_no_home_found_lists_the_places_tried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VAK_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    result = CliRunner().invoke(app, ["verify"])
    assert result.exit_code == 2
    line = result.output.strip()
    assert "$VAK_HOME (not set)" in line and "$XDG_DATA_HOME/vak (not set)" in line
    assert str(tmp_path / ".local" / "share" / "vak") in line
    monkeypatch.setenv("VAK_HOME", str(tmp_path / "missing"))
    result = CliRunner().invoke(app, ["scan", "-q"])
    assert result.exit_code == 2
    assert f"$VAK_HOME = {tmp_path / 'missing'} (not a directory)" in result.output
