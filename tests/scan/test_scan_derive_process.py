"""A home read in one process has its turns and sessions derived in a second one, forked as the scan
starts, which imports and warms DuckDB meanwhile: the tables equal those derived in process, DuckDB
never enters the scanning process, a lost derive process leaves the derivation to the scan, and a
scan with no use for it (read by the worker pool, nothing to derive) ends it at once.

The scans that must fork run in a fresh interpreter: the scan forks only when its process runs no
other thread, and a test process may hold one (a Dask test's offload thread stays for good)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from vakaudit.scan import scan_home
from vakaudit.scan.derive import DeriveProcess, _derive_turns_sessions
from vakaudit.scan.result import open_scan

KEYS = {"turns": ["rel_path", "turn_no"], "sessions": ["rel_path"]}

# runs in a fresh interpreter: counts what DeriveProcess.start returned, then runs the test's code
_SPY = """
import json, sys, threading
from vakaudit.scan import scan_home
from vakaudit.scan.derive import DeriveProcess
started = []
_start = DeriveProcess.start
def _spy():
    started.append(_start())
    return started[-1]
DeriveProcess.start = staticmethod(_spy)
def said():
    return [p is not None for p in started]
def ends():
    # how each started process ended (its exit code: 0 returned, -9 killed) and whether its spill
    # folder is gone
    import os
    return [[p.process.exitcode, os.path.exists(p._spill)] for p in started if p is not None]
