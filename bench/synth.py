"""Benchmark `vakaudit synth`: generation throughput (MB/s) and peak RSS.

Runs each case in its own Python process (so peak RSS is that case's alone) and writes
``bench/results/synth.md``:

- the measured profile (1,386 turns, ~256 MB) with --no-fsync;
- a 10,000-turn home with --no-fsync;
- the measured profile with the default one-fdatasync-per-ledger-entry;
- 20,000 turns (``20k``), and optionally 30,000 and 100,000 (``30k``, ``100k``), to show that peak
  memory does not grow with the home.

Usage: ``python bench/synth.py [--out DIR] [--cases measured,10k,20k,measured-fsync,100k] [--keep]``.
Everything below the line ``<!-- notes -->`` of an existing results file is kept (hand-written notes).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from vakaudit.synth import build_home
out, profile, turns, fsync = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
with open("/proc/self/status") as fh:  # what the interpreter and the imports alone hold
    import_rss_kb = next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))
t0 = time.perf_counter()
r = build_home(out, profile=profile, turns=int(turns) if turns != "-" else None, seed=0, layout="g2", fsync=fsync)
elapsed = time.perf_counter() - t0
peak_rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # before listing the home's files below
files = [p for p in Path(out).rglob("*") if p.is_file()]
ledgers = [p for p in files if p.suffix == ".jsonl" and p.parent.parent.name == "sessions"]
print(json.dumps({
    "elapsed_s": elapsed,
    "peak_rss_kb": peak_rss_kb,
    "import_rss_kb": import_rss_kb,
    "home_bytes": sum(p.stat().st_size for p in files),
    "ledger_bytes": sum(p.stat().st_size for p in ledgers),
    "files": len(files),
    "sessions": r.sessions, "turns": r.turns, "entries": r.ledger_entries,
}))
"""

CASES = {
    "measured": ("measured", "-", False),
    "10k": ("measured", "10000", False),
    "measured-fsync": ("measured", "-", True),
    "20k": ("measured", "20000", False),
    "30k": ("measured", "30000", False),
    "100k": ("measured", "100000", False),
}


def run_case(name: str, workdir: Path) -> dict:
    profile, turns, fsync = CASES[name]
    out = workdir / name
    shutil.rmtree(out, ignore_errors=True)
    load_before = os.getloadavg()
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(out), profile, turns, "1" if fsync else "0"],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["load_before"] = load_before
    result["load_after"] = os.getloadavg()
    result["name"] = name
    result["fsync"] = fsync
    return result


def render(results: list[dict]) -> str:
    lines = [
        "# `vakaudit synth` benchmark",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}. The machine was shared with other work during the run "
        "(load averages below), so times are upper bounds.",
        "",
        "| case | fsync | turns | sessions | ledger entries | home MB | ledger MB | seconds | MB/s | peak RSS MB | RSS after imports MB | load 1m before → after |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        mb = r["home_bytes"] / 1e6
        lines.append(
            f"| {r['name']} | {'per entry' if r['fsync'] else 'off'} | {r['turns']:,} | {r['sessions']:,} | "
            f"{r['entries']:,} | {mb:,.1f} | {r['ledger_bytes'] / 1e6:,.1f} | {r['elapsed_s']:.1f} | "
            f"{mb / r['elapsed_s']:.1f} | {r['peak_rss_kb'] / 1024:.0f} | {r['import_rss_kb'] / 1024:.0f} | "
            f"{r['load_before'][0]:.1f} → {r['load_after'][0]:.1f} |"
        )
    lines += [
        "",
        "MB/s counts every byte written into the home (ledgers, checkpoints, store.db, side ledgers). Peak RSS is",
        "the generating process's own (`ru_maxrss`); RSS after imports is the same process before it starts",
        "writing. Homes are written with layout g2 and seed 0.",
        "",
    ]
    return "\n".join(lines)


NOTES = "<!-- notes -->"


def kept_notes(path: Path) -> str:
    """The hand-written part of an existing results file (from the notes marker on), or ""."""
    if not path.exists():
        return ""
    text = path.read_text(encoding="utf-8")
    at = text.find(NOTES)
    return "" if at < 0 else "\n" + text[at:]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None, help="work directory (default: a temporary one)")
    ap.add_argument("--cases", default="measured,10k,20k,measured-fsync")
    ap.add_argument("--keep", action="store_true", help="keep the generated homes")
    ap.add_argument("--results", type=Path, default=Path(__file__).parent / "results" / "synth.md")
    args = ap.parse_args()
    workdir = args.out or Path(tempfile.mkdtemp(prefix="vakaudit-synth-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        for name in args.cases.split(","):
            started = time.time()
            r = run_case(name, workdir)
            results.append(r)
            sys.stdout.write(f"{name}: {r['home_bytes'] / 1e6:.1f} MB in {r['elapsed_s']:.1f} s "
                             f"(wall {time.time() - started:.1f} s), peak RSS {r['peak_rss_kb'] / 1024:.0f} MB\n")  # fmt: skip
            if not args.keep:
                shutil.rmtree(workdir / name, ignore_errors=True)
    finally:
        if not args.keep and args.out is None:
            shutil.rmtree(workdir, ignore_errors=True)
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(render(results) + kept_notes(args.results), encoding="utf-8")
    sys.stdout.write(f"wrote {args.results}\n")


if __name__ == "__main__":
    main()
