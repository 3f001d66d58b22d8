"""The ``vakaudit`` command line: a Typer app, one module per command.

This package is the only place that prints or exits. Every module in it whose name does not start
with ``_`` defines ``register(app)`` and is named like the command it registers; the app discovers
them, so adding a command is adding one module. Heavy libraries are imported inside the command
functions to keep ``--help`` fast.

Commands are registered lazily: the console script (:func:`main`) imports only the module of the
command its arguments name (``vakaudit verify …`` never imports the modules of ``scan`` or
``report``, nor what they import at the top); anything else (``--help``, no command, a name that is
no module, shell completion) registers every command first, in discovery order, as does the
module attribute ``app`` (what tests and library code use).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys

import typer

from vakaudit import __version__
from vakaudit.cli._errors import VakauditGroup

_APP = typer.Typer(
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


@_APP.callback()
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


_ALL = False  # whether every command module is registered on _APP


def _command_modules() -> list[str]:
    """The command modules of this package, in discovery (name) order, without importing them."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))


def _register_all() -> typer.Typer:
    """The app with every command, registered in discovery order (also after one alone was)."""
    global _ALL
    if not _ALL:
        _APP.registered_commands.clear()
        _APP.registered_groups.clear()
        for name in _command_modules():
            importlib.import_module(f"{__name__}.{name}").register(_APP)
        _ALL = True
    return _APP


def _registered_names() -> set[str]:
    names = {c.name for c in _APP.registered_commands}
    return names | {g.name for g in _APP.registered_groups}


def _app_for(argv: list[str]) -> typer.Typer:
    """The app to run ``argv`` with: only the command it names when that command's module is found
    (the arguments before it being the root's ``--debug`` at most), else every command."""
    if _ALL:
        return _APP
    rest = list(argv)
    while rest and rest[0] == "--debug":
        rest.pop(0)
    name = rest[0] if rest else None
    if name is None or name.startswith("-") or any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        return _register_all()  # the root's help, its --version, or shell completion: every command
    if name not in _registered_names() and name in _command_modules():
        importlib.import_module(f"{__name__}.{name}").register(_APP)
    return _APP if name in _registered_names() else _register_all()


def __getattr__(name: str):  # noqa: ANN202 - a module attribute
    if name == "app":  # the whole app, for tests and library callers (CliRunner, click's command tree)
        app = _register_all()
        globals()["app"] = app
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Console-script entry point."""
    from vakaudit.cli._errors import run

    run(_app_for(sys.argv[1:]))
