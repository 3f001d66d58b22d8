"""Light path helpers of the scan (no pyarrow): the default home, read-only opens, ledger paths.

Kept apart from :mod:`vakaudit.scan.walk` so the quick byte-share path starts fast.
"""

from __future__ import annotations

import os
import re
import stat as stat_mod
import sys
from collections.abc import Iterator
from pathlib import Path

from vakaudit.errors import HomeNotFoundError

__all__ = ["LEDGER_GLOB", "default_home", "iter_ledger_paths", "open_read_only", "resolve_home"]

#: where session ledgers live; the same glob as the ``session_ledger`` kind (a test keeps them equal)
LEDGER_GLOB = "**/sessions/*/*.jsonl"
_LEDGER_RX = re.compile(r"(?:.*/)?sessions/[^/]*/[^/]*\.jsonl")

_O_NOATIME = getattr(os, "O_NOATIME", 0)
_O_BASE = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
)


def open_read_only(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor that never follows a final symlink and never bumps atime when allowed.

    ``O_NONBLOCK`` keeps a FIFO from blocking the scan; ``O_NOATIME`` (owner or root only) keeps
    even the access time of the evidence unchanged.
    """
    if _O_NOATIME:
        try:
            return os.open(path, _O_BASE | _O_NOATIME)
        except PermissionError:
            pass
    return os.open(path, _O_BASE)


def default_home(env: dict[str, str] | None = None) -> Path:
    """The data home vak itself would use (home.md §1): ``$VAK_HOME`` when set and non-empty, else the
    platform data home (``$XDG_DATA_HOME/vak`` or ``~/.local/share/vak``; macOS
    ``~/Library/Application Support/vak``)."""
    env = dict(os.environ) if env is None else env
    vak_home = env.get("VAK_HOME", "")
    if vak_home:
        return Path(vak_home).expanduser()
    home = Path(env.get("HOME") or Path.home())
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "vak"
    xdg = env.get("XDG_DATA_HOME", "")
    base = Path(xdg) if xdg else home / ".local" / "share"
    return base / "vak"


def resolve_home(home: str | os.PathLike[str] | None) -> Path:
    """An absolute home path; raises :class:`HomeNotFoundError` when it is not a directory."""
    path = default_home() if home is None else Path(home).expanduser()
    path = Path(os.path.abspath(path))
    if not path.is_dir():
        hint = "pass the home directory, or set VAK_HOME" if home is None else "check the path"
        raise HomeNotFoundError(f"vak home not found: {path} is not a directory ({hint})")
    return path


def iter_ledger_paths(root: str | os.PathLike[str]) -> Iterator[tuple[str, int]]:
    """(rel_path, size) of every regular file matching :data:`LEDGER_GLOB`; symlinks never followed."""
    base = os.fspath(root)
    stack = [(base, "")]
    while stack:
        abs_dir, rel_dir = stack.pop()
        try:
            with os.scandir(abs_dir) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat_mod.S_ISDIR(st.st_mode):
                stack.append((e.path, rel))
            elif stat_mod.S_ISREG(st.st_mode) and _LEDGER_RX.fullmatch(rel):
                yield rel, st.st_size
