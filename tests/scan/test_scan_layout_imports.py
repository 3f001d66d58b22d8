"""A scan imports what its home's layout needs, and no more.

A JSONL-era home is scanned without the 7.0 readers (``frames7``, ``chains7``, ``store7`` and the
``vakaudit.storage`` they stand on: their tables and part names are declared in ``tables7``).
Each scan runs in a fresh process, which prints what it had imported at exit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[2] / "sample_homes"

# runs the CLI once per argument list (a scan's exit raises SystemExit), then prints which of the
# watched modules the process had imported
_WRAPPER = """
import json, sys
from vakaudit.cli import main
runs, watched = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for argv in runs:
    sys.argv = ["vakaudit", *argv]
    try:
        main()
    except SystemExit as exc:
        if exc.code:
            raise
print("loaded:" + ",".join(m for m in watched if m in sys.modules))
"""


def _imported(runs: list[list[str]], watched: tuple[str, ...]) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", _WRAPPER, json.dumps(runs), json.dumps(watched)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().splitlines()[-1]
    assert last.startswith("loaded:"), out.stdout + out.stderr
    return [m for m in last.removeprefix("loaded:").split(",") if m]


def test_a_jsonl_home_is_scanned_without_the_7_0_readers(tmp_path: Path) -> None:
    scan = ["scan", str(SAMPLES / "tiny"), "--out", str(tmp_path / "scan"), "-q"]
    watched = ("vakaudit.scan.frames7", "vakaudit.scan.chains7", "vakaudit.scan.store7", "vakaudit.storage")
    assert _imported([[*scan, "--full"], scan], watched) == []
    assert (tmp_path / "scan" / "manifest.json").is_file()
