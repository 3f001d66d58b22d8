"""Fixtures of the analyze tests: a synthetic tiny home, its scan and its analysis (built once)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vakaudit.synth import build_home

    out = tmp_path_factory.mktemp("analyze") / "tiny-home"
    build_home(out, profile="tiny", fsync=False)
    return out


@pytest.fixture(scope="session")
def tiny_scan(tiny_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vakaudit.scan import scan_home

    out = tmp_path_factory.mktemp("analyze") / "tiny-scan"
    scan_home(tiny_home, out=out, jobs=1)
    return out


@pytest.fixture(scope="session")
def tiny_analysis(tiny_scan: Path):
    from vakaudit.analyze import analyze

    return analyze(tiny_scan)
