"""Shared fixtures: where the vak samples and the committed sample homes live."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
VAK_SAMPLES = SHARED / "vak-samples"
SAMPLE_HOMES = REPO / "sample_homes"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files from current output")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules that hold a ``slow`` test run first, each whole and in its own order.

    pytest-xdist's workers then share the short tests at the end (``--dist worksteal``), so the run
    does not end with one worker alone in a long test.
    """
    slow = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow)  # stable: every other order is kept


@pytest.fixture(autouse=True)
def _no_wait_for_a_writer(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """No writer appends to the ledgers of a test unless it is marked ``live_writer``.

    The ledger reader looks twice, ``TORN_RECHECK_S`` apart, whether a ledger grew past an unterminated
    last line (a live writer may still be copying it). In a test that starts no writer the file cannot
    grow, so both looks see the same size and the verdict is the same without the pause in between;
    a ``live_writer`` test keeps the pause. Commands run as their own process always keep it.
    """
    if request.node.get_closest_marker("live_writer") is None:
        import vakaudit.ledger.records as records

        monkeypatch.setattr(records, "TORN_RECHECK_S", 0.0)


@pytest.fixture(autouse=True)
def _charts_in_process(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports draw their charts in their own process unless the test is marked ``chart_process``.

    A report started outside the tests starts a chart process (``vakaudit.report.chart_process``), ~1 s
    of CPU on another core that pays off in a real report; the tests build ~60 small reports, each of
    which would start one, while a test process keeps one warm engine for all of its reports. The
    chart process is tested on its own (``tests/report/test_chart_process.py``), including that a
    report is the same byte for byte with and without it. The variable reaches the commands the tests
    run as processes too.
    """
    if request.node.get_closest_marker("chart_process") is None:
        from vakaudit.report.chart_process import IN_PROCESS_ENV

        monkeypatch.setenv(IN_PROCESS_ENV, "1")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(scope="session")
def vak_samples() -> Path:
    if not VAK_SAMPLES.is_dir():
        pytest.fail(f"vak samples not found at {VAK_SAMPLES}; the shared/ folder must sit beside the repo")
    return VAK_SAMPLES


@pytest.fixture(scope="session")
def sample_homes() -> Path:
    return SAMPLE_HOMES


@pytest.fixture(scope="session")
def measured_g1_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The measured profile's G1 home (seed 0), built once: the tests that use it only read it."""
    from vakaudit.synth import build_home

    home = tmp_path_factory.mktemp("measured") / "home"
    build_home(home, profile="measured", seed=0, layout="g1", fsync=False)
    return home


Snapshot = dict[str, tuple[int, int, bytes | None]]


def _tree_snapshot(home: Path) -> Snapshot:
    """(mtime, mode, bytes) of every file and directory under ``home``, by relative path."""
    snap: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(home):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
            snap[str(path.relative_to(home))] = (st.st_mtime_ns, st.st_mode, data)
    return snap


@pytest.fixture
def tree_snapshot() -> Callable[[Path], Snapshot]:
    """A function that snapshots a tree: a created, changed or touched file changes the snapshot."""
    return _tree_snapshot


@pytest.fixture
def tiny_home_copy(tmp_path: Path) -> Path:
    """A copy of the committed tiny sample home with its mtimes preserved and its directories pinned."""
    dst = tmp_path / "home"
    shutil.copytree(SAMPLE_HOMES / "tiny", dst, symlinks=True, copy_function=shutil.copy2)
    # copytree sets directory mtimes as it fills them; pin them so a snapshot is stable
    for dirpath, _dirs, _files in os.walk(dst, topdown=False):
        os.utime(dirpath, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    return dst


class KindModules:
    """``kind_modules(name, source)``: a kind module ``vakaudit.artifacts.<name>`` for one test, in a
    folder added to the package's path, and the registry loaded again with it; :meth:`reset` (also
    run after the test) takes them away and loads the registry without them."""

    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.folder, self.monkeypatch, self.added = folder, monkeypatch, []

    def __call__(self, name: str, source: str) -> None:
        import vakaudit.artifacts as artifacts

        (self.folder / f"{name}.py").write_text(source, encoding="utf-8")
        self.added.append(name)
        if str(self.folder) not in artifacts.__path__:
            self.monkeypatch.setattr(artifacts, "__path__", [*artifacts.__path__, str(self.folder)])
        artifacts._forget()

    def reset(self) -> None:
        import importlib
        import sys

        import vakaudit.artifacts as artifacts

        for name in self.added:
            sys.modules.pop(f"vakaudit.artifacts.{name}", None)
        self.added.clear()
        self.monkeypatch.undo()
        importlib.invalidate_caches()
        artifacts._forget()


@pytest.fixture
def kind_module(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """Kind modules added to the registry for one test (:class:`KindModules`)."""
    modules = KindModules(tmp_path_factory.mktemp("kinds"), monkeypatch)
    yield modules
    modules.reset()
