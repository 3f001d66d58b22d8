"""Repeated findings are folded: bounded memory, exact counts (hostile input: a finding per line)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vakaudit.findings import FOLD_KEEP, Finding, FindingCode, FindingFold, Severity, folded_count

REPO = Path(__file__).resolve().parents[2]
LEDGER = "agents/vak/sessions/2599eb06cf360587/s.jsonl"
COST = "agents/vak/cost-log.jsonl"


def _f(code: FindingCode, rel: str, line: int) -> Finding:
    return Finding(code, Severity.ERROR, rel, "bad", line, line * 10)


def test_fold_keeps_the_first_in_full_per_code_and_file_and_counts_the_rest() -> None:
    fold = FindingFold()
    for line in range(1, 251):
        fold.append(_f(FindingCode.UNPARSEABLE_LINE, "a.jsonl", line))
    for line in range(1, 4):
        fold.append(_f(FindingCode.UNPARSEABLE_LINE, "b.jsonl", line))
    fold.append(_f(FindingCode.BOM, "a.jsonl", 1))
    out = fold.findings()
    assert len(out) == FOLD_KEEP + 1 + 3 + 1
    folded = [f for f in out if f.count > 1]
    assert [(f.rel_path, f.line_no, f.offset_bytes, f.count) for f in folded] == [("a.jsonl", 101, 1010, 150)]
    assert fold.folded == folded_count(out) == 150
    assert sum(f.count for f in out) == 250 + 3 + 1
    # folding again (verify folds a home's findings once more) keeps the counts exact
    again = FindingFold()
    again.extend(out)
    assert sorted((f.rel_path, f.code, f.line_no, f.count) for f in again.findings()) == sorted(
        (f.rel_path, f.code, f.line_no, f.count) for f in out
    )


def test_one_past_the_limit_is_listed_as_it_is() -> None:
    fold = FindingFold(keep=2)
    for line in (1, 2, 3):
        fold.append(_f(FindingCode.UNPARSEABLE_LINE, "a.jsonl", line))
    assert [(f.line_no, f.count) for f in fold.findings()] == [(1, 1), (2, 1), (3, 1)]
    assert fold.folded == 1 and folded_count(fold.findings()) == 0


def _peak(args: list[str]) -> tuple[int, str]:
    """Run ``python -m vakaudit ARGS`` under a fresh parent process: (its peak RSS in MiB, stdout)."""
    probe = (
        "import resource, subprocess, sys\n"
        "p = subprocess.run([sys.executable, '-m', 'vakaudit', *sys.argv[1:]], capture_output=True, text=True)\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024\n"
        "print(peak); print(p.returncode); sys.stdout.write(p.stdout)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", probe, *args], env=env, capture_output=True, text=True, check=True)
    peak, rc, stdout = out.stdout.split("\n", 2)
    assert int(rc) in (0, 1), out.stdout
    return int(peak), stdout


@pytest.mark.slow
def test_findings_held_in_memory_250k_bad_lines_and_rows_stay_bounded_and_counted(tmp_path: Path) -> None:
    # hostile input: 600k `{}` ledger lines plus 600k garbage cost-log rows (4.8 MB of input) took
    # scan and verify to ~1.6 GB, ~1.4 kB per finding held in memory; 250k of each would still take
    # them to ~0.7 GB past the bound below, so this size tells a bounded fold from an unbounded one
    home = tmp_path / "home"
    (home / LEDGER).parent.mkdir(parents=True)
    n = 250_000
    (home / LEDGER).write_bytes(b"{}\n" * n)
    (home / COST).write_bytes(b"garbage\n" * n)
    folded = 2 * (n - FOLD_KEEP)

    peak, stdout = _peak(["scan", str(home), "--out", str(tmp_path / "out"), "--json", "-j", "1"])
    summary = json.loads(stdout)
    assert summary["findings"] == {"sidecar_unparseable_row": n, "unparseable_line": n}
    assert summary["findings_folded"] == folded
    assert summary["tables"]["findings"] == 2 * (FOLD_KEEP + 1)
    assert peak < 400, peak

    peak, stdout = _peak(["verify", str(home), "--json"])
    report = json.loads(stdout)
    by_code: dict[str, int] = {}
    for f in report["findings"]:
        by_code[f["code"]] = by_code.get(f["code"], 0) + f["count"]
    assert by_code == {"sidecar_unparseable_row": n, "unparseable_line": n}
    assert report["folded"] == folded and report["counts"]["error"] == n
    assert peak < 400, peak
