"""Barriers per turn: analyze's figure against fsync/fdatasync calls counted by strace.

A synthetic home is written with fsync on (ledger appends go through ``vakaudit.ledger`` and end in
one fdatasync each; sidecars are written as the synth writes them) under
``strace -f -C -y -e trace=fsync,fdatasync``: ``-C`` prints the ``-c`` call-count summary after the
calls themselves, and ``-y`` names the file behind every call, so each counted barrier is attributed
to the artifact kind of its path (and the per-call lines must add up to the summary). analyze then derives barriers from the
written home (ledger entries seen x 1, plus each sidecar kind's declared barriers per write) and the
two are compared artifact by artifact.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.analyze.strace_calls import STRACE, summary_calls, synced_paths
from vakaudit.analyze import analyze, open_scan
from vakaudit.artifacts import classify
from vakaudit.scan import scan_home

# kinds whose declared discipline costs barriers in vak but that the synthetic home writes without
# any (the synth appends memory notes and outbox records with plain writes): home.md §6.4, §7.1
DECLARED_NOT_EMULATED = {"memory", "delivery_jobs"}
# store.db: vak and the synth both run SQLite in WAL mode with synchronous=NORMAL, which syncs at
# WAL checkpoints and journal creation, not per write; the card declares 0 per write (home.md §8.1)
SQLITE_KIND = "store_db"


def _count(trace: Path, home: Path) -> tuple[Counter[str], Counter[str]]:
    by_kind: Counter[str] = Counter()
    by_path: Counter[str] = Counter()
    for rel in synced_paths(trace, home):
        if rel is None:
            by_kind["(outside the home)"] += 1
            continue
        by_path[rel] += 1
        # files SQLite deletes again (store.db-journal) are classified by name; directories are named
        kind = "(directory)" if (home / rel).is_dir() else classify(rel).name
        by_kind[kind] += 1
    return by_kind, by_path


def test_ledger_barriers_counted_by_strace_equal_the_derived_ones(tmp_path: Path) -> None:
    if STRACE is None:  # fail, never skip: scripts/test.sh installs strace
        pytest.fail("strace is not installed; run scripts/test.sh, which installs it")
    home = tmp_path / "home"
    trace = tmp_path / "trace.txt"
    code = f"from vakaudit.synth import build_home; build_home({str(home)!r}, profile='tiny', fsync=True)"
    subprocess.run(
        [
            STRACE,
            "-f",
            "-C",
            "-y",
            "-qq",
            "-e",
            "trace=fsync,fdatasync",
            "-e",
            "signal=none",
            "-o",
            str(trace),
        ]
        + [sys.executable, "-c", code],
        check=True,
        capture_output=True,
    )
    counted, by_path = _count(trace, home)
    assert counted["session_ledger"] > 0, trace.read_text()[:2000]
    assert sum(counted.values()) == summary_calls(trace)  # every call strace -c counted is attributed

    scan = tmp_path / "scan"
    scan_home(home, out=scan, jobs=1)
    a = analyze(scan)
    derived = {r["artifact"]: r["barriers"] for r in a["barriers_per_turn"].rows}
    turns = a.headline["turns"]

    # 1. the ledger: one fdatasync per entry, exactly, file by file and in total
    con = open_scan(scan)
    entries_per_file = dict(
        con.execute("SELECT rel_path, count(*) FROM ledger_entry GROUP BY rel_path").fetchall()
    )
    con.close()
    ledger_paths = {p: n for p, n in by_path.items() if classify(p).name == "session_ledger"}
    assert ledger_paths == entries_per_file
    assert counted["session_ledger"] == derived["session_ledger"], (counted, derived)

    # 2. every other counted barrier is explained: SQLite's own syncs of store.db (and its directory)
    explained = {SQLITE_KIND, "(directory)"}
    assert set(counted) - {"session_ledger"} <= explained, counted
    # 3. kinds declared with barriers that the synth does not emulate were counted at zero
    for kind in DECLARED_NOT_EMULATED:
        assert counted[kind] == 0

    # the per-turn figures, with the difference computed exactly
    counted_per_turn = sum(counted.values()) / turns
    derived_per_turn = a.headline["barriers_per_turn"]
    not_emulated = sum(derived.get(k, 0) for k in DECLARED_NOT_EMULATED)
    sqlite = counted[SQLITE_KIND] + counted["(directory)"]
    assert counted_per_turn == pytest.approx(
        derived_per_turn - not_emulated / turns + sqlite / turns, rel=1e-4
    )
    ledger_row = next(r for r in a["barriers_per_turn"].rows if r["artifact"] == "session_ledger")
    assert ledger_row["barriers_per_turn"] == pytest.approx(counted["session_ledger"] / turns, rel=1e-5)
