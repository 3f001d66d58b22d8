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
import re
import threading
from functools import lru_cache

from vakaudit.artifacts import _index
from vakaudit.artifacts._base import (
    LEDGER_KIND,
    ArtifactKind,
    Baseline7,
    Bound,
    Discipline,
    ReadContext,
    RegistryClass,
    WriteCard,
    WriteGroup,
    glob_matches,
)
from vakaudit.artifacts._index import KindEntry
from vakaudit.errors import VakauditError

__all__ = [
    "ArtifactKind",
    "Baseline7",
    "Bound",
    "Discipline",
    "DuplicateKindError",
    "LEDGER_KIND",
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
_KINDS: dict[str, ArtifactKind] | None = None  # every kind, once every kind module is imported
_MODULES: dict[str, str] = {}  # kind name -> its module's name in this package (with _KINDS)
# What classification ranks and matches: every (kind entry, pattern), in registry order, and an
# index over them. An entry (``_index.KindEntry``) stands for a kind whose module need not be
# imported yet (see :mod:`vakaudit.artifacts._index`). A pattern component without a
# wildcard matches exactly one component of a path (``*`` and ``?`` never cross a ``/``; ``**/`` and
# a trailing ``**`` match whole components), so a path can only match a pattern when it has the
# pattern's last such component: ``_BY_COMPONENT`` maps that component to the patterns (by their
# index). The few patterns without one (``**/*.lock``) are ``_UNKEYED``, each with the literal text
# its file name must start and end with. Only these candidates are matched against the path.
_PAIRS: list[tuple[KindEntry, str]] = []
# what _PAIRS was built from (None: not built yet): the index (_FROM_INDEX) or the kind modules
_PAIRS_OF: list[str | None] = [None]
_FROM_INDEX = "index"
_FROM_MODULES = "modules"
_ENTRY_BY_NAME: dict[str, KindEntry] = {}  # every kind's entry (those without a pattern too)
_IMPORTED: dict[str, ArtifactKind] = {}  # kind name -> the kind, its module imported for classification
_BY_COMPONENT: dict[str, list[int]] = {}
_UNKEYED: list[tuple[int, str, str]] = []  # (index, name prefix, name suffix)
# what a file name must end with or start with for an unkeyed pattern to be possible (the suffixes
# of those that have one, the prefixes of the others): two C-level tests rule most names out;
# None when some pattern has neither (every name is possible)
_UNKEYED_HINT: list[tuple[tuple[str, ...], tuple[str, ...]] | None] = [((), ())]
# each pair's rank, best first: what classify's tie-break sorts by (see classify)
_RANK: list[tuple[int, int, str]] = []
# (key components, layout is JSONL-era) -> the keyed patterns to try, best first
_RANKED: dict[tuple[frozenset[str], bool], tuple[int, ...]] = {}
# a directory -> its key components (a home has few directories next to its files)
_DIR_KEYS: dict[str, frozenset[str]] = {}
# (keyed candidates, unkeyed candidates of a file name) -> both, best first (few distinct pairs)
_MERGED: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[int, ...]] = {}


def _module_names() -> list[str]:
    """The kind modules of this package (every module whose name does not start with ``_``), sorted."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))


def _load() -> dict[str, ArtifactKind]:
    """Every kind, every kind module imported (once)."""
    global _KINDS
    if _KINDS is not None:
        return _KINDS
    with _LOCK:
        if _KINDS is not None:
            return _KINDS
        kinds: dict[str, ArtifactKind] = {}
        origin: dict[str, str] = {}
        for name in _module_names():
            module = importlib.import_module(f"{__name__}.{name}")
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
            origin[kind.name] = name
        if UNCLASSIFIED not in kinds:  # pragma: no cover - the module ships with the package
            raise DuplicateKindError(f"the {UNCLASSIFIED!r} kind module is missing")
        _MODULES.clear()
        _MODULES.update(origin)
        _KINDS = dict(sorted(kinds.items()))
        return _KINDS


def kind_modules() -> dict[str, tuple[str, ArtifactKind]]:
    """Every kind by name, with the name of the module in this package that declares it."""
    kinds = _load()
    return {name: (_MODULES[name], kind) for name, kind in kinds.items()}


def _pairs() -> list[tuple[KindEntry, str]]:
    """The (kind entry, pattern) pairs classification ranks, built once (until :func:`_forget`): from
    the index while it is the index of these very sources, else from the kind modules."""
    if _PAIRS_OF[0] is not None:
        return _PAIRS
    index = _valid_index()
    source = _FROM_INDEX
    if index is None:
        kinds = _load()
        index = tuple(KindEntry.of(_MODULES[name], kind) for name, kind in kinds.items())
        source = _FROM_MODULES
    with _LOCK:
        if _PAIRS_OF[0] is None:
            _build_pairs(tuple(sorted(index, key=lambda e: e.module)))  # the registry's order: by module
            _PAIRS_OF[0] = source
    return _PAIRS


def _valid_index() -> tuple[KindEntry, ...] | None:
    """The kind index, when it lists exactly this package's kind modules and was generated from the
    package's sources as they are (see :mod:`vakaudit.artifacts._index`); else None."""
    data = _index.entries()
    if data is None:
        return None
    digest, index = data
    if sorted(e.module for e in index) != _module_names() or UNCLASSIFIED not in {e.name for e in index}:
        return None  # a kind module added, removed or renamed since the index was written
    if _index.sources_digest(_index.package_sources(__path__)) != digest:
        return None  # a source of the package edited since
    return index


