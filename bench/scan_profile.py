"""Where a full scan spends its time: CPU per artifact kind (one process) and the parent's phases.

Runs ``scan_home`` on a cached benchmark home of ``bench/scan.py`` (built there, never here) into a
fresh output directory, twice:

- ``jobs=1``: every task in this process; the CPU time of each task is measured and given to the
  kinds of its files in proportion to their bytes (tasks of one kind, most of them, are exact);
- ``jobs=2``: the wall-clock phases of the parent: the walk before the first task, the pool, and
  what follows it (turns/sessions, files table, manifest).

The numbers go to ``bench/results/scan_profile.md``. Internal functions of ``vakaudit.scan.engine``
are wrapped to take the measures; the scan itself is unchanged.

    python bench/scan_profile.py            # the 10x home
    python bench/scan_profile.py --home measured
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scan import HOMES, WORK, build  # noqa: E402

RESULTS = HERE / "results" / "scan_profile.md"


def _per_kind(home: Path, out: Path) -> tuple[dict[str, list[float]], float, float]:
    from vakaudit.scan import engine

    acc: dict[str, list[float]] = defaultdict(lambda: [0.0, 0, 0])
    orig = engine._run_task

    def run_task(home_s: str, out_s: str, gen: int, task_id: int, items: list) -> list:  # type: ignore[type-arg]
        t = time.process_time()
        res = orig(home_s, out_s, gen, task_id, items)
        cpu = time.process_time() - t
        total = sum(i.size for i in items) or 1
        for i in items:
            a = acc[i.kind]
            a[0] += cpu * i.size / total
            a[1] += 1
            a[2] += i.size
        return res

    engine._run_task = run_task
    try:
        shutil.rmtree(out, ignore_errors=True)
        w, c = time.perf_counter(), time.process_time()
        engine.scan_home(home, out, jobs=1)
        return acc, time.perf_counter() - w, time.process_time() - c
    finally:
        engine._run_task = orig


def _phases(home: Path, out: Path) -> dict[str, float]:
    import concurrent.futures as cf

    from vakaudit.scan import engine

    marks: dict[str, float] = {}
    # the engine imports the pool class where it starts one (``from concurrent.futures import``)
    orig_pool = cf.ProcessPoolExecutor

    class Pool(orig_pool):  # type: ignore[misc, valid-type]
        def __enter__(self):  # type: ignore[no-untyped-def]
            marks.setdefault("pool_start", time.perf_counter())
            return super().__enter__()

        def __exit__(self, *exc):  # type: ignore[no-untyped-def]
            r = super().__exit__(*exc)
            marks.setdefault("pool_end", time.perf_counter())
            return r

    cf.ProcessPoolExecutor = Pool
    try:
        shutil.rmtree(out, ignore_errors=True)
        t0 = time.perf_counter()
        engine.scan_home(home, out, jobs=2)
        end = time.perf_counter()
    finally:
        cf.ProcessPoolExecutor = orig_pool
    return {
        "before the pool (walk, plan)": marks["pool_start"] - t0,
        "worker pool (reading, Parquet)": marks["pool_end"] - marks["pool_start"],
        "after the pool (turns/sessions, files table, manifest)": end - marks["pool_end"],
        "total": end - t0,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", default="10x", choices=list(HOMES))
    ap.add_argument("--results", type=Path, default=RESULTS)
    args = ap.parse_args()
    home = build(args.home)
    out = WORK / f"scan_profile_out_{args.home}"
    import vakaudit.scan  # noqa: F401  (imports outside the measures)

    acc, wall1, cpu1 = _per_kind(home, out)
    phases = _phases(home, out)
    shutil.rmtree(out, ignore_errors=True)
    load = os.getloadavg()[0]
    lines = [
        "# Where a full scan spends its time",
        "",
        f"`python bench/scan_profile.py --home {args.home}` on {platform.machine()} with {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"load average {load:.1f} at the end.",
        "",
        f"## CPU per kind, one process (`jobs=1`: {wall1:.2f} s wall, {cpu1:.2f} s CPU)",
        "",
        "| kind | files | MB | CPU s | MB per CPU s |",
        "|---|---:|---:|---:|---:|",
    ]
    tasks_cpu = 0.0
    for kind, (cpu, n, size) in sorted(acc.items(), key=lambda kv: -kv[1][0]):
        tasks_cpu += cpu
        if cpu < 0.01:
            continue
        lines.append(f"| {kind} | {n:,} | {size / 1e6:,.1f} | {cpu:.2f} | {size / 1e6 / cpu:,.0f} |")
    lines += [
        f"| *parent: walk, turns/sessions, tables, manifest* | | | {cpu1 - tasks_cpu:.2f} | |",
        "",
        "## Wall-clock phases with two workers (`jobs=2`)",
        "",
        "| phase | s |",
        "|---|---:|",
    ]
    lines += [f"| {name} | {s:.2f} |" for name, s in phases.items()]
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
