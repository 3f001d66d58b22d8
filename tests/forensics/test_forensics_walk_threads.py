"""The segment directories of a 7.0 home walked on several threads: results in the walk's order, a
failing walk raised in its turn on the caller's thread, no thread left behind either way."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from vakaudit.forensics import home7

SAMPLE = Path(__file__).resolve().parents[2] / "sample_homes" / "v7"


def _work() -> tuple[list, dict[str, int]]:
    from vakaudit.scan import iter_home_files

    files = list(iter_home_files(SAMPLE))
    dirs = home7.segment_dirs(files)
    assert len(dirs) >= 3
    sizes = {d: 1000 * (i + 1) for i, d in enumerate(dirs)}  # the last directory is the largest
    return [(SAMPLE / d, d, None) for d in dirs], sizes


@pytest.fixture()
def two_threads(monkeypatch: pytest.MonkeyPatch) -> set[int]:
    """Threads on, on two cores; each walk takes long enough for the other thread to take the next."""
    walked: set[int] = set()

    def slow(item):  # noqa: ANN001, ANN202 - the walk's own argument and result
        walked.add(threading.get_ident())
        time.sleep(0.02)
        return WALK_ONE(item)

    monkeypatch.setattr(home7, "THREAD_MIN_BYTES", 0)
    monkeypatch.setattr(home7.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(home7, "_walk_one", slow)
    return walked


WALK_ONE = home7._walk_one  # one directory's walk, as this thread does it alone


def test_the_results_come_in_the_order_of_the_directories(two_threads: set[int]) -> None:
    work, sizes = _work()
    before = threading.active_count()
    threaded = list(home7._walk_all(work, sizes))
    assert len(two_threads) == 2  # both threads walked
    assert threaded == [WALK_ONE(w) for w in work]
    assert threading.active_count() == before


def test_a_failing_walk_is_raised_in_its_turn(two_threads: set[int], monkeypatch: pytest.MonkeyPatch) -> None:
    work, sizes = _work()
    slow = home7._walk_one
    bad = work[1][1]

    def failing(item):  # noqa: ANN001, ANN202
        if item[1] == bad:
            raise OSError("the disk went away")
        return slow(item)

    monkeypatch.setattr(home7, "_walk_one", failing)
    before = threading.active_count()
    got = []
    with pytest.raises(OSError, match="the disk went away"):
        for result in home7._walk_all(work, sizes):
            got.append(result)
    assert got == [WALK_ONE(work[0])]  # what came before it, and nothing after
    assert threading.active_count() == before


def test_a_walk_given_up_early_leaves_no_thread(two_threads: set[int]) -> None:
    work, sizes = _work()
    before = threading.active_count()
    walks = home7._walk_all(work, sizes)
    next(walks)
    walks.close()
    assert threading.active_count() == before
