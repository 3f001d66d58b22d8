"""Find the session ledgers of a home (or take one ledger file) for replay. Reads only."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from vakaudit.errors import HomeNotFoundError
from vakaudit.scan.paths import iter_ledger_paths as scan_ledger_paths

__all__ = ["iter_ledger_paths"]


def iter_ledger_paths(home_or_ledger: str | os.PathLike) -> Iterator[Path]:
    """Ledger files under a home, sorted: every `**/sessions/<key>/<id>.jsonl`; a file is itself.

    Covers `sessions/<key>/` at the root, `agents/<id>/sessions/<key>/` and nested homes. Symlinks
    are never followed (a home is read without leaving it). A FIFO, socket or device named like a
    ledger is listed (never opened here): replaying it raises :class:`~vakaudit.errors.UnreadableError`,
    as does a ledger that vanished after it was listed.
    """
    root = Path(home_or_ledger).expanduser()
    if root.is_file() or (root.suffix == ".jsonl" and not root.is_dir() and root.parent.is_dir()):
        # a ledger path (also one that vanished or is not a regular file: opening it says which)
        yield root
        return
    if not root.is_dir():
        raise HomeNotFoundError(f"{root} is neither a home directory nor a ledger file")
    # the scan's ledger paths (one definition of where a ledger lives), FIFOs and devices included
    yield from sorted(root / rel for rel, _size in scan_ledger_paths(root, any_type=True))