def _build_pairs(index: tuple[KindEntry, ...]) -> None:
    pairs = [(entry, pattern) for entry in index for pattern in entry.all_patterns]
    by_component: dict[str, list[int]] = {}
    unkeyed: list[tuple[int, str, str]] = []
    for i, (_, pattern) in enumerate(pairs):
        literal = [c for c in pattern.split("/") if c and not any(w in c for w in "*?")]
        if literal:
            by_component.setdefault(literal[-1], []).append(i)
        else:
            name = pattern.rsplit("/", 1)[-1]
            head, tail = re.split(r"[*?]", name, maxsplit=1)[0], re.split(r"[*?]", name)[-1]
            unkeyed.append((i, head, tail))
    _PAIRS[:] = pairs
    _IMPORTED.clear()
    _ENTRY_BY_NAME.clear()
    _ENTRY_BY_NAME.update((entry.name, entry) for entry in index)
    _BY_COMPONENT.clear()
    _BY_COMPONENT.update(by_component)
    _UNKEYED[:] = unkeyed
    _UNKEYED_HINT[0] = (
        None if any(not h and not t for _i, h, t in unkeyed)
        else (tuple(sorted({t for _i, _h, t in unkeyed if t})), tuple(sorted({h for _i, h, t in unkeyed if not t})))
    )
    _RANK[:] = [_rank(entry, pattern) for entry, pattern in pairs]
    _RANKED.clear()
    _DIR_KEYS.clear()
    _MERGED.clear()


def _kind_of(entry: KindEntry) -> ArtifactKind:
    """The kind ``entry`` stands for: from the registry once it is loaded, else its module imported."""
    kinds = _KINDS
    if kinds is not None:
        return kinds[entry.name]
    kind = _IMPORTED.get(entry.name)
    if kind is None:
        kind = _IMPORTED[entry.name] = importlib.import_module(f"{__name__}.{entry.module}").KIND
    return kind


def _forget() -> None:
    """Forget the registry and classification (the kind modules stay imported): what a test that adds or
    takes away a kind module calls."""
    global _KINDS
    with _LOCK:
        _KINDS = None
        _MODULES.clear()
        _PAIRS_OF[0] = None
    classify.cache_clear()


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


def _rank(kind: KindEntry, pattern: str) -> tuple[int, int, str]:
    return (-kind.priority, -specificity(pattern), kind.name)


def _tried(rel_path: str, layout: str | None) -> tuple[int, ...]:
    """The (kind, pattern) pairs that can match ``rel_path`` under ``layout``, by index, best first:
    the keyed patterns of its components (a directory's looked up once) and the unkeyed ones whose
    literal start and end its file name has; a JSONL-era layout leaves out the 7.0 patterns."""
    head, _, name = rel_path.rpartition("/")
    dir_keys = _DIR_KEYS.get(head)
    if dir_keys is None:
        if len(_DIR_KEYS) > 65_536:
            _DIR_KEYS.clear()
        dir_keys = _DIR_KEYS[head] = frozenset(c for c in head.split("/") if c in _BY_COMPONENT)
    keys = dir_keys | {name} if name in _BY_COMPONENT else dir_keys
    jsonl_era = layout not in (None, "g3")
    tried = _RANKED.get((keys, jsonl_era))
    if tried is None:
        pool = set().union(*(_BY_COMPONENT[c] for c in keys))
        if jsonl_era:  # a kind's 7.0 patterns do not apply to a JSONL-era home
            pool = {i for i in pool if _PAIRS[i][1] in _PAIRS[i][0].patterns}
        tried = _RANKED[(keys, jsonl_era)] = tuple(sorted(pool, key=lambda i: (_RANK[i], i)))
    hint = _UNKEYED_HINT[0]
    if hint is not None and not name.endswith(hint[0]) and not (hint[1] and name.startswith(hint[1])):
        return tried
    unkeyed = tuple(i for i, h, t in _UNKEYED if name.startswith(h) and name.endswith(t)
                    and (not jsonl_era or _PAIRS[i][1] in _PAIRS[i][0].patterns))
    if unkeyed:
        merged = _MERGED.get((tried, unkeyed))
        if merged is None:
            if len(_MERGED) > 65_536:
                _MERGED.clear()
            merged = _MERGED[(tried, unkeyed)] = tuple(sorted({*tried, *unkeyed}, key=lambda i: (_RANK[i], i)))
        tried = merged
    return tried


def candidates(rel_path: str, layout: str | None = None) -> list[tuple[ArtifactKind, str]]:
    """Every (kind, pattern) whose pattern matches ``rel_path``, best first.

    With a JSONL-era ``layout`` (``g1``/``g2``) a kind's 7.0 patterns do not apply: a folder named
    like a 7.0 ledger in a JSONL home is not a 7.0 ledger (its files stay undeclared)."""
    pairs = _pairs()
    found = [pairs[i] for i in _tried(rel_path, layout) if glob_matches(pairs[i][1], rel_path)]
    kinds = _load()
    return [(kinds[entry.name], pattern) for entry, pattern in found]


@lru_cache(maxsize=65_536)
def classify(rel_path: str, layout: str | None = None) -> ArtifactKind:
    """The one kind a path (relative to the home, POSIX separators) belongs to.

    Among the kinds whose patterns match, the highest ``priority`` wins, then the most specific
    pattern (most literal characters), then the name (deterministic; the registry contract test
    rejects such ties on every kind's example paths). No match -> the ``unclassified`` kind.

    The same answer as ``candidates(rel_path, layout)[0]``, found by trying the candidates best
    first and stopping at the first match.
    """
    pairs = _pairs()
    for i in _tried(rel_path, layout):
        entry, pattern = pairs[i]
        if glob_matches(pattern, rel_path):
            return _kind_of(entry)
    return _kind_of(_ENTRY_BY_NAME[UNCLASSIFIED])

