"""No module of vakaudit imports itself back at run time through others (imports under
``if TYPE_CHECKING:`` are for annotations only and do not count; a package counts as the module of
its ``__init__``, so ``from pkg import sub`` inside ``pkg`` is an edge to ``pkg`` too)."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "vakaudit"


def _graph() -> dict[str, set[str]]:
    mods: dict[str, Path] = {}
    for p in PKG.rglob("*.py"):
        parts = p.relative_to(PKG.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods[name] = p
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        tree = ast.parse(p.read_text(encoding="utf-8"))
        typing_only = {
            id(x)
            for n in ast.walk(tree)
            if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)
            for x in ast.walk(n)
        }
        for n in ast.walk(tree):
            if id(n) in typing_only:
                continue
            if isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
                targets = [n.module, *(f"{n.module}.{a.name}" for a in n.names)]
            elif isinstance(n, ast.Import):
                targets = [a.name for a in n.names]
            else:
                continue
            edges[m].update(t for t in targets if t in mods and t != m)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles() -> None:
    assert _cycles(_graph()) == []
