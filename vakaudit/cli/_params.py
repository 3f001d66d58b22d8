"""A command's parameters declared once, as data, for Typer and for a plain invocation.

A command module that declares ``PARAMS`` (a tuple of :class:`Param`) and ``run(**kwargs) -> int``
gets its Typer command built from them (:func:`typer_callback`), with the same help, names, types
and defaults as if the function had been written with ``typer.Option`` defaults. The console script
parses a plain invocation of such a command with the same declaration (:func:`parse`) and runs it
without importing Typer and its click (~35 ms of a process's start-up, a quarter of a keyless
``verify`` of a small 7.0 home). Anything :func:`parse` is not sure of (``--help``, a name it does
not know, a value it cannot convert, a repeated option, ``--``, ``-`` as a value, a missing value,
an extra argument) makes it return None, and Typer parses the whole command line as always: its
errors and help stay Typer's. A test holds what :func:`parse` returns against what Typer hands the
command for the same arguments.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple

#: the root's option that every command also takes after its name (``cli._group.VakauditGroup``)
DEBUG_FLAG = "--debug"


class Param(NamedTuple):  # a tuple, not a dataclass: ~1 ms less to define at start-up
    """One parameter: an argument when ``flags`` is empty, else an option spelled by ``flags``.

    ``kind`` is ``bool`` (a flag: present is True), ``str``, ``int``, ``Path`` or an :class:`Enum`
    subclass (its values are the choices; ``case_sensitive=False`` matches them in any case).
    ``optional`` makes the annotation ``kind | None`` (the default is then usually None). ``output``
    (``"folder"`` or ``"file"``) makes a ``Path`` one vakaudit writes: the option is
    :func:`vakaudit.cli._output.output_option`'s, which the output guard's test finds. A command
    module may also define ``plain_ok(**kwargs) -> bool``: False for values its ``run`` refuses with a
    usage error of click's (``typer.BadParameter``), which the console script then leaves to Typer."""

    name: str
    kind: type
    default: Any
    help: str  # noqa: A003 - Typer's word
    flags: tuple[str, ...] = ()
    optional: bool = False
    case_sensitive: bool = True
    output: str | None = None
    metavar: str | None = None  # the option value's name in --help (default: Typer's, from the type)

    @property
    def is_argument(self) -> bool:
        return not self.flags

    @property
    def annotation(self) -> Any:
        """The type Typer reads: ``kind``, or ``kind | None`` when ``optional``."""
        return (self.kind | None) if self.optional else self.kind


def parse(params: tuple[Param, ...], args: list[str]) -> tuple[dict[str, Any], bool] | None:
    """The keyword arguments ``args`` (what follows the command's name) give the command, and
    whether ``--debug`` was among them; None when Typer should parse them instead."""
    by_flag = {flag: p for p in params for flag in p.flags}
    arguments = [p for p in params if p.is_argument]
    values: dict[str, Any] = {}
    debug = False
    positional: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token == DEBUG_FLAG:
            debug = True
            continue
        if not token.startswith("-") or token == "-":
            if token == "-" or token == "":
                return None  # '-' and '' mean something to click's Path: its parse
            positional.append(token)
            continue
        name, eq, inline = token.partition("=")
        param = by_flag.get(name if token.startswith("--") else token)
        if param is None or param.name in values:
            return None  # --help, --, an unknown or combined option, a repeated one
        if param.kind is bool:
            if eq:
                return None
            values[param.name] = True
            continue
        if eq:
            raw = inline
        elif i < len(args):
            raw = args[i]
            i += 1
        else:
            return None  # a missing value: click's error
        if raw.startswith("-") or raw == "":
            return None
        value = _convert(param, raw)
        if value is None:
            return None
        values[param.name] = value
    if len(positional) > len(arguments):
        return None  # click's "unexpected extra argument"
    for param, raw in zip(arguments, positional, strict=False):
        value = _convert(param, raw)
        if value is None:
            return None
        values[param.name] = value
    for param in params:
        values.setdefault(param.name, param.default)
    return values, debug


def _convert(param: Param, raw: str) -> Any:
    """``raw`` as the parameter's type, or None where click would refuse it (not a choice of an enum,
    not an int, an output path click's ``Path`` checks refuse)."""
    if issubclass(param.kind, Enum):
        for member in param.kind:
            value = str(member.value)
            if value == raw or (not param.case_sensitive and value.casefold() == raw.casefold()):
                return member
        return None
    if param.kind is Path:
        if param.output is not None and not _writable_path(raw, folder=param.output == "folder"):
            return None
        return Path(raw)
    if param.kind is str:
        return raw
    if param.kind is int:
        try:
            return int(raw)  # what click's INT does
        except ValueError:
            return None
    raise TypeError(f"parameter {param.name}: no plain conversion for {param.kind!r}")


def _writable_path(raw: str, *, folder: bool) -> bool:
    """Whether click's ``Path(writable=True)`` of an output accepts ``raw`` as it is (no ``-``): a path
    that does not exist yet, or one that exists, is readable and writable, and for a folder is no
    regular file. Otherwise click says why (the plain parse declines)."""
    import os
    import stat

    try:
        st = os.stat(raw)
    except OSError:
        return True
    if folder and stat.S_ISREG(st.st_mode):
        return False
    return os.access(raw, os.R_OK) and os.access(raw, os.W_OK)


def echo(text: str, *, err: bool = False, nl: bool = True) -> None:
    """A line on standard output, or with ``err`` standard error (the streams ``CliRunner`` captures
    too), ended unless not ``nl``: a command run without Typer prints with this, not ``typer.echo``."""
    import sys

    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n" if nl else text)
    if err:
        stream.flush()


def typer_callback(run: Any, params: tuple[Param, ...]) -> Any:
    """A function Typer turns into the command: its signature says ``params`` as ``typer.Argument``
    / ``typer.Option`` defaults, and it calls ``run`` and exits with the code ``run`` returns."""
    import inspect

    import typer

    def callback(**kwargs: Any) -> None:
        raise typer.Exit(run(**kwargs) or 0)

    signature = []
    for p in params:
        if p.output is not None:
            from vakaudit.cli._output import output_option

            info = output_option(p.default, *p.flags, help=p.help, folder=p.output == "folder")
        elif p.is_argument:
            info = typer.Argument(p.default, help=p.help)
        elif issubclass(p.kind, Enum):
            info = typer.Option(p.default, *p.flags, help=p.help, case_sensitive=p.case_sensitive)
        elif p.metavar is not None:
            info = typer.Option(p.default, *p.flags, help=p.help, metavar=p.metavar)
        else:
            info = typer.Option(p.default, *p.flags, help=p.help)
        signature.append(inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=p.annotation))
    callback.__signature__ = inspect.Signature(signature)  # type: ignore[attr-defined]
    callback.__annotations__ = {p.name: p.annotation for p in params}
    callback.__name__ = callback.__qualname__ = f"{run.__name__}_cmd"
    callback.__doc__ = run.__doc__
    return callback
