"""Benchmark: report generation for the measured profile, after the scan.

Uses the measured-profile home and scan that ``reports/make.py`` leaves in ``bench/_work/report/``
(building them when missing: ``vakaudit.synth`` measured profile, no fsync, then ``scan_home``).
Each run is a fresh child process timing, separately, ``analyze`` + opening the scan
(``load_inputs``) and rendering each format (``render_inputs``); peak RSS is the child's ``VmHWM``.

    python bench/report.py            # 3 runs
    python bench/report.py --runs 5

Results go to bench/results/report.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORK = HERE / "_work" / "report"
RESULTS = HERE / "results" / "report.md"
BUDGET_S = 10.0
BUDGET_HTML = 3_000_000

CHILD = r"""
import json, sys, time
from datetime import UTC, datetime
t0 = time.perf_counter()
from vakaudit.report import load_inputs, render_inputs
t1 = time.perf_counter()
inputs = load_inputs(sys.argv[1], clock=lambda: datetime(2026, 11, 30, tzinfo=UTC))
t2 = time.perf_counter()
out = {"import_s": t1 - t0, "load_s": t2 - t1}
for fmt in ("html", "md", "json"):
    t = time.perf_counter()
    text = render_inputs(inputs, fmt)
    out[f"render_{fmt}_s"] = time.perf_counter() - t
    out[f"{fmt}_bytes"] = len(text.encode())
out["total_html_s"] = out["import_s"] + out["load_s"] + out["render_html_s"]
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        out["peak_rss_mb"] = int(line.split()[1]) / 1024
print(json.dumps(out))
"""


def ensure_scan() -> tuple[Path, dict]:
    sys.path.insert(0, str(REPO))
    from vakaudit.scan import scan_home
    from vakaudit.synth import build_home

    home, scan = WORK / "measured-home", WORK / "measured-scan"
    if not (home / "agents").is_dir():
        build_home(home, profile="measured", fsync=False)
    if not (scan / "manifest.json").is_file():
        scan_home(home, out=scan)
    ledgers = sum(p.stat().st_size for p in home.rglob("*.jsonl") if "/sessions/" in p.as_posix())
    return scan, {"ledger_bytes": ledgers, "readscale": (scan / "readscale.json").is_file()}


def main() -> None:
    ap = argparse.ArgumentParser(description="time vakaudit report on the measured profile")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    scan, info = ensure_scan()
    load_before = os.getloadavg()[0]
    runs = []
    for _ in range(args.runs):
        p = subprocess.run(
            [sys.executable, "-c", CHILD, str(scan)], capture_output=True, text=True, check=True
        )
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    keys = [
        "import_s",
        "load_s",
        "render_html_s",
        "render_md_s",
        "render_json_s",
        "total_html_s",
        "peak_rss_mb",
    ]
    med = {k: statistics.median(r[k] for r in runs) for k in keys}
    best = {k: min(r[k] for r in runs) for k in keys}
    html = runs[0]["html_bytes"]
    lines = [
        "# Report generation, measured profile",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} with `python bench/report.py --runs {args.runs}` "
        f"on {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}. "
        "The machine is shared with other work running at the same time, so times are noisy; the median "
        f"and best of the runs are both given (1-minute load average {load_before:.1f} before the runs, "
        f"{os.getloadavg()[0]:.1f} after; earlier runs under a load of about 9 took 9.9 s median).",
        "",
        f"Input: the scan of a `vakaudit.synth` measured-profile home ({info['ledger_bytes'] / 1e6:.1f} MB of "
        f"ledgers; stored readscale result beside the scan: {'yes' if info['readscale'] else 'no'}). "
        "Each run is a fresh process: import, `load_inputs` (analyze every metric + project + open the scan), "
        "then `render_inputs` for each format. The scan itself is not timed (it is the input).",
        "",
        "| step | median | best |",
        "|---|--:|--:|",
    ]
    labels = {
        "import_s": "import vakaudit.report",
        "load_s": "load_inputs (analyze + projection + open scan)",
        "render_html_s": "render HTML (12 sections, charts to SVG)",
        "render_md_s": "render Markdown",
        "render_json_s": "render JSON",
        "total_html_s": "**total to HTML** (import + load + render)",
        "peak_rss_mb": "peak RSS (MB)",
    }
    for k in keys:
        unit = "" if k == "peak_rss_mb" else " s"
        lines.append(f"| {labels[k]} | {med[k]:.2f}{unit} | {best[k]:.2f}{unit} |")
    lines += [
        "",
        f"HTML size: {html:,} bytes (budget {BUDGET_HTML:,}); Markdown {runs[0]['md_bytes']:,}; JSON {runs[0]['json_bytes']:,}.",
        f"Budget: under {BUDGET_S:.0f} s after the scan — median total {med['total_html_s']:.2f} s: "
        f"{'within' if med['total_html_s'] < BUDGET_S else 'OVER'} budget.",
        "",
    ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines), encoding="utf-8")
    sys.stdout.write("\n".join(lines))


if __name__ == "__main__":
    main()
