"""Output options of the command line: how a command declares a path it writes.

Every option or argument that names a file or folder vakaudit writes is made with
:func:`output_option` or :func:`output_argument`. They mark the click parameter as a writable path
(``click.Path(writable=True)``), and a test walks the whole Typer app and tries every marked
parameter with a path inside a home, so an output the guard does not check fails that test. The
command itself checks the path with :func:`vakaudit.outputs.check_output` before any work.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

#: option names that always name an output: an option spelled like this must be an output option
OUTPUT_NAMES = frozenset(
    {"-o", "--out", "--output", "--export", "--junit", "--lake", "--keys-out", "--scan-out"}
)


def output_option(default: Any, *param_decls: str, help: str, folder: bool = False) -> Any:  # noqa: A002
    """A ``typer.Option`` for a path vakaudit writes: a file, where ``-`` means standard output (the
    command must honour it: :func:`vakaudit.outputs.is_stdout`), or with ``folder`` a folder."""
    return typer.Option(
        default,
        *param_decls,
        help=help,
        writable=True,
        allow_dash=not folder,
        file_okay=not folder,
        path_type=Path,
        metavar="DIR" if folder else "PATH",
    )


def output_argument(default: Any, *, help: str) -> Any:  # noqa: A002
    """A ``typer.Argument`` for a folder vakaudit writes."""
    return typer.Argument(default, help=help, writable=True, file_okay=False, path_type=Path, metavar="OUT")


def stdout_binary():  # noqa: ANN201 - a binary stream
    """Standard output as bytes (the stream ``CliRunner`` captures too), text written so far flushed."""
    import sys

    sys.stdout.flush()
    return sys.stdout.buffer


def homes_around(path: Any) -> list[Path]:
    """The homes an output of a command that reads no home must stay out of: vak's own data home
    (``$VAK_HOME`` or the platform data root) when it exists, and every folder above ``path`` that
    is a vak home."""
    import os

    from vakaudit.scan.paths import default_home, is_vak_home

    homes = []
    own = default_home()
    if own.is_dir():
        homes.append(own)
    real = Path(os.path.realpath(os.path.expanduser(os.fspath(path))))
    homes.extend(p for p in real.parents if p.is_dir() and is_vak_home(p))
    return homes
