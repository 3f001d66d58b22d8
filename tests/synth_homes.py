"""Synthetic 7.0 homes for tests: ``vakaudit synth --layout v7`` run as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def synth_v7(root: Path, *args: str) -> tuple[Path, Path]:
    """``vakaudit synth ROOT/home --layout v7 --keys-out ROOT/keys.json --no-fsync -q ARGS``, in a
    fresh process: the home and its key file (beside the home, never inside)."""
    home, keys = root / "home", root / "keys.json"
    subprocess.run([sys.executable, "-m", "vakaudit", "synth", str(home), "--layout", "v7", "--keys-out", str(keys),
                    "--no-fsync", "-q", *args], check=True, capture_output=True)
    return home, keys
