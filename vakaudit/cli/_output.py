"""Writing an output file of ``baseline`` and ``check``: refused inside the home; ``-`` is stdout.

One function, so the shared output-path guard can take its place in one edit.
"""

from __future__ import annotations

from pathlib import Path

import typer

from vakaudit.errors import UsageError


def write_output(home: Path, out: Path, data: bytes) -> None:
    """Write ``data`` to ``out`` (``-``: standard output), never inside ``home``; parents are created."""
    if str(out) == "-":
        typer.echo(data.decode("utf-8"), nl=False)
        return
    target = out.expanduser()
    if target.resolve().is_relative_to(home.resolve()):
        raise UsageError(f"{out} is inside the home; vakaudit never writes into a home, choose another path")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
