"""The one guard on every path vakaudit writes: never inside a vak home, never through a home file.

vakaudit only reads a home. Every file or folder it writes (a scan, a report, a seal, a timeline, an
export) goes through :func:`check_output` first and is then written with :func:`open_output` /
:func:`write_output`, which create it with ``O_EXCL`` under a temporary name in the target folder
and rename it into place, so a path that is (or becomes) a symlink or hard link to a home file is
replaced, never written through.

To guard a new output option:

1. declare it with ``vakaudit.cli._output.output_option`` (or ``output_argument``): the CLI test
   finds every such option in the Typer app and tries it with a path inside a home;
2. before doing any work, ``target = check_output(path, homes)`` where ``homes`` is the home the
   command reads (for a scan folder: :func:`vakaudit.analyze.scan_home_of`), ``folder=True`` when
   the option names a folder;
3. write with ``write_output(target, data, homes)`` or ``with open_output(target, homes) as f:``.

``-`` means standard output for a file option; :func:`is_stdout` tells, and the CLI writes there.
This module imports nothing but :mod:`vakaudit.errors` so every package may use it.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from vakaudit.errors import UsageError

__all__ = ["STDOUT", "check_output", "check_temp_dir", "is_stdout", "open_output", "write_output"]

#: the output path that means standard output
STDOUT = "-"

Homes = str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None


def is_stdout(path: str | os.PathLike[str] | None) -> bool:
    """True when ``path`` is ``-`` (standard output)."""
    return path is not None and os.fspath(path) == STDOUT


def _homes(homes: Homes) -> list[str]:
    if homes is None:
        return []
    if isinstance(homes, str | os.PathLike):
        homes = [homes]
    return [os.path.realpath(os.path.expanduser(os.fspath(h))) for h in homes if h is not None]


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def check_output(path: str | os.PathLike[str], homes: Homes, *, folder: bool = False) -> Path:
    """The absolute path to write ``path`` at (``~`` expanded); raises :class:`UsageError` when it
    would write into one of ``homes``.

    Refused: a path that resolves (through every symlink, ``..`` included) to a home or below it; for
    a ``folder`` output also a folder that holds a home (a scan cleans its folder); an existing file
    that shares its inode with a file of the home (a hard link). Nothing is created here.
    """
    raw = os.path.expanduser(os.fspath(path))
    target = Path(os.path.abspath(raw))
    real = os.path.realpath(target)
    for home in _homes(homes):
        if _under(real, home):
            raise UsageError(
                f"{path} is inside the home {home}; vakaudit never writes into a home: choose a path outside it"
            )
        if folder and _under(home, real):
            raise UsageError(
                f"{path} holds the home {home}; vakaudit never writes into a home: choose a folder outside it"
            )
    try:
        st = os.stat(target)  # follows a final symlink: the file a write would have reached
    except OSError:
        return target
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        for home in _homes(homes):
            if (st.st_dev, st.st_ino) in _inodes(home, st.st_dev):
                raise UsageError(
                    f"{path} is a hard link to a file of the home {home}; vakaudit never writes into a "
                    "home: choose another path"
                )
    return target


def check_temp_dir(homes: Homes) -> None:
    """Raise :class:`UsageError` when the temporary directory is one of ``homes`` or inside one:
    vakaudit's temporary files (private SQLite copies, DuckDB's spill files, the report's compiled
    templates, a scan's default folder) go there. The directory :mod:`tempfile` uses once chosen, else
    each of ``TMPDIR``, ``TEMP`` and ``TMP`` that is set (what it would choose first; the platform's
    own ``/tmp`` and the like are never inside a home)."""
    # not tempfile.gettempdir(): choosing a directory, it creates and deletes a file in it to test it;
    # and a tempfile not imported yet has chosen none (its import costs a command that needs none)
    tempfile = sys.modules.get("tempfile")
    if tempfile is not None and tempfile.tempdir:
        chosen = [tempfile.tempdir]
    else:
        chosen = [os.environ.get(v) for v in ("TMPDIR", "TEMP", "TMP")]
    for tmp in (os.path.realpath(os.path.expanduser(c)) for c in chosen if c):
        for home in _homes(homes):
            if _under(tmp, home):
                raise UsageError(
                    f"the temporary directory {tmp} is inside the home {home}; vakaudit never writes into "
                    "a home: set TMPDIR to a folder outside it"
                )


def _inodes(home: str, dev: int) -> set[tuple[int, int]]:
    """(device, inode) of every regular file under ``home`` on device ``dev``; symlinks not followed."""
    found: set[tuple[int, int]] = set()
    for dirpath, _dirs, files in os.walk(home, followlinks=False):
        for name in files:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if st.st_dev == dev and stat.S_ISREG(st.st_mode):
                found.add((st.st_dev, st.st_ino))
    return found


@contextmanager
def open_output(path: str | os.PathLike[str], homes: Homes = None) -> Iterator[BinaryIO]:
    """A binary file that becomes ``path`` when the block ends without an error.

    Checked with :func:`check_output`; missing parent folders are created; the file is created with
    ``O_EXCL`` under a fresh temporary name next to ``path`` and renamed over it at the end (on an
    error the temporary file is removed and ``path`` is left as it was).
    """
    target = check_output(path, homes)
    if target.is_dir():
        raise UsageError(f"{path} is a folder; name the file to write")
    target.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    while True:
        tmp = target.with_name(f".{target.name}.{os.urandom(6).hex()}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
        check_output(target, homes)  # a hard link made while writing is still refused
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_output(path: str | os.PathLike[str], data: bytes | str, homes: Homes = None) -> Path:
    """Write ``data`` (str as UTF-8) to ``path`` through :func:`open_output`; returns the path."""
    with open_output(path, homes) as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)
    return check_output(path, None)
