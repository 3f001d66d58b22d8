"""Regenerate the example reports committed here, and their screenshots.

    python reports/make.py                 # measured profile + tiny sample home
    python reports/make.py --skip-readscale

- ``measured.html`` (+ ``measured.png``, ``measured-dark.png``, ``measured-narrow.png``): a synthetic
  home of the ``measured`` profile (``vakaudit.synth``, no fsync; 60 sessions, 1 386 turns, ~92 MB of
  ledgers) scanned, with a stored readscale result beside the scan, then ``vakaudit report``.
- ``measured-v7.html`` (+ ``measured-v7.png``): the same seeded workload written in vak's 7.0
  layout (``vakaudit synth --layout v7``), scanned with its key file, then ``vakaudit report``.
- ``compare-g2-v7.html`` (+ ``compare-g2-v7.png``): ``vakaudit report`` of the measured home with
  ``--compare`` its 7.0 twin: the same workload as-is and to-be, both measured.
- ``tiny.html`` (+ ``tiny.png``): the committed ``sample_homes/tiny`` home.

The "generated on" time is fixed so that regenerating changes nothing unless the code did (chart
screenshots depend on the fonts of the machine). Work files go to ``bench/_work/report/``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORK = REPO / "bench" / "_work" / "report"
GENERATED_AT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SHOTS = {"": (1280, "light"), "-dark": (1280, "dark"), "-narrow": (420, "light")}


def _log(msg: str) -> None:
    sys.stderr.write(msg + "\n")


def measured_scan(work: Path, *, readscale_turns: tuple[int, ...] | None) -> Path:
    from vakaudit.analyze import readscale
    from vakaudit.scan import scan_home
    from vakaudit.synth import build_home

    home, scan = work / "measured-home", work / "measured-scan"
    if not (home / "agents").is_dir():
        shutil.rmtree(home, ignore_errors=True)
        t = time.perf_counter()
        build_home(home, profile="measured", fsync=False)
        _log(f"built measured home in {time.perf_counter() - t:.1f} s")
    if not (scan / "manifest.json").is_file():
        t = time.perf_counter()
        scan_home(home, out=scan)
        _log(f"scanned in {time.perf_counter() - t:.1f} s")
    if readscale_turns and not (scan / readscale.RESULT_FILE).is_file():
        t = time.perf_counter()
        readscale.run(turns=readscale_turns, out=scan)
        _log(f"readscale in {time.perf_counter() - t:.1f} s")
    return scan


def measured_v7_scan(work: Path) -> Path:
    import subprocess

    from vakaudit.scan import scan_home
    from vakaudit.storage import KeyRing

    home, keys, scan = work / "measured-v7-home", work / "measured-v7-keys.json", work / "measured-v7-scan"
    if not (home / "tenants").is_dir():
        shutil.rmtree(home, ignore_errors=True)
        keys.unlink(missing_ok=True)
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "vakaudit", "synth", str(home), "--profile", "measured", "--layout", "v7",
             "--keys-out", str(keys), "--no-fsync"],
            check=True,
        )  # fmt: skip
        _log(f"built measured v7 home in {time.perf_counter() - t:.1f} s")
    shutil.rmtree(scan, ignore_errors=True)
    t = time.perf_counter()
    scan_home(home, out=scan, keys=KeyRing.from_file(keys))
    _log(f"scanned v7 in {time.perf_counter() - t:.1f} s")
    return scan


def render(src: Path, name: str, shots: dict[str, tuple[int, str]], compare: Path | None = None) -> None:
    from vakaudit.report import build_report
    from vakaudit.report.browser import open_report

    out = HERE / f"{name}.html"
    t = time.perf_counter()
    build_report(src, out=out, clock=lambda: GENERATED_AT, compare=compare)
    _log(f"{out.name}: {out.stat().st_size:,} bytes in {time.perf_counter() - t:.1f} s")
    result = open_report(
        out,
        checks={"charts": "document.querySelectorAll('figure.chart svg').length"},
        screenshots={suffix: spec for suffix, spec in shots.items()},
    )
    if result.console_errors:
        raise SystemExit(f"{out.name}: console errors: {result.console_errors}")
    for suffix, png in result.screenshots.items():
        (HERE / f"{name}{suffix}.png").write_bytes(png)
        _log(f"{name}{suffix}.png: {len(png):,} bytes")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=WORK)
    ap.add_argument("--skip-readscale", action="store_true", help="no measured read-scaling curves")
    ap.add_argument("--readscale-turns", default="1000,4000,16000")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    turns = None if args.skip_readscale else tuple(int(x) for x in args.readscale_turns.split(","))
    g2 = measured_scan(args.work, readscale_turns=turns)
    v7 = measured_v7_scan(args.work)
    render(g2, "measured", SHOTS)
    render(v7, "measured-v7", {"": (1280, "light")})
    # the same workload as-is (JSONL era) and to-be (7.0), both measured
    render(g2, "compare-g2-v7", {"": (1280, "light")}, compare=v7)

    from vakaudit.scan import scan_home

    tiny_scan = args.work / "tiny-scan"
    shutil.rmtree(tiny_scan, ignore_errors=True)
    scan_home(REPO / "sample_homes" / "tiny", out=tiny_scan, jobs=1)
    render(tiny_scan, "tiny", {"": (1280, "light")})


if __name__ == "__main__":
    main()
