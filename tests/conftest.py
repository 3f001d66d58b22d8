"""Shared fixtures: where the vak samples and the committed sample homes live."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
VAK_SAMPLES = SHARED / "vak-samples"
SAMPLE_HOMES = REPO / "sample_homes"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files from current output")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(scope="session")
def vak_samples() -> Path:
    if not VAK_SAMPLES.is_dir():
        pytest.fail(f"vak samples not found at {VAK_SAMPLES}; the shared/ folder must sit beside the repo")
    return VAK_SAMPLES


@pytest.fixture(scope="session")
def sample_homes() -> Path:
    return SAMPLE_HOMES
