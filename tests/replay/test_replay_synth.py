"""Synthetic homes written by `vakaudit.synth` follow the spec: every checkable check passes."""

from __future__ import annotations

import pytest

from vakaudit.replay import iter_requests
from vakaudit.synth import build_home


def _tally(home):
    counts = {"pass": 0, "fail": 0, "not_checkable": 0}
    fails = []
    steps = 0
    for s in iter_requests(home):
        steps += 1
        for c in s.checks:
            counts[str(c.status)] += 1
            if c.failed:
                fails.append((s.session_id, s.turn, s.step, str(c.name), c.reason))
    return steps, counts, fails


@pytest.mark.parametrize("seed", [0, 3])
def test_fresh_synth_home_passes_every_checkable_check(tmp_path, seed):
    home = tmp_path / "home"
    build_home(home, profile="tiny", seed=seed, fsync=False)
    steps, counts, fails = _tally(home)
    assert steps > 0
    assert fails == []
    assert counts["pass"] > counts["not_checkable"] / 2  # most checks are decided, not skipped


def test_committed_tiny_sample_home_passes(sample_homes):
    steps, _counts, fails = _tally(sample_homes / "tiny")
    assert steps > 0
    assert fails == []
