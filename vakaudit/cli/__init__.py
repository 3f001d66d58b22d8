"""The ``vakaudit`` command line: a Typer app, one module per command.

This package is the only place that prints or exits. Every module in it whose name does not start
with ``_`` defines ``register(app)``; the app discovers them, so adding a command is adding one
module. Heavy libraries are imported inside the command functions to keep ``--help`` fast.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer

from vakaudit import __version__
from vakaudit.cli._errors import VakauditGroup

app = typer.Typer(
    cls=VakauditGroup,
    name="vakaudit",
    help=(
        "Audit, investigate and capacity-plan the on-disk home of the vak agent runtime.\n\n"
        "vakaudit only reads a home: it never writes, locks, truncates or repairs anything in it."
    ),
    invoke_without_command=True,  # no arguments: the help, exit 0 (see _root)
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"vakaudit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(
        False, "--debug", help="Show tracebacks for errors (also accepted after the command's name)."
    ),
) -> None:
    from vakaudit.cli import _errors

    _errors.DEBUG = debug
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


def _discover() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        module.register(app)


_discover()


def main() -> None:
    """Console-script entry point."""
    from vakaudit.cli._errors import run

    run(app)
