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

A command module may declare its parameters as data instead (``PARAMS`` and ``run``, see
:mod:`vakaudit.cli._params`): Typer builds its command from them, and the console script runs a plain
invocation of it (no ``--help``, nothing the declaration does not parse surely) without importing
Typer at all. ``verify``, ``scan`` and ``report`` do, for their start-up.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from typing import Any

_APP: Any = None  # the Typer app, built on first use (a plain invocation never builds it)
_ALL = False  # whether every command module is registered on _APP


def _app() -> Any:
    """The Typer app, with the commands registered so far (none when just built)."""
    global _APP
    if _APP is None:
        from vakaudit.cli._group import build_app

        _APP = build_app()
    return _APP


def _command_modules() -> list[str]:
    """The command modules of this package, in discovery (name) order, without importing them."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))


def _register_all() -> Any:
    """The app with every command, registered in discovery order (also after one alone was)."""
    global _ALL
    if not _ALL:
        app = _app()
        app.registered_commands.clear()
        app.registered_groups.clear()
        for name in _command_modules():
            importlib.import_module(f"{__name__}.{name}").register(app)
        _ALL = True
    return _APP


def _registered_names() -> set[str]:
    names = {c.name for c in _app().registered_commands}
    return names | {g.name for g in _APP.registered_groups}


def _app_for(argv: list[str]) -> Any:
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
        importlib.import_module(f"{__name__}.{name}").register(_app())
    return _APP if name in _registered_names() else _register_all()


def __getattr__(name: str):  # noqa: ANN202 - a module attribute
    if name == "app":  # the whole app, for tests and library callers (CliRunner, click's command tree)
        app = _register_all()
        globals()["app"] = app
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _plain(argv: list[str]) -> tuple[Any, dict[str, Any]] | None:
    """The command and its keyword arguments when ``argv`` is a plain invocation of a command that
    declares its parameters as data (``PARAMS`` and ``run``: :mod:`vakaudit.cli._params`), else None.
    The root's ``--debug`` may come before the command's name and among its arguments."""
    from vakaudit.cli import _params

    rest = list(argv)
    debug = False
    while rest and rest[0] == _params.DEBUG_FLAG:
        rest.pop(0)
        debug = True
    if not rest or not rest[0].isidentifier() or rest[0].startswith("_"):
        return None
    if any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        return None  # shell completion is Typer's
    if not os.path.isfile(os.path.join(__path__[0], rest[0] + ".py")):
        return None  # no command module of that name (pkgutil's listing costs ~1 ms more)
    module = importlib.import_module(f"{__name__}.{rest[0]}")
    params = getattr(module, "PARAMS", None)
    if params is None:
        return None
    parsed = _params.parse(params, rest[1:])
    if parsed is None:
        return None
    kwargs, debug_after = parsed
    plain_ok = getattr(module, "plain_ok", None)
    if plain_ok is not None and not plain_ok(**kwargs):
        return None  # a value the command refuses with click's usage error: Typer's to say
    if debug or debug_after:
        from vakaudit.cli import _errors

        _errors.DEBUG = True
    return module.run, kwargs


def main() -> None:
    """Console-script entry point: a plain invocation of a command declared as data runs without
    Typer (:mod:`vakaudit.cli._params`); everything else through the Typer app."""
    from vakaudit.cli import _errors

    plain = _plain(sys.argv[1:])
    if plain is not None:
        _errors.run_plain(*plain)
    _errors.run(_app_for(sys.argv[1:]))
