"""How many worker processes a verify starts by default: one per core no other task is running on as it
starts, read from the running count of Linux's ``/proc/loadavg`` (this process is one of them); the 1-min
load average only without that file. Expectations worked by hand from the file's documented format
(``proc(5)``: ``load1 load5 load15 running/total last_pid``)."""

from __future__ import annotations

import os

import pytest

from vakaudit.forensics.home import idle_cores, idle_cores_of


@pytest.mark.parametrize(
    ("cpus", "text", "load", "expected"),
    [
        (2, b"1.90 1.20 0.80 1/230 4711\n", 1.9, 2),  # only this process runs: the 1-min average is the last run's
        (2, b"0.10 0.05 0.01 2/230 4711\n", 0.1, 1),  # one other task running now
        (2, b"3.00 3.00 3.00 5/230 4711\n", 3.0, 0),  # busier than the cores: none idle (verify then runs alone)
        (8, b"0.00 0.00 0.00 3/99 1\n", 0.0, 6),
        (2, b"garbage\n", 0.0, 2),  # unreadable: this process alone is assumed
        (2, None, 0.6, 1),  # no /proc: the 1-min average, rounded (2 - 0.6 = 1.4)
        (2, None, 1.4, 1),  # 0.6 rounds to 1
        (2, None, 2.7, 0),
    ],
)
def test_idle_cores_of(cpus: int, text: bytes | None, load: float, expected: int) -> None:
    assert idle_cores_of(cpus, text, load) == expected


def test_idle_cores_reads_this_machine() -> None:
    # the running count changes from one moment to the next (the test suite's own workers come and
    # go), so only the bounds are certain here; the arithmetic is held above
    n = idle_cores()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    assert 0 <= n <= cpus
