"""vakaudit's own CI gate: `vakaudit check` on sample_homes/tiny against the committed baseline passes,
as a real process, with and without the compiled line scanner (the baseline holds no paths or times,
so it does not depend on the checkout, the interpreter or the clock)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BASELINE = REPO / "examples" / "ci-baseline-tiny.json"


@pytest.mark.parametrize("native", ["1", "0"])
def test_tiny_sample_home_passes_check_against_the_committed_baseline(tmp_path: Path, native: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "VAKAUDIT_NO_NATIVE"}
    if native == "0":
        env["VAKAUDIT_NO_NATIVE"] = "1"
    r = subprocess.run(
        [sys.executable, "-m", "vakaudit", "check", "sample_homes/tiny", "--baseline", str(BASELINE),
         "--scan-out", str(tmp_path / "scan"), "--json"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    doc = json.loads(r.stdout)
    assert doc["status"] == "pass" and doc["failed"] == 0 and doc["checked"] > 0


def test_committed_baseline_holds_no_paths_or_times() -> None:
    text = BASELINE.read_text(encoding="utf-8")
    doc = json.loads(text)
    assert "/" not in json.dumps({k: v for k, v in doc.items() if k != "undeclared_files"})
    assert not any(key.endswith("_at") for key in doc)
    assert "2026-" not in text
