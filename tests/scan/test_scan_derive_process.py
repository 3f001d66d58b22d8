"""A home read in one process has its turns and sessions derived in a second one, forked as the scan
starts, which imports DuckDB meanwhile: the tables equal those derived in process, DuckDB never
enters the scanning process, and a lost derive process leaves the derivation to the scan."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from vakaudit.scan import scan_home
from vakaudit.scan.derive import DeriveProcess, _derive_turns_sessions

KEYS = {"turns": ["rel_path", "turn_no"], "sessions": ["rel_path"]}


def _sorted(res: object, name: str):  # type: ignore[no-untyped-def]
    return res.table(name).sort_by([(k, "ascending") for k in KEYS[name]])  # type: ignore[attr-defined]


@pytest.fixture()
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vakaudit.synth import build_home

    home = tmp_path_factory.mktemp("derive") / "home"
    build_home(home, profile="tiny", seed=11, fsync=False)
    return home


@pytest.fixture()
def started(monkeypatch: pytest.MonkeyPatch) -> list[DeriveProcess | None]:
    """What every DeriveProcess.start of the test returned (a process, or None: none was started)."""
    seen: list[DeriveProcess | None] = []
    start = DeriveProcess.start

    def spy() -> DeriveProcess | None:
        seen.append(start())
        return seen[-1]

    monkeypatch.setattr(DeriveProcess, "start", staticmethod(spy))
    return seen


def test_a_small_home_derives_in_the_derive_process_and_gets_the_same_tables(
    home: Path, tmp_path: Path, started: list[DeriveProcess | None]
) -> None:
    apart = scan_home(home, out=tmp_path / "apart", jobs=2)  # read in one process (a small home)
    assert len(started) == 1 and started[0] is not None
    here = scan_home(home, out=tmp_path / "here", jobs=1)  # one job: no second process at all
    assert len(started) == 1
    for name in KEYS:
        assert _sorted(apart, name).num_rows > 0
        assert _sorted(apart, name).equals(_sorted(here, name)), name
    assert apart.row_counts == here.row_counts


def test_no_derive_process_beside_other_threads_nor_for_nothing_to_derive(
    home: Path, tmp_path: Path, started: list[DeriveProcess | None]
) -> None:
    scan_home(home, out=tmp_path / "s", jobs=2)
    assert len(started) == 1 and started[0] is not None
    scan_home(home, out=tmp_path / "s", jobs=2)  # a rescan with no ledger to read derives nothing
    assert len(started) == 1
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:  # another thread runs: no fork (the scan derives in process)
        res = scan_home(home, out=tmp_path / "t", jobs=2)
    finally:
        stop.set()
        t.join()
    assert len(started) == 2 and started[1] is None and res.row_counts["turns"] > 0


def test_a_lost_derive_process_leaves_the_derivation_here(home: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from vakaudit.scan.derive import _derive_plan
    from vakaudit.scan.manifest import read_manifest

    out = tmp_path / "ref"
    scan_home(home, out=out, jobs=1)
    files = read_manifest(out)["files"]
    ledgers = {rel: e for rel, e in files.items() if e.get("parts") and e.get("kind") == "session_ledger"}
    assert ledgers
    plan = _derive_plan(ledgers, {}, {}, False, {rel: SimpleNamespace(size_bytes=0) for rel in ledgers}, 1)
    assert plan is not None and plan[2] == 0
    counts = _derive_turns_sessions(out, plan[0], plan[1], 0)
    tables = {name: pq.read_table(out / name / "all.parquet") for name in KEYS}
    proc = DeriveProcess.start()
    assert proc is not None
    try:
        proc._warm.result()
        for p in list(proc._pool._processes.values()):  # the pool's one worker, lost
            p.kill()
            p.join()
        assert proc.derive(out, plan[0], plan[1]) == counts
    finally:
        proc.close()
    for name in KEYS:
        assert pq.read_table(out / name / "all.parquet").equals(tables[name]), name


def test_the_scanning_process_never_imports_duckdb(home: Path, tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from vakaudit.scan import scan_home\n"
        f"res = scan_home({str(home)!r}, out={str(tmp_path / 'x')!r}, jobs=2, full=True)\n"
        "print(res.row_counts['turns'] > 0, 'duckdb' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False"]
    # with one job the derivation runs here, and DuckDB with it (the check above can fail)
    out = subprocess.run([sys.executable, "-c", code.replace("jobs=2", "jobs=1")], capture_output=True,
                         text=True, check=True)  # fmt: skip
    assert out.stdout.split() == ["True", "True"]


def test_a_scan_that_raises_leaves_no_derive_process_behind(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    import vakaudit.scan.engine as engine

    workers: list = []
    start = DeriveProcess.start

    def spy() -> DeriveProcess | None:
        proc = start()
        assert proc is not None
        proc._warm.result()  # its worker is running
        workers.extend(proc._pool._processes.values())
        return proc

    def boom(*args: object, **kwargs: object) -> list:
        raise RuntimeError("a reader bug")

    monkeypatch.setattr(DeriveProcess, "start", staticmethod(spy))
    monkeypatch.setattr(engine, "_run_task", boom)
    with pytest.raises(RuntimeError, match="a reader bug"):
        scan_home(home, out=tmp_path / "s", jobs=2)
    gc.collect()
    assert workers
    for p in workers:
        p.join(timeout=10)
        assert not p.is_alive()
