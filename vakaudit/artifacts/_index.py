"""What classification needs of each kind before its module is imported, kept beside the kinds.

:func:`vakaudit.artifacts.classify` matches a path against every kind's patterns, but returns one
kind: importing all 51 kind modules to learn their patterns costs a process ~10 ms (~20 ms with
what they import), a tenth of a keyless ``verify`` of a small 7.0 home that meets two kinds.
``_index_data.py`` lists each kind module's name, kind name, priority and patterns; classification
ranks and matches with it and imports only the module of the kind it returns. The kind modules stay
the one definition: ``_index_data.py`` is generated from them (``python -m vakaudit.artifacts``
writes it again, see ``__main__.py``) with the SHA-256 of their sources (:func:`sources_digest`),
and is used only while the package's kind modules are the ones it lists with those very bytes
(a module added, removed, renamed or edited: every module is imported instead). A test fails when
it is out of date; each kind classification returns is also checked against its line
(:func:`check`).
"""

from __future__ import annotations

import hashlib
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


def sources_digest(modules: Iterable[tuple[str, Path]]) -> str | None:
    """SHA-256 over the kind modules' sources, each ``(name, its file)`` in name order: what the
    index was generated from. None when one of them cannot be read (then the index is not used)."""
    h = hashlib.sha256()
    for name, path in sorted(modules):
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        h.update(b"%s\0%d\0" % (name.encode(), len(data)))
        h.update(data)
    return h.hexdigest()


def source(kinds: dict[str, tuple[str, object]], digest: str) -> str:
    """The text of ``_index_data.py`` for ``kinds`` (kind name -> (module, ArtifactKind)) declared by
    kind modules whose :func:`sources_digest` is ``digest``."""
    lines = [
        '"""Each kind module\'s kind as classification ranks and matches it: (module, name, priority,',
        "JSONL-era patterns, all patterns), and the SHA-256 of the kind modules' sources it was made from.",
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


def check(entry: KindEntry, module: str, kind: object) -> bool:
    """Whether the kind module ``module``'s ``kind`` is what ``entry`` says of it."""
    return entry == KindEntry.of(module, kind)

