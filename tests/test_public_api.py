"""The curated public API: every name in ``vakaudit.__all__`` resolves to the documented object."""

from __future__ import annotations

import inspect
import subprocess
import sys

import vakaudit


def test_every_public_name_resolves() -> None:
    missing = [name for name in vakaudit.__all__ if not hasattr(vakaudit, name)]
    assert missing == []


def test_public_names_are_the_objects_of_their_home_modules() -> None:
    from vakaudit.forensics import verify_home
    from vakaudit.ledger import SessionLog
    from vakaudit.replay import iter_requests
    from vakaudit.scan import scan_home

    assert vakaudit.SessionLog is SessionLog
    assert vakaudit.scan_home is scan_home
    assert vakaudit.iter_requests is iter_requests
    assert vakaudit.verify_home is verify_home
    assert inspect.isfunction(vakaudit.build_report)


def test_importing_vakaudit_does_not_load_the_analytics_stack() -> None:
    code = "import sys, vakaudit; print(any(m in sys.modules for m in ('duckdb', 'polars', 'altair')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
