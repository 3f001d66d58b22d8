"""The single place that turns errors into one stderr line and a documented exit code.

Exit codes: 0 success; 1 findings at or above the ``--fail-on`` threshold (verify) or a
check failed (replay); 2 usage error (bad option, missing home); 3 unexpected internal error.
"""

from __future__ import annotations

import sys
import traceback

import click

from vakaudit.errors import HomeNotFoundError, UsageError, VakauditError

DEBUG = False

try:  # typer >= 0.20 vendors its own click: its usage errors are not click.ClickException
    from typer._click.exceptions import ClickException as _TyperClickException

    _VENDORED_CLICK: tuple[type[Exception], ...] = (_TyperClickException,)
except ImportError:  # pragma: no cover - typer using the real click
    _VENDORED_CLICK = ()

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


def run(app) -> None:  # noqa: ANN001 - a typer.Typer
    try:
        rc = app(standalone_mode=False)  # click returns (not raises) a typer.Exit code here
        if isinstance(rc, int) and rc:
            sys.exit(rc)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        sys.stderr.write("vakaudit: aborted\n")
        sys.exit(130)
    except (click.ClickException, *_VENDORED_CLICK) as exc:
        exc.show()
        sys.exit(EXIT_USAGE)
    except (UsageError, HomeNotFoundError) as exc:
        sys.stderr.write(f"vakaudit: {exc}\n")
        sys.exit(EXIT_USAGE)
    except VakauditError as exc:
        if DEBUG:
            traceback.print_exc()
        sys.stderr.write(f"vakaudit: {exc}\n")
        sys.exit(EXIT_USAGE)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as exc:  # an unexpected bug: one line unless --debug
        if DEBUG:
            traceback.print_exc()
        sys.stderr.write(f"vakaudit: internal error: {type(exc).__name__}: {exc} (rerun with --debug)\n")
        sys.exit(EXIT_INTERNAL)
