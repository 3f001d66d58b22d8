"""What classification needs of each kind before its module is imported, kept beside the kinds.

:func:`vakaudit.artifacts.classify` matches a path against every kind's patterns, but returns one
kind: importing all 51 kind modules to learn their patterns costs a process ~10 ms (~20 ms with
what they import), a tenth of a keyless ``verify`` of a small 7.0 home that meets two kinds.
``_index_data.py`` lists each kind module's name, kind name, priority and patterns; classification
ranks and matches with it and imports only the module of the kind it returns.

The kind modules stay the one definition: ``_index_data.py`` is generated from them
(``python -m vakaudit.artifacts``, see ``__main__.py``) and carries the SHA-256 of every source file
of the package it was generated from (:func:`package_sources`: the kind modules and the shared
modules their declarations use, such as ``_chain``'s patterns of record chains). It is used only
while the package's kind modules are the ones it lists and those files are those very bytes; any
edit in the package means every kind module is imported instead, until the index is written again
(a test fails until then).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

#: the generated file this module reads and writes
DATA_FILE = Path(__file__).with_name("_index_data.py")


class KindEntry(NamedTuple):
    """A kind as classification sees it: what :class:`~vakaudit.artifacts.ArtifactKind` it stands for
    (``module``: its module in :mod:`vakaudit.artifacts`) and the fields that rank and match it."""

    module: str
    name: str
    priority: int
    patterns: tuple[str, ...]  # the JSONL-era patterns
    all_patterns: tuple[str, ...]  # those, then the 7.0 ones: what is matched

    @classmethod
    def of(cls, module: str, kind: object) -> KindEntry:
        """The entry of ``kind`` (an ArtifactKind), declared in the kind module ``module``."""
        return cls(module, kind.name, kind.priority, tuple(kind.patterns), tuple(kind.all_patterns))  # type: ignore[attr-defined]


def entries() -> tuple[str, tuple[KindEntry, ...]] | None:
    """The sources' digest and the entries of ``_index_data.py``, or None when it is missing or
    unreadable."""
    try:
        from vakaudit.artifacts._index_data import KINDS, SOURCES_SHA256
    except (ImportError, SyntaxError):
        return None
    return SOURCES_SHA256, tuple(KindEntry(*row) for row in KINDS)


def package_sources(directories: Iterable[str]) -> list[tuple[str, Path]]:
    """Every ``.py`` file of the package's ``directories`` but the index itself, as ``(name, path)``:
    what a kind's declaration can be made of."""
    out = []
    for directory in directories:
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        out += [(n, Path(directory, n)) for n in names if n.endswith(".py") and n != DATA_FILE.name]
    return out


def sources_digest(files: Iterable[tuple[str, Path]]) -> str | None:
    """SHA-256 over source files, each ``(name, its file)`` in name order: what the index was
    generated from. None when one of them cannot be read (then the index is not used)."""
    h = hashlib.sha256()
    for name, path in sorted(files):
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        h.update(b"%s\0%d\0" % (name.encode(), len(data)))
        h.update(data)
    return h.hexdigest()


def source(kinds: dict[str, tuple[str, object]], digest: str) -> str:
    """The text of ``_index_data.py`` for ``kinds`` (kind name -> (module, ArtifactKind)) declared in
    a package whose sources' :func:`sources_digest` is ``digest``."""
    lines = [
        '"""Each kind module\'s kind as classification ranks and matches it: (module, name, priority,',
        "JSONL-era patterns, all patterns), and the SHA-256 of the package's sources it was made from.",
        "Generated from the kind modules by ``python -m vakaudit.artifacts``: do not edit (see",
        ":mod:`vakaudit.artifacts._index`).",
        '"""',
        "",
        f"SOURCES_SHA256 = {digest!r}",
        "",
        "KINDS = (",
    ]
    for module, kind in sorted(kinds.values(), key=lambda mk: mk[0]):
        lines.append(f"    {tuple(KindEntry.of(module, kind))!r},")
    lines.append(")")
    return "\n".join(lines) + "\n"

