"""``vakaudit verify`` runs with the cyclic garbage collector off and leaves it as it found it."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from typer.testing import CliRunner

import vakaudit.forensics as forensics
from vakaudit.cli import app

TINY = Path(__file__).resolve().parents[2] / "sample_homes" / "tiny"


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_off_during_verify_and_as_it_was_after(enabled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []

    original = forensics.verify_home

    def spy(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - verify_home's own signature
        seen.append(gc.isenabled())
        return original(*args, **kwargs)

    monkeypatch.setattr(forensics, "verify_home", spy)
    (gc.enable if enabled else gc.disable)()
    try:
        result = CliRunner().invoke(app, ["verify", str(TINY), "--json"])
        after = gc.isenabled()
    finally:
        gc.enable()
    assert result.exit_code == 0, result.output
    assert seen == [False]
    assert after is enabled


def test_an_error_inside_verify_leaves_the_collector_on(tmp_path: Path) -> None:
    gc.enable()
    result = CliRunner().invoke(app, ["verify", str(tmp_path / "no-such-home")])
    assert result.exit_code == 2
    assert gc.isenabled()
