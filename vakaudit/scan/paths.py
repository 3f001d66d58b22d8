"""Light path helpers of the scan (no pyarrow): the default home, read-only opens, ledger paths.

Kept apart from :mod:`vakaudit.scan.walk` so the quick byte-share path starts fast.
"""

from __future__ import annotations

import os
import re
import stat as stat_mod
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from vakaudit.errors import HomeNotFoundError, NotAHomeError
from vakaudit.outputs import check_temp_dir

__all__ = [
    "HOME_MARKER_DIRS",
    "conversation_dirs",
    "LEDGER_GLOB",
    "default_home",
    "home_candidates",
    "is_vak_home",
    "is_ledger_path",
    "iter_ledger_paths",
    "open_read_only",
    "resolve_home",
]

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


#: top-level directories that mark a vak data home: ``tenants/`` (G3, the 7.0 baseline: its
#: presence "marks a data home", baseline7.md §1.4), ``agents/`` (the agent homes, home.md §1) and
#: ``sessions/`` (flat G1 session ledgers, home.md §2)
HOME_MARKER_DIRS = ("tenants", "agents", "sessions")


def home_candidates(env: dict[str, str] | None = None) -> list[tuple[str, Path | None]]:
    """The places vak resolves its data home from, in order (home.md §1, baseline7.md §2.1), each as
    (where it comes from, path or None when unset): ``$VAK_HOME``, then the platform data root
    (``$XDG_DATA_HOME/vak``, else ``~/.local/share/vak``; macOS ``~/Library/Application Support/vak``).
    vak uses the first that is set; it never falls back from a set ``$VAK_HOME``."""
    env = dict(os.environ) if env is None else env
    vak_home = env.get("VAK_HOME", "")
    places: list[tuple[str, Path | None]] = [("$VAK_HOME", Path(vak_home).expanduser() if vak_home else None)]
    home = Path(env.get("HOME") or Path.home())
    if sys.platform == "darwin":
        places.append(("~/Library/Application Support/vak", home / "Library" / "Application Support" / "vak"))
    else:
        xdg = env.get("XDG_DATA_HOME", "")
        places.append(("$XDG_DATA_HOME/vak", Path(xdg) / "vak" if xdg else None))
        if not xdg:
            places.append(("~/.local/share/vak", home / ".local" / "share" / "vak"))
    return places


def default_home(env: dict[str, str] | None = None) -> Path:
    """The data home vak itself would use: the first set place of :func:`home_candidates`."""
    return next(p for _, p in home_candidates(env) if p is not None)


def is_vak_home(path: str | os.PathLike[str]) -> bool:
    """True when the directory ``path`` holds something vak writes at the top of a data home.

    The marks: a directory of :data:`HOME_MARKER_DIRS`, or a top-level file or directory whose exact
    name an artifact kind's path pattern spells out (``cost-log.jsonl``, ``tasks.json``,
    ``gateway/``, ``delivery/``, …; a wildcard such as ``*.log`` is no mark). Symlinks are no mark.
    An empty ``agents/`` is enough: an empty but real home is a home. Only the top level is listed,
    so a large directory that is no home is refused fast.
    """
    try:
        with os.scandir(os.fspath(Path(os.fspath(path)).expanduser())) as it:
            entries = [(e.name, e.is_dir(follow_symlinks=False), e.is_file(follow_symlinks=False)) for e in it]
    except OSError:
        return False
    if any(is_dir and name in HOME_MARKER_DIRS for name, is_dir, _ in entries):
        return True
    if not entries:
        return False
    files, dirs = _declared_names()
    return any((is_dir and name in dirs) or (is_file and name in files) for name, is_dir, is_file in entries)


@cache
def _declared_names() -> tuple[frozenset[str], frozenset[str]]:
    """(file names, directory names) the artifact kinds' path patterns spell out literally as their
    first component at any depth (``**/cost-log.jsonl``: a file; ``**/gateway/**``: a directory)."""
    from vakaudit.artifacts import all_kinds  # the registry loads pyarrow: only when needed

    files: set[str] = set()
    dirs: set[str] = set()
    for kind in all_kinds():
        for pattern in kind.patterns:
            first, sep, _rest = pattern.removeprefix("**/").partition("/")
            if any(c in first for c in "*?["):
                continue
            (dirs if sep else files).add(first)
    return frozenset(files), frozenset(dirs)


def resolve_home(home: str | os.PathLike[str] | None) -> Path:
    """An absolute home path (``~`` expanded; None: :func:`home_candidates` in order).

    Raises :class:`HomeNotFoundError` when it is not a directory (with no ``home``: listing every
    place tried) and :class:`NotAHomeError` when it holds nothing vak writes (:func:`is_vak_home`).
    """
    if home is None:
        places = home_candidates()
        chosen = next(p for _, p in places if p is not None)
        if chosen.is_dir():
            return _checked(Path(os.path.abspath(chosen)))
        tried = []
        for where, p in places:
            tried.append(f"{where} (not set)" if p is None else f"{where} = {p} (not a directory)")
            if p is not None:
                break
        raise HomeNotFoundError(
            f"no vak home found: tried {'; '.join(tried)}; pass the home directory, or set VAK_HOME"
        )
    path = Path(os.path.abspath(Path(os.fspath(home)).expanduser()))
    if not path.is_dir():
        raise HomeNotFoundError(f"vak home not found: {path} is not a directory (check the path)")
    return _checked(path)


def _checked(path: Path) -> Path:
    if not is_vak_home(path):
        raise NotAHomeError(
            f"not a vak home: {path} holds none of {', '.join(d + '/' for d in HOME_MARKER_DIRS)} "
            "or another file or folder vak writes at the data root (such as cost-log.jsonl or gateway/); "
            "pass the data home (the folder $VAK_HOME names)"
        )
    check_temp_dir(path)  # vakaudit's temporary files would be written into the home
    return path


def conversation_dirs(home: str | os.PathLike[str]) -> Iterator[Path]:
    """Every 7.0 conversation directory under ``home``: ``…/sessions/<space>/<session id>/`` holding
    ``seg-`` files, sorted. Symlinks are not followed."""
    root = Path(home).expanduser()
    found = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        d = Path(dirpath)
        if d.parent.parent.name == "sessions" and any(n.startswith("seg-") for n in filenames):
            found.append(d)
    yield from sorted(found)


def is_ledger_path(rel_path: str) -> bool:
    """Whether a path relative to a home is where a JSONL-era session ledger lives (:data:`LEDGER_GLOB`)."""
    return _LEDGER_RX.fullmatch(rel_path) is not None


def iter_ledger_paths(root: str | os.PathLike[str], *, any_type: bool = False) -> Iterator[tuple[str, int]]:
    """(rel_path, size) of every regular file matching :data:`LEDGER_GLOB`; symlinks never followed.
    ``any_type``: also a FIFO, socket or device named like a ledger (never opened here)."""
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
            elif (stat_mod.S_ISREG(st.st_mode) or (any_type and not stat_mod.S_ISLNK(st.st_mode))) \
                    and _LEDGER_RX.fullmatch(rel):
                yield rel, st.st_size
