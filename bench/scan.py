"""Benchmark: vakaudit's full home scan next to DuckDB's and polars' per-kind byte-share queries.

Builds (once, cached in bench/_work/) synthetic homes with ``vakaudit.synth.build_home``: the
``measured`` profile (1,386 turns, ~92 MB of ledgers, ~257 MB home) and a ~10x one (13,860 turns).
Each measurement runs in a fresh child process of this one, so start-up is included and peak RSS
(``VmHWM`` of the child, plus the largest of its own worker processes) belongs to it alone:

- ``vakaudit full``: ``scan_home`` into an empty out dir: every file read, chain verified, every
  table written as Parquet (jobs = CPU count);
- ``vakaudit ledgers only``: the same, on a home holding only the session ledgers (hard links), the
  like-for-like peer of the queries below, which read only the ledgers;
- ``…, pure Python``: the two above with ``VAKAUDIT_NO_NATIVE=1`` (the compiled line scanner off);
- ``vakaudit rescan``: the same call again on the unchanged home (incremental);
- ``vakaudit byte share``: ``vakaudit.scan.quick.ledger_kind_bytes`` (unverified, like the queries);
- ``duckdb fastest``: each ledger line read as one CSV column + ``regexp_extract`` of the kind;
- ``duckdb verified``: the same plus ``sha256`` of every line compared with the next line's prev_hash;
- ``polars``: ``scan_csv`` one column + ``str.extract``;
- ``python+orjson``: a plain loop, ``orjson.loads`` per line.

Every per-kind answer is checked against the bytes of the scan's ``entries`` table.

    python bench/scan.py                     # build if needed, measure, write bench/results/scan.md
    python bench/scan.py --homes measured    # only the measured-profile home
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / "_work"
RESULTS = HERE / "results" / "scan.md"
HOMES = {
    "measured": dict(profile="measured"),
    "10x": dict(profile="measured", turns=13_860, sessions=600),
    "25x": dict(profile="measured", turns=34_650, sessions=1_500),  # ~6 GB: is memory still flat?
}
DEFAULT_HOMES = ["measured", "10x"]
SEED = 20261130


def home_path(name: str) -> Path:
    return WORK / f"scan_home_{name}"


def build(name: str) -> Path:
    home = home_path(name)
    if is_built(name):
        return home
    from vakaudit.synth import build_home

    if home.exists():
        shutil.rmtree(home)
    t = time.perf_counter()
    build_home(home, seed=SEED, fsync=False, **HOMES[name])
    # the marker lives beside the home, not in it: the home must hold only vak files
    (WORK / f"scan_home_{name}.built").write_text(f"{time.perf_counter() - t:.1f}s\n")
    return home


def is_built(name: str) -> bool:
    return (WORK / f"scan_home_{name}.built").is_file() and home_path(name).is_dir()


def ledger_glob(home: Path) -> str:
    return str(home) + "/**/sessions/*/*.jsonl"


# --------------------------------------------------------------------------- measurements (child side)


def _peak_rss_kb() -> tuple[int, int]:
    own = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                own = int(line.split()[1])
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return own, children


def m_vakaudit_full(home: Path, out: Path) -> dict:
    from vakaudit.scan import scan_home

    if out.exists():
        shutil.rmtree(out)
    t = time.perf_counter()
    res = scan_home(home, out=out)
    seconds = time.perf_counter() - t
    own, kids = _peak_rss_kb()  # before the check query below, which is not part of the scan
    kinds = dict(res.duckdb().execute("SELECT kind, sum(size_bytes) FROM entries GROUP BY kind").fetchall())
    return {"answer": kinds, "stats": res.stats.to_dict(), "rss_at_end": [own, kids], "seconds": seconds}


def ledgers_only(home: Path) -> Path:
    """A home holding only the session ledgers of ``home`` (hard links: no bytes copied)."""
    dst = home.with_name(home.name + "_ledgers_only")
    if not dst.is_dir():
        tmp = dst.with_name(dst.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        for src in sorted(home.glob("**/sessions/*/*.jsonl")):
            target = tmp / src.relative_to(home)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(src, target)
        tmp.rename(dst)
    return dst


def m_vakaudit_ledgers(home: Path, out: Path) -> dict:
    from vakaudit.scan import scan_home

    out = out.with_name(out.name + "_ledgers_only")
    if out.exists():
        shutil.rmtree(out)
    only = ledgers_only(home)
    t = time.perf_counter()
    res = scan_home(only, out=out)
    seconds = time.perf_counter() - t
    own, kids = _peak_rss_kb()
    kinds = dict(res.duckdb().execute("SELECT kind, sum(size_bytes) FROM entries GROUP BY kind").fetchall())
    return {"answer": kinds, "stats": res.stats.to_dict(), "rss_at_end": [own, kids], "seconds": seconds}


def m_vakaudit_rescan(home: Path, out: Path) -> dict:
    from vakaudit.scan import scan_home

    res = scan_home(home, out=out)
    return {"stats": res.stats.to_dict()}


def m_vakaudit_quick(home: Path, out: Path) -> dict:
    from vakaudit.scan.quick import ledger_kind_bytes

    return {"answer": {k: b for k, (_, b) in ledger_kind_bytes(home).items()}}


_CSV = (
    "read_csv('{glob}', columns={{'line': 'VARCHAR'}}, header=false, delim='\\x1f', quote='', escape='', "
    "auto_detect=false, max_line_size=67108864, filename={fn})"
)


def m_duckdb_fastest(home: Path, out: Path) -> dict:
    import duckdb

    src = _CSV.format(glob=ledger_glob(home), fn="false")
    rows = (
        duckdb.connect()
        .execute(
            f'SELECT regexp_extract(line, \'"kind":"([a-z_]+)"\', 1) AS kind, sum(strlen(line) + 1) FROM {src} GROUP BY 1'
        )
        .fetchall()
    )
    return {"answer": dict(rows)}


def m_duckdb_verified(home: Path, out: Path) -> dict:
    import duckdb

    src = _CSV.format(glob=ledger_glob(home), fn="true")
    sql = f"""
    WITH l AS (
        SELECT filename, line, row_number() OVER (PARTITION BY filename) AS rn, sha256(line) AS d,
               regexp_extract(line, '"prev_hash":"([0-9a-f]{{64}})"', 1) AS prev,
               regexp_extract(line, '"kind":"([a-z_]+)"', 1) AS kind
        FROM {src}
    ), c AS (SELECT *, lag(d) OVER (PARTITION BY filename ORDER BY rn) AS expected FROM l)
    SELECT kind, sum(strlen(line) + 1), count(*) FILTER (WHERE prev <> '' AND expected IS NOT NULL AND prev <> expected)
    FROM c GROUP BY kind
    """
    rows = duckdb.connect().execute(sql).fetchall()
    return {"answer": {k: b for k, b, _ in rows}, "broken": sum(x for _, _, x in rows)}


def m_polars(home: Path, out: Path) -> dict:
    import polars as pl

    lf = pl.scan_csv(
        ledger_glob(home),
        has_header=False,
        separator="\x1f",
        quote_char=None,
        schema={"line": pl.String},
    )
    df = (
        lf.select(
            pl.col("line").str.extract(r'"kind":"([a-z_]+)"', 1).alias("kind"),
            (pl.col("line").str.len_bytes() + 1).alias("b"),
        )
        .group_by("kind")
        .agg(pl.col("b").sum())
        .collect()
    )
    return {"answer": dict(zip(df["kind"].to_list(), df["b"].to_list(), strict=True))}


def m_python_orjson(home: Path, out: Path) -> dict:
    import glob

    import orjson

    acc: dict[str, int] = {}
    for path in glob.glob(ledger_glob(home), recursive=True):
        with open(path, "rb") as f:
            for line in f:
                kind = orjson.loads(line).get("kind")
                if not isinstance(
                    kind, str
                ):  # a work line's second "kind" (the event) won: orjson keeps the last
                    kind = "work"
                acc[kind] = acc.get(kind, 0) + len(line)
    return {"answer": acc}


MEASURES = {
    "vakaudit full": m_vakaudit_full,
    "vakaudit full, pure Python": m_vakaudit_full,
    "vakaudit ledgers only": m_vakaudit_ledgers,
    "vakaudit ledgers only, pure Python": m_vakaudit_ledgers,
    "vakaudit rescan": m_vakaudit_rescan,
    "vakaudit byte share": m_vakaudit_quick,
    "duckdb fastest": m_duckdb_fastest,
    "duckdb verified": m_duckdb_verified,
    "polars": m_polars,
    "python+orjson": m_python_orjson,
}


IMPORTS = {
    "vakaudit full": "vakaudit.scan.engine vakaudit.scan.result vakaudit.artifacts duckdb",
    "vakaudit full, pure Python": "vakaudit.scan.engine vakaudit.scan.result vakaudit.artifacts duckdb",
    "vakaudit ledgers only": "vakaudit.scan.engine vakaudit.scan.result vakaudit.artifacts duckdb",
    "vakaudit ledgers only, pure Python": "vakaudit.scan.engine vakaudit.scan.result vakaudit.artifacts duckdb",
    "vakaudit rescan": "vakaudit.scan.engine vakaudit.scan.result vakaudit.artifacts",
    "vakaudit byte share": "vakaudit.scan.quick",
    "duckdb fastest": "duckdb",
    "duckdb verified": "duckdb",
    "polars": "polars",
    "python+orjson": "orjson",
}


def child(name: str, home: str, out: str) -> None:
    import importlib

    t0 = time.perf_counter()
    for module in IMPORTS[name].split():
        importlib.import_module(module)
    if name.startswith("vakaudit") and name != "vakaudit byte share":
        from vakaudit.artifacts import all_kinds

        all_kinds()  # the registry imports every kind module
    t1 = time.perf_counter()
    result = MEASURES[name](Path(home), Path(out))
    dt = time.perf_counter() - t1
    own, kids = result.pop("rss_at_end", None) or _peak_rss_kb()
    # a measure that prepares (removing the last output) or checks (the agreement query) times its
    # own work; the others are timed whole
    result.setdefault("seconds", dt)
    result.update(import_seconds=t1 - t0, rss_kb=own, child_rss_kb=kids)
    result["answer"] = {str(k): int(v) for k, v in result.get("answer", {}).items()}
    sys.stdout.write(json.dumps(result) + "\n")


# --------------------------------------------------------------------------- driver


def sizes(home: Path) -> tuple[int, int]:
    total = ledgers = 0
    for dirpath, _dirs, files in os.walk(home):
        for f in files:
            n = os.lstat(os.path.join(dirpath, f)).st_size
            total += n
            if f.endswith(".jsonl") and "/sessions/" in dirpath + "/":
                ledgers += n
    return total, ledgers


def run(name: str, home: Path, out: Path) -> dict:
    cmd = [sys.executable, __file__, "--child", name, str(home), str(out)]
    env = dict(os.environ)
    env.pop("VAKAUDIT_NO_NATIVE", None)
    if name.endswith("pure Python"):  # the compiled line scanner switched off: the reference path
        env["VAKAUDIT_NO_NATIVE"] = "1"
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"}
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r["wall"] = wall
    return r


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", nargs=3)
    ap.add_argument("--homes", nargs="*", default=DEFAULT_HOMES, choices=list(HOMES))
    ap.add_argument("--only", nargs="*", default=list(MEASURES), help="measurements to run")
    ap.add_argument("--results", type=Path, default=RESULTS, help="where to write the markdown table")
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    WORK.mkdir(exist_ok=True)
    load = os.getloadavg()[0]
    lines = [
        "# vakaudit scan benchmark",
        "",
        f"`python bench/scan.py` on {platform.machine()} with {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
        + (
            f"The machine was shared with other jobs during the run (load average {load:.1f} at the start), "
            "so absolute rates are pessimistic; "
            if load >= 1.0
            else f"Nothing else ran (load average {load:.1f} at the start); "
        )
        + "the rows of one table were measured back to back and are comparable. Each row is one fresh "
        "child process: `work s` is the measured call after its imports (for the vakaudit scans the "
        "`scan_home` call alone: removing the last output before it and the agreement query after it are "
        "not timed), `cold process s` the whole child (interpreter start-up and imports included). RSS = "
        "the child's peak (`VmHWM`) + the largest peak among its own worker processes.",
        "",
    ]
    for hname in args.homes:
        t = time.perf_counter()
        home = build(hname)
        built = time.perf_counter() - t
        total, ledgers = sizes(home)
        out = WORK / f"scan_out_{hname}"
        lines += [
            f"## {hname} home: {total / 1e6:,.0f} MB, of which {ledgers / 1e6:,.0f} MB session ledgers",
            "",
            "(built by `vakaudit.synth.build_home("
            + ", ".join(f"{k}={v!r}" for k, v in HOMES[hname].items())
            + f", seed={SEED}, fsync=False)`"
            f"{'' if built < 1 else f' in {built:.0f} s'})",
            "",
            "| measurement | work s | MB/s (home) | MB/s (ledgers) | cold process s | peak RSS MB (+worker) | agrees |",
            "|---|---:|---:|---:|---:|---:|---|",
        ]
        reference = None
        for name in [m for m in MEASURES if m in args.only]:
            best = None
            for _ in range(args.runs):
                r = run(name, home, out)
                if "error" in r:
                    best = r
                    break
                if best is None or r["seconds"] < best["seconds"]:
                    best = r
            assert best is not None
            if "error" in best:
                lines.append(f"| {name} | failed: {best['error'][:80]} | | | | | |")
                continue
            if name == "vakaudit full":
                reference = best["answer"]
            agrees = ""
            if best.get("answer") and reference is not None:
                got = {k: v for k, v in best["answer"].items() if k not in ("", "None")}
                agrees = "yes" if got == reference else "no"
            s = best["seconds"]
            home_rate = f"{total / s / 1e6:,.0f}" if name.startswith(("vakaudit full", "vakaudit rescan")) else ""
            lines.append(
                f"| {name} | {s:.2f} | {home_rate} | {ledgers / s / 1e6:,.0f} | {best['wall']:.2f} | "
                f"{best['rss_kb'] / 1024:.0f} (+{best['child_rss_kb'] / 1024:.0f}) | {agrees} |"
            )
            sys.stderr.write(lines[-1] + "\n")
            if name == "vakaudit rescan":
                st = best["stats"]
                lines.append(
                    f"| ↳ rescan read {st['bytes_read']} bytes, {st['files_unchanged']} files unchanged | | | | | | |"
                )
        lines.append("")
    args.results.parent.mkdir(exist_ok=True)
    args.results.write_text("\n".join(lines) + "\n", encoding="utf-8")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
