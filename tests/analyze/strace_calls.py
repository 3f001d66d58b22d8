"""Reading ``strace -f -C -y -e trace=fsync,fdatasync`` output: the synced path of every call, and
the call count of strace's own ``-c`` summary (shared by the barrier tests)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

STRACE = shutil.which("strace")
LINE = re.compile(r"^\d+\s+(fsync|fdatasync)\((\d+)<(.*)>\)\s+=\s+0$")
SUMMARY = re.compile(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(fsync|fdatasync)$")


def summary_calls(trace: Path) -> int:
    """The calls strace's ``-c`` summary counted."""
    return sum(int(m.group(1)) for line in trace.read_text().splitlines() if (m := SUMMARY.match(line)))


def synced_paths(trace: Path, home: Path) -> Iterator[str | None]:
    """For every successful call, the synced path relative to ``home`` (None: outside the home)."""
    prefix = str(home.resolve()) + "/"
    for line in trace.read_text(encoding="utf-8").splitlines():
        m = LINE.match(line.strip())
        if m:
            path = m.group(3)
            yield path[len(prefix) :] if path.startswith(prefix) else None
