"""The root command group of the Typer app (what :mod:`vakaudit.cli` builds its app with)."""

from __future__ import annotations

import copy

import typer
from typer.core import TyperGroup

import vakaudit.cli._errors as _errors
from vakaudit import __version__
from vakaudit.errors import VakauditError


def build_app() -> typer.Typer:
    """The Typer app without commands (:mod:`vakaudit.cli` registers them)."""
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
    app.callback()(_root)
    return app


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"vakaudit {__version__}")
        raise typer.Exit()


def _root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(
        False, "--debug", help="Show tracebacks for errors (also accepted after the command's name)."
    ),
) -> None:
    _errors.DEBUG = debug
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


class VakauditGroup(TyperGroup):
    """The root command group: a :class:`VakauditError` from any command becomes one stderr line and
    exit 2, the same under ``CliRunner`` as from the console script. Every command also takes the
    root's ``--debug``, so ``vakaudit report … --debug`` works like ``vakaudit --debug report …``."""

    def __init__(self, **attrs) -> None:  # noqa: ANN003 - click's signature
        super().__init__(**attrs)
        root_debug = next(p for p in self.params if p.name == "debug")
        for command in self.commands.values():
            if any(p.name == "debug" for p in command.params):
                continue
            option = copy.copy(root_debug)
            option.expose_value = False  # the command functions do not take it
            option.callback = _debug_option
            command.params.append(option)

    def invoke(self, ctx):  # noqa: ANN001, ANN201 - click's signature
        try:
            return super().invoke(ctx)
        except VakauditError as exc:  # its line and code as the console script gives them
            raise typer.Exit(_errors.failed(exc)) from None


def _debug_option(ctx, param, value: bool) -> bool:  # noqa: ANN001 - click's callback signature
    if value:
        _errors.DEBUG = True
    return value
