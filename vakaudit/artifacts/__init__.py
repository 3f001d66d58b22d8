"""The artifact registry: the write map of a vak home, one module per artifact kind.

Every module of this package whose name does not start with ``_`` and that defines a module-level
``KIND: ArtifactKind`` is discovered; adding a kind is adding one module. A name registered twice
fails loudly (:class:`DuplicateKindError`). :func:`classify` sends every relative path to exactly
one kind, or to the ``unclassified`` kind, so byte shares over a home always add up to 100 %.

No I/O here besides importing the kind modules.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from functools import lru_cache

from vakaudit.artifacts._base import (
    ArtifactKind,
    Baseline7,
    Bound,
    Discipline,
    ReadContext,
    RegistryClass,
    WriteCard,
    WriteGroup,
)
from vakaudit.errors import VakauditError

__all__ = [
    "ArtifactKind",
    "Baseline7",
    "Bound",
    "Discipline",
    "DuplicateKindError",
    "ReadContext",
    "RegistryClass",
    "UNCLASSIFIED",
    "WriteCard",
    "WriteGroup",
    "all_kinds",
    "classify",
    "get_kind",
]

#: Name of the kind every path no other kind claims falls into.
UNCLASSIFIED = "unclassified"


class DuplicateKindError(VakauditError):
    """Two artifact modules declare a kind with the same name (a programming error, never data)."""


_LOCK = threading.Lock()
_KINDS: dict[str, ArtifactKind] | None = None
# basename -> kinds having a pattern whose last component is exactly that basename
_BY_BASENAME: dict[str, list[tuple[ArtifactKind, str]]] = {}
# patterns whose last component has a wildcard: always tried
_WILD: list[tuple[ArtifactKind, str]] = []


def _load() -> dict[str, ArtifactKind]:
    global _KINDS
    if _KINDS is not None:
        return _KINDS
    with _LOCK:
        if _KINDS is not None:
            return _KINDS
        kinds: dict[str, ArtifactKind] = {}
        origin: dict[str, str] = {}
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            if info.name.startswith("_"):
                continue
            module = importlib.import_module(f"{__name__}.{info.name}")
            kind = getattr(module, "KIND", None)
            if kind is None:
                continue
            if not isinstance(kind, ArtifactKind):
                raise TypeError(f"{module.__name__}.KIND is a {type(kind).__name__}, not an ArtifactKind")
            if kind.name in kinds:
                raise DuplicateKindError(
                    f"artifact kind {kind.name!r} is declared twice: in {origin[kind.name]} and in "
                    f"{module.__name__}; rename one of them"
                )
            kinds[kind.name] = kind
            origin[kind.name] = module.__name__
        if UNCLASSIFIED not in kinds:  # pragma: no cover - the module ships with the package
            raise DuplicateKindError(f"the {UNCLASSIFIED!r} kind module is missing")
        by_base: dict[str, list[tuple[ArtifactKind, str]]] = {}
        wild: list[tuple[ArtifactKind, str]] = []
        for kind in kinds.values():
            for pattern in kind.all_patterns:
                last = pattern.rsplit("/", 1)[-1]
                if any(c in last for c in "*?"):
                    wild.append((kind, pattern))
                else:
                    by_base.setdefault(last, []).append((kind, pattern))
        _BY_BASENAME.clear()
        _BY_BASENAME.update(by_base)
        _WILD[:] = wild
        _KINDS = dict(sorted(kinds.items()))
        return _KINDS


def all_kinds() -> tuple[ArtifactKind, ...]:
    """Every registered kind, sorted by name (``unclassified`` included)."""
    return tuple(_load().values())


def get_kind(name: str) -> ArtifactKind:
    """The kind called ``name``; ``KeyError`` names the known kinds when there is none."""
    kinds = _load()
    try:
        return kinds[name]
    except KeyError:
        raise KeyError(f"no artifact kind {name!r}; known kinds: {', '.join(kinds)}") from None


def specificity(pattern: str) -> int:
    """How specific a glob is: its count of literal characters (wildcards and ``**/`` excluded)."""
    return len(pattern.replace("**/", "").replace("**", "").replace("*", "").replace("?", ""))


def candidates(rel_path: str, layout: str | None = None) -> list[tuple[ArtifactKind, str]]:
    """Every (kind, pattern) whose pattern matches ``rel_path``, best first.

    With a JSONL-era ``layout`` (``g1``/``g2``) a kind's 7.0 patterns do not apply: a folder named
    like a 7.0 ledger in a JSONL home is not a 7.0 ledger (its files stay undeclared)."""
    from vakaudit.artifacts._base import glob_matches

    _load()
    base = rel_path.rsplit("/", 1)[-1]
    found = [
        (kind, pattern)
        for kind, pattern in (*_BY_BASENAME.get(base, ()), *_WILD)
        if glob_matches(pattern, rel_path)
        and (layout in (None, "g3") or pattern in kind.patterns)
    ]
    found.sort(key=lambda kp: (-kp[0].priority, -specificity(kp[1]), kp[0].name))
    return found


@lru_cache(maxsize=65_536)
def classify(rel_path: str, layout: str | None = None) -> ArtifactKind:
    """The one kind a path (relative to the home, POSIX separators) belongs to.

    Among the kinds whose patterns match, the highest ``priority`` wins, then the most specific
    pattern (most literal characters), then the name (deterministic; the registry contract test
    rejects such ties on every kind's example paths). No match -> the ``unclassified`` kind.
    """
    found = candidates(rel_path, layout)
    if found:
        return found[0][0]
    return _load()[UNCLASSIFIED]
