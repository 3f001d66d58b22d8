"""Fixtures of the scan tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from scan_homes import build_small_home


@pytest.fixture
def small_home(tmp_path: Path) -> Path:
    """Two ledgers (one in a nested agent home), a cost log, an undeclared file."""
    return build_small_home(tmp_path)
