"""The single place that turns errors into one stderr line and a documented exit code.

Exit codes: 0 success; 1 findings at or above the ``--fail-on`` threshold (verify) or a
check failed (replay); 2 usage error (bad option, missing home); 3 unexpected internal error.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

from vakaudit.errors import VakauditError

DEBUG = False

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


def run(app) -> None:  # noqa: ANN001 - a typer.Typer
    _exit(_invoke(app))


def run_plain(command: Any, kwargs: dict[str, Any]) -> None:
    """Run a command's ``run(**kwargs)`` as parsed by :func:`vakaudit.cli._params.parse`, without
    Typer: its errors end the process as :func:`run` ends it under Typer."""
    try:
        code = command(**kwargs)
    except (EOFError, KeyboardInterrupt):
        sys.stderr.write("\nvakaudit: aborted\n")  # click's blank line, then ours
        code = 130
    except Exception as exc:
        code = failed(exc)
    _exit(code or EXIT_OK)


def _exit(code: int) -> None:
    # The process ends here: what it holds goes to the collector's permanent generation, so that
    # the interpreter's shutdown does not traverse it in its last cyclic collections (15 of the 20 ms
    # a verify of bench's 7.0 home spent exiting). Reference counting still frees it as the modules
    # are torn down, atexit handlers run and the standard streams are flushed; only an object held
    # by a reference cycle alone is left to the OS without its finalizer (CPython does not promise
    # to run those at exit either).
    gc.freeze()
    sys.exit(code)


def _invoke(app) -> int:  # noqa: ANN001 - a typer.Typer
    import typer

    try:  # typer >= 0.20 vendors its own click
        from typer._click import exceptions as click_exc
    except ImportError:  # pragma: no cover - typer on top of the real click
        from click import exceptions as click_exc
    try:
        rc = app(standalone_mode=False)  # click returns (not raises) a typer.Exit code here
        return rc if isinstance(rc, int) else EXIT_OK
    except typer.Exit as exc:
        return int(getattr(exc, "exit_code", getattr(exc, "code", 0)) or 0)
    except typer.Abort:
        sys.stderr.write("vakaudit: aborted\n")
        return 130
    except click_exc.ClickException as exc:
        exc.show()
        return EXIT_USAGE
    except Exception as exc:
        return failed(exc)


def failed(exc: Exception) -> int:
    """The exit code of a command that raised ``exc``, its one stderr line written (a traceback
    too with ``--debug``): a :class:`VakauditError` is the user's mistake (2), anything else a bug (3);
    a closed standard output (``| head``) is no failure."""
    if isinstance(exc, BrokenPipeError):
        return EXIT_OK
    if DEBUG:
        import traceback

        traceback.print_exc()
    if isinstance(exc, VakauditError):
        sys.stderr.write(f"vakaudit: {exc}\n")
        return EXIT_USAGE
    sys.stderr.write(f"vakaudit: internal error: {type(exc).__name__}: {exc} (rerun with --debug)\n")
    return EXIT_INTERNAL
