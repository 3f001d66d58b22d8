"""Fleet fixtures: a set of homes (the committed sample homes plus small synthetic ones), their
ordinary one-home scans as the expectation, and a real Dask scheduler with workers on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import vakaudit

REPO = Path(vakaudit.__file__).resolve().parent.parent
SAMPLE_HOMES = REPO / "sample_homes"
BROKEN = ("branched", "clean", "g1_layout", "prev_hash_edited", "torn_last_line", "unknown_kind")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["DASK_LOGGING__DISTRIBUTED"] = "error"
    return env


def _dask(*args: str) -> subprocess.Popen:
    # the dask CLI of the running interpreter, so scheduler and workers import this vakaudit
    code = "import sys; from dask.__main__ import main; sys.argv[0] = 'dask'; main()"
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


@dataclass
class Cluster:
    """A real scheduler and worker processes, each worker on its own known port."""

    address: str
    scheduler: subprocess.Popen
    workers: dict[str, subprocess.Popen] = field(default_factory=dict)  # worker address -> process

    def add_worker(self) -> str:
        port = free_port()
        proc = _dask(
            "worker", self.address, "--host", "127.0.0.1", "--worker-port", str(port),
            "--nthreads", "1", "--no-nanny", "--no-dashboard",
        )
        addr = f"tcp://127.0.0.1:{port}"
        self.workers[addr] = proc
        return addr

    def wait_for_workers(self, n: int, timeout: float = 60.0) -> None:
        from distributed import Client

        with Client(self.address, timeout="30s") as c:
            c.wait_for_workers(n, timeout=timeout)

    def stop(self) -> None:
        for proc in [*self.workers.values(), self.scheduler]:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in [*self.workers.values(), self.scheduler]:
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:  # a graceful close can wait on the lost peers: end it
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def start_cluster(workers: int) -> Cluster:
    port = free_port()
    sched = _dask("scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard")
    cluster = Cluster(f"tcp://127.0.0.1:{port}", sched)
    deadline = time.monotonic() + 30
    while True:  # the scheduler is up when its port answers
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or sched.poll() is not None:
                cluster.stop()
                pytest.fail("the dask scheduler did not start")
            time.sleep(0.1)
    for _ in range(workers):
        cluster.add_worker()
    cluster.wait_for_workers(workers)
    return cluster


@pytest.fixture
def cluster():
    c = start_cluster(2)
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="session")
def fleet_homes(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The tiny sample home, six committed broken homes and two small synthetic homes (G2 and G1)."""
    from vakaudit.synth import build_home

    homes = [SAMPLE_HOMES / "tiny"]
    homes += [SAMPLE_HOMES / "broken" / name / "home" for name in BROKEN]
    root = tmp_path_factory.mktemp("synth-homes")
    for seed in (1, 2):
        out = root / f"synth-{seed}"
        build_home(out, profile="tiny", turns=6 * seed, sessions=2, seed=seed, layout="g2" if seed != 2 else "g1", fsync=False)
        homes.append(out)
    return homes


@pytest.fixture(scope="session")
def per_home_scans(fleet_homes: list[Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, int]]:
    """Row counts per table of each home's ordinary scan, keyed by the home's resolved path."""
    from vakaudit.scan import scan_home

    root = tmp_path_factory.mktemp("per-home-scans")
    out: dict[str, dict[str, int]] = {}
    for i, home in enumerate(fleet_homes):
        result = scan_home(home, out=root / str(i), jobs=1)
        out[str(home.resolve())] = {k: v for k, v in result.row_counts.items() if v}
    return out