"""


def _fresh(code: str) -> dict:
    """Run ``code`` after :data:`_SPY` in a new interpreter; it prints one JSON object last."""
    out = subprocess.run([sys.executable, "-c", _SPY + code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _sorted(res: object, name: str):  # type: ignore[no-untyped-def]
    return res.table(name).sort_by([(k, "ascending") for k in KEYS[name]])  # type: ignore[attr-defined]


@pytest.fixture()
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vakaudit.synth import build_home

    home = tmp_path_factory.mktemp("derive") / "home"
    build_home(home, profile="tiny", seed=11, fsync=False)
    return home


def test_a_small_home_derives_in_the_derive_process_and_gets_the_same_tables(home: Path, tmp_path: Path) -> None:
    got = _fresh(
        f"scan_home({str(home)!r}, out={str(tmp_path / 'apart')!r}, jobs=2)  # a small home: read in one process\n"
        "print(json.dumps({'started': said(), 'duckdb': 'duckdb' in sys.modules}))\n"
    )
    assert got == {"started": [True], "duckdb": False}
    apart = open_scan(tmp_path / "apart")
    here = scan_home(home, out=tmp_path / "here", jobs=1)  # one job: derived in this process
    for name in KEYS:
        assert _sorted(apart, name).num_rows > 0
        assert _sorted(apart, name).equals(_sorted(here, name)), name
    assert apart.row_counts == here.row_counts


def test_no_derive_process_beside_other_threads_nor_for_a_rescan_with_nothing_to_derive(
    home: Path, tmp_path: Path
) -> None:
    got = _fresh(
        f"scan_home({str(home)!r}, out={str(tmp_path / 's')!r}, jobs=2)\n"
        "first = said()\n"
        f"scan_home({str(home)!r}, out={str(tmp_path / 's')!r}, jobs=2)  # a rescan: no ledger to read\n"
        "rescan = said()\n"
        f"res = scan_home({str(home)!r}, out={str(tmp_path / 's')!r}, jobs=2, full=True)  # every file again\n"
        "again = said()\n"
        "stop = threading.Event()\n"
        "t = threading.Thread(target=stop.wait)\n"
        "t.start()\n"
        f"res = scan_home({str(home)!r}, out={str(tmp_path / 't')!r}, jobs=2)  # another thread runs\n"
        "stop.set(); t.join()\n"
        "print(json.dumps({'first': first, 'rescan': rescan, 'again': again, 'threaded': said(), "
        "'turns': res.row_counts['turns'], 'ends': ends()}))\n"
    )
    assert got["first"] == [True] and got["rescan"] == [True]  # the rescan started none
    assert got["again"] == [True, True]  # --full of a small home: started before the walk, and used
    assert got["ends"] == [[0, False], [0, False]]  # each returned once its pipe closed; spill folders gone
    assert got["threaded"] == [True, True, False] and got["turns"] > 0  # none forked: derived in process


def test_a_home_with_no_ledger_ends_the_derive_process_before_reading(home: Path, tmp_path: Path) -> None:
    import shutil

    bare = tmp_path / "bare"
    shutil.copytree(home, bare, symlinks=True)
    ledgers = [p for p in bare.rglob("*.jsonl") if "/sessions/" in p.as_posix()]
    assert ledgers
    for p in ledgers:
        p.unlink()
    got = _fresh(
        f"res = scan_home({str(bare)!r}, out={str(tmp_path / 'out')!r}, jobs=2)\n"
        "print(json.dumps({'ends': ends(), 'turns': res.row_counts['turns'], 'duckdb': 'duckdb' in sys.modules}))\n"
    )
    # started before the walk, killed once the plan had no ledger to derive; nothing derived here either
    assert got == {"ends": [[-9, False]], "turns": 0, "duckdb": False}


def test_a_home_read_by_the_worker_pool_ends_the_derive_process(home: Path, tmp_path: Path) -> None:
    got = _fresh(
        "import vakaudit.scan.engine as engine\n"
        "engine.INLINE_BYTES = 0  # every home is read by the worker pool\n"
        f"res = scan_home({str(home)!r}, out={str(tmp_path / 'pool')!r}, jobs=2)\n"
        "print(json.dumps({'ends': ends(), 'turns': res.row_counts['turns']}))\n"
    )
    # killed before the pool started (the pool's workers derived), its spill folder removed
    assert got["ends"] == [[-9, False]] and got["turns"] > 0
    here = scan_home(home, out=tmp_path / "here", jobs=1)
    assert open_scan(tmp_path / "pool").row_counts == here.row_counts


def _reference(home: Path, out: Path) -> tuple[tuple, dict[str, int], dict]:
    """A one-job scan of ``home`` into ``out``, its derivation plan, counts and tables."""
    import pyarrow.parquet as pq

    from vakaudit.scan.derive import _derive_plan
    from vakaudit.scan.manifest import read_manifest

    scan_home(home, out=out, jobs=1)
    files = read_manifest(out)["files"]
    ledgers = {rel: e for rel, e in files.items() if e.get("parts") and e.get("kind") == "session_ledger"}
    assert ledgers
    plan = _derive_plan(ledgers, {}, {}, False, {rel: SimpleNamespace(size_bytes=0) for rel in ledgers}, 1)
    assert plan is not None and plan[2] == 0
    counts = _derive_turns_sessions(out, plan[0], plan[1], 0)
    return plan, counts, {name: pq.read_table(out / name / "all.parquet") for name in KEYS}


def test_a_lost_derive_process_leaves_the_derivation_here(home: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "ref"
    plan, counts, tables = _reference(home, out)
    proc = DeriveProcess()  # (not start(): that declines beside a thread this test process may hold)
    try:
        proc.process.kill()  # lost
        proc.process.join()
        assert proc.derive(out, plan[0], plan[1]) == counts
    finally:
        proc.close()
    assert not Path(proc._spill).exists()
    for name in KEYS:
        assert pq.read_table(out / name / "all.parquet").equals(tables[name]), name


def test_a_derivation_failing_in_the_derive_process_is_done_here(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    import pyarrow.parquet as pq

    from vakaudit.scan import derive

    out = tmp_path / "ref"
    plan, counts, tables = _reference(home, out)
    here, real = os.getpid(), derive._derive_shard
    where = []

    def failing_there(*args, **kwargs):  # type: ignore[no-untyped-def]
        if os.getpid() != here:  # the derive process (forked: it runs this too)
            raise MemoryError("out of memory in the derive process")
        where.append("here")
        return real(*args, **kwargs)

    monkeypatch.setattr(derive, "_derive_shard", failing_there)
    proc = DeriveProcess()
    try:
        assert proc.derive(out, plan[0], plan[1]) == counts
        assert proc.process.is_alive()  # it answered with its error and waits for the next
    finally:
        proc.close()
    assert where == ["here"] and proc.process.exitcode == 0
    for name in KEYS:
        assert pq.read_table(out / name / "all.parquet").equals(tables[name]), name


def test_a_derive_process_that_cannot_start_duckdb_ends_quietly_and_the_scan_derives(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    import os

    from vakaudit.scan import derive

    out = tmp_path / "ref"
    plan, counts, _tables = _reference(home, out)
    here, real = os.getpid(), derive._derive_connection

    def broken_there(spill):  # type: ignore[no-untyped-def]
        if os.getpid() != here:
            raise RuntimeError("DuckDB cannot start in the derive process")
        return real(spill)

    monkeypatch.setattr(derive, "_derive_connection", broken_there)
    capfd.readouterr()
    proc = DeriveProcess()
    try:
        proc.process.join(timeout=60)
        assert proc.process.exitcode == 0  # ended by itself, without a traceback
        assert proc.derive(out, plan[0], plan[1]) == counts  # derived here
    finally:
        proc.close()
    assert "Traceback" not in capfd.readouterr().err


def test_the_scanning_process_never_imports_duckdb(home: Path, tmp_path: Path) -> None:
    code = (
        f"res = scan_home({str(home)!r}, out={str(tmp_path / 'x')!r}, jobs=2, full=True)\n"
        "print(json.dumps([res.row_counts['turns'] > 0, 'duckdb' in sys.modules, said()]))\n"
    )
    out = subprocess.run([sys.executable, "-c", _SPY + code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.splitlines()[-1]) == [True, False, [True]]
    # with one job the derivation runs here, and DuckDB with it (the check above can fail)
    out = subprocess.run([sys.executable, "-c", _SPY + code.replace("jobs=2", "jobs=1")], capture_output=True,
                         text=True, check=True)  # fmt: skip
    assert json.loads(out.stdout.splitlines()[-1]) == [True, True, []]


def test_a_scan_that_raises_leaves_no_derive_process_behind(home: Path, tmp_path: Path) -> None:
    got = _fresh(
        "import gc\n"
        "import vakaudit.scan.engine as engine\n"
        "workers = []\n"
        "_start2 = DeriveProcess.start\n"
        "def _with_workers():\n"
        "    proc = _start2()\n"
        "    workers.append(proc.process)\n"
        "    return proc\n"
        "DeriveProcess.start = staticmethod(_with_workers)\n"
        "def boom(*a, **k):\n"
        "    raise RuntimeError('a reader bug')\n"
        "engine._run_task = boom\n"
        "try:\n"
        f"    scan_home({str(home)!r}, out={str(tmp_path / 's')!r}, jobs=2)\n"
        "    raised = False\n"
        "except RuntimeError:\n"
        "    raised = True\n"
        "started.clear()  # the spy's own reference to it\n"
        "gc.collect()\n"
        "for p in workers:\n"
        "    p.join(timeout=30)\n"
        "print(json.dumps({'raised': raised, 'workers': len(workers), 'alive': [p.is_alive() for p in workers]}))\n"
    )
    assert got == {"raised": True, "workers": 1, "alive": [False]}
