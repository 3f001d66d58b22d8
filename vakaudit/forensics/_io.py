"""Paths for forensics' outputs: vakaudit never writes inside a home.

Reading evidence (open read-only, frame lines) is :mod:`vakaudit.ledger.evidence`.
"""

from __future__ import annotations

import os

__all__ = ["is_inside"]


def is_inside(home: str | os.PathLike, path: str | os.PathLike) -> bool:
    """True when ``path`` (resolved) is ``home`` or below it: vakaudit never writes there."""
    h = os.path.realpath(home)
    p = os.path.realpath(path)
    return p == h or p.startswith(h.rstrip("/") + "/")
