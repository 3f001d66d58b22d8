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
    threaded = list(home7._walk_all(work, sizes, {rel for _d, rel, _k in work}))
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
        for result in home7._walk_all(work, sizes, {rel for _d, rel, _k in work}):
            got.append(result)
    assert got == [WALK_ONE(work[0])]  # what came before it, and nothing after
    assert threading.active_count() == before


def test_a_walk_given_up_early_leaves_no_thread(two_threads: set[int]) -> None:
    work, sizes = _work()
    before = threading.active_count()
    walks = home7._walk_all(work, sizes, {rel for _d, rel, _k in work})
    next(walks)
    walks.close()
    assert threading.active_count() == before


def _walked_by(keys: object, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """verify_home7 of the sample, threads on: which thread walked each directory."""
    from vakaudit.scan import iter_home_files

    by: dict[str, int] = {}
    walk_one = home7._walk_one

    def slow(item):  # noqa: ANN001, ANN202
        by[item[1]] = threading.get_ident()
        time.sleep(0.02)
        return walk_one(item)

    monkeypatch.setattr(home7, "THREAD_MIN_BYTES", 0)
    monkeypatch.setattr(home7.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(home7, "_walk_one", slow)
    home7.verify_home7(SAMPLE, list(iter_home_files(SAMPLE)), keys=keys)
    return by


def test_only_conversations_walked_keyless_are_shared_with_a_helper(monkeypatch: pytest.MonkeyPatch) -> None:
    """A conversation's directory (it has a KEY) walked without its key is hashed, never decoded: a
    helper may take it. A record chain's frames are decoded in Python: this thread walks it."""
    by = _walked_by(None, monkeypatch)
    conversations = {d for d in by if (SAMPLE / d / "KEY").exists()}
    assert len(conversations) == 2 and len(by) == 5
    me = threading.get_ident()
    assert all(by[d] == me for d in set(by) - conversations)  # the record chains
    assert len(set(by.values())) == 2  # and the helper took a conversation


def test_a_keyed_walk_is_not_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the keys every sealed frame is opened in Python: a second thread would only slow it down."""
    from vakaudit.storage import KeyRing

    by = _walked_by(KeyRing.from_file(SAMPLE.parent / "v7-keys.json"), monkeypatch)
    assert len(by) == 5 and set(by.values()) == {threading.get_ident()}
