"""The single place that turns errors into one stderr line and a documented exit code.

Exit codes: 0 success; 1 findings at or above the ``--fail-on`` threshold (verify) or a
check failed (replay); 2 usage error (bad option, missing home); 3 unexpected internal error.
"""

from __future__ import annotations

import copy
import gc
import sys
import traceback

import typer
from typer.core import TyperGroup

from vakaudit.errors import VakauditError

try:  # typer >= 0.20 vendors its own click
    from typer._click import exceptions as _click_exc
except ImportError:  # pragma: no cover - typer on top of the real click
    from click import exceptions as _click_exc

DEBUG = False

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


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
        except VakauditError as exc:
            if DEBUG:
                traceback.print_exc()
            typer.echo(f"vakaudit: {exc}", err=True)
            raise typer.Exit(EXIT_USAGE) from None


def _debug_option(ctx, param, value: bool) -> bool:  # noqa: ANN001 - click's callback signature
    global DEBUG
    if value:
        DEBUG = True
    return value


def run(app) -> None:  # noqa: ANN001 - a typer.Typer
    code = _invoke(app)
    # The process ends here: what it holds goes to the collector's permanent generation, so that
    # the interpreter's shutdown does not traverse it in its last cyclic collections (15 of the 20 ms
    # a verify of bench's 7.0 home spent exiting). Reference counting still frees it as the modules
    # are torn down, atexit handlers run and the standard streams are flushed; only an object held
    # by a reference cycle alone is left to the OS without its finalizer (CPython does not promise
    # to run those at exit either).
    gc.freeze()
    sys.exit(code)


def _invoke(app) -> int:  # noqa: ANN001 - a typer.Typer
    try:
        rc = app(standalone_mode=False)  # click returns (not raises) a typer.Exit code here
        return rc if isinstance(rc, int) else EXIT_OK
    except typer.Exit as exc:
        return int(getattr(exc, "exit_code", getattr(exc, "code", 0)) or 0)
    except typer.Abort:
        sys.stderr.write("vakaudit: aborted\n")
        return 130
    except _click_exc.ClickException as exc:
        exc.show()
        return EXIT_USAGE
    except VakauditError as exc:
        if DEBUG:
            traceback.print_exc()
        sys.stderr.write(f"vakaudit: {exc}\n")
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # an unexpected bug: one line unless --debug
        if DEBUG:
            traceback.print_exc()
        sys.stderr.write(f"vakaudit: internal error: {type(exc).__name__}: {exc} (rerun with --debug)\n")
        return EXIT_INTERNAL
