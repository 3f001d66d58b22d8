"""CI gates: record what matters about a fixture home, then compare a fresh build of it with that.

Public API::

    build_baseline(home, *, scan_out=None) -> dict          (``vakaudit baseline``)
    read_baseline(path) -> dict
    load_budget(path | None) -> Budget                     (the TOML budget, with documented defaults)
    compare(baseline, current, budget) -> CheckResult      (``vakaudit check``)
    render_junit(result) -> bytes                          (one JUnit test case per metric)

Everything here builds on what the rest of vakaudit computes (``analyze``, ``verify_home``, replay's
``iter_requests``, a stored readscale result); nothing is measured twice. Nothing here prints, exits
or writes: the CLI writes the outputs, outside the home.
"""

from __future__ import annotations

from vakaudit.gates.budget import DEFAULT_BUDGET_TOML, Budget, load_budget, parse_budget
from vakaudit.gates.compare import CheckResult, CheckRow, compare
from vakaudit.gates.junit import render_junit
from vakaudit.gates.record import BASELINE_FORMAT, build_baseline, read_baseline

__all__ = [
    "BASELINE_FORMAT",
    "Budget",
    "CheckResult",
    "CheckRow",
    "DEFAULT_BUDGET_TOML",
    "build_baseline",
    "compare",
    "load_budget",
    "parse_budget",
    "read_baseline",
    "render_junit",
]
