"""Paired whole-process runs of two commands: A B A B ..., each timed from outside, the ratio taken
pair by pair.

On a machine whose speed drifts within minutes, the medians of two commands timed one after the
other (hyperfine runs all of one, then all of the other) can move apart by more than the change
measured; a ratio taken pair by pair stays meaningful. Wall time is a monotonic clock around the
child; CPU (user + system) and peak RSS come from ``wait4`` (the largest process among the child and
the descendants it waited for, in MiB).

    python bench/paired.py N 'COMMAND A' 'COMMAND B' ['PREPARE']

Each command runs under ``sh -c``, its output thrown away; ``PREPARE`` (optional) runs before every
run of either (e.g. emptying a ``--scan-out``). One warm-up run of each is not counted.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time


def run(cmd: str, prepare: str | None) -> tuple[float, float, float]:
    """(wall s, CPU s, peak MiB) of one run of ``cmd``."""
    if prepare:
        subprocess.run(["sh", "-c", prepare], check=True)
    t = time.perf_counter()
    p = subprocess.Popen(["sh", "-c", cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"exit {os.waitstatus_to_exitcode(status)}: {cmd}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def main() -> None:
    if len(sys.argv) not in (4, 5):
        raise SystemExit(__doc__)
    n, a, b = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    prepare = sys.argv[4] if len(sys.argv) == 5 else None
    run(a, prepare)
    run(b, prepare)
    runs: dict[str, list[tuple[float, float, float]]] = {"A": [], "B": []}
    for _ in range(n):
        runs["A"].append(run(a, prepare))
        runs["B"].append(run(b, prepare))
    for name, rs in runs.items():
        walls = [r[0] for r in rs]
        print(f"{name} wall min/median/max {min(walls):.3f} / {statistics.median(walls):.3f} / {max(walls):.3f} s, "
              f"CPU median {statistics.median(r[1] for r in rs):.3f} s, "
              f"peak median {statistics.median(r[2] for r in rs):.1f} MiB")
    wall = [x[0] / y[0] for x, y in zip(runs["A"], runs["B"], strict=True)]
    cpu = [x[1] / y[1] for x, y in zip(runs["A"], runs["B"], strict=True)]
    print(f"A/B wall median {statistics.median(wall):.3f} (min {min(wall):.3f}, max {max(wall):.3f}), "
          f"CPU median {statistics.median(cpu):.3f}; {n} pairs")


if __name__ == "__main__":
    main()
