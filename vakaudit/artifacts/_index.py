"""What classification needs of each kind before its module is imported, kept beside the kinds.

:func:`vakaudit.artifacts.classify` matches a path against every kind's patterns, but returns one
kind: importing all 51 kind modules to learn their patterns costs a process ~10 ms (~20 ms with
what they import), a tenth of a keyless ``verify`` of a small 7.0 home that meets two kinds.
``_index_data.py`` lists each kind module's name, kind name, priority and patterns; classification
ranks and matches with it and imports only the module of the kind it returns, which is checked
against its line there (:func:`check`). The kind modules stay the one definition: ``_index_data.py``
is generated from them (``python -m vakaudit.artifacts`` writes it again, see ``__main__.py``), a test fails when
it differs from what they declare, and the registry does without it, importing every module, when
the package's modules are not the ones it lists (a kind module added, removed or renamed).
"""

from __future__ import annotations

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


def entries() -> tuple[KindEntry, ...] | None:
    """The entries of ``_index_data.py``, or None when it is missing or unreadable."""
    try:
        from vakaudit.artifacts._index_data import KINDS
    except (ImportError, SyntaxError):
        return None
    return tuple(KindEntry(*row) for row in KINDS)


def source(kinds: dict[str, tuple[str, object]]) -> str:
    """The text of ``_index_data.py`` for ``kinds`` (kind name -> (module, ArtifactKind))."""
    lines = [
        '"""Each kind module\'s kind as classification ranks and matches it: (module, name, priority,',
        "JSONL-era patterns, all patterns). Generated from the kind modules by",
        "``python -m vakaudit.artifacts``: do not edit (see :mod:`vakaudit.artifacts._index`).",
        '"""',
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

