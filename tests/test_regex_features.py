"""No regex in vakaudit uses a possessive quantifier or an atomic group.

Early CPython 3.11 releases (Debian 12's 3.11.2) match both wrongly: the JSON compaction run
``(?:[^"]++|"[^"\\]{0,N}+")*+`` ended one byte late there. Every pattern handed to ``re`` is
rebuilt from the sources (string constants, module and local constants, f-strings, ``+``, ``%``,
``re.escape``, ``"".join`` of a list built by ``append``) and parsed with ``re``'s own parser.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

try:
    from re import _constants as _c
    from re import _parser as _p
except ImportError:  # pragma: no cover - the names before 3.11
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _p  # type: ignore[no-redef]

PKG = Path(__file__).resolve().parent.parent / "vakaudit"
RE_FUNCS = {"compile", "match", "search", "fullmatch", "sub", "subn", "split", "findall", "finditer"}
FORBIDDEN = {_c.POSSESSIVE_REPEAT: "possessive quantifier", _c.ATOMIC_GROUP: "atomic group"}


class _Unresolved(Exception):
    pass


class _Resolver:
    """Rebuilds the text of a pattern expression; what is filled in at run time becomes ``1``."""

    def __init__(self, tree: ast.Module) -> None:
        self.module_consts = self._consts(tree.body)
        self.tree = tree

    @staticmethod
    def _consts(body: list[ast.stmt]) -> dict[str, ast.expr]:
        out: dict[str, ast.expr] = {}
        for stmt in body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                out[stmt.targets[0].id] = stmt.value
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
                out[stmt.target.id] = stmt.value
        return out

    def resolve(self, node: ast.expr, scope: ast.AST | None) -> str | bytes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            return node.value
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return str(node.value)
        if isinstance(node, ast.JoinedStr):
            return "".join(self._fmt(v, scope) for v in node.values)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.resolve(node.left, scope) + self.resolve(node.right, scope)  # type: ignore[operator]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            left = self.resolve(node.left, scope)
            fields = re.compile(rb"%[ds]" if isinstance(left, bytes) else r"%[ds]")
            return fields.sub(b"1" if isinstance(left, bytes) else "1", left)  # type: ignore[arg-type]
        if isinstance(node, ast.Call) and _is_attr(node.func, "re", "escape"):
            return "1"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join":
            sep = self.resolve(node.func.value, scope)
            return sep.join(self._list_items(node.args[0], scope))  # type: ignore[arg-type]
        if isinstance(node, ast.Name):
            local = self._local(node.id, scope)
            if local is not None:
                return self.resolve(local, scope)
            if node.id in self.module_consts:
                return self.resolve(self.module_consts[node.id], None)
        raise _Unresolved(ast.unparse(node))

    def _fmt(self, value: ast.expr, scope: ast.AST | None) -> str:
        if isinstance(value, ast.Constant):
            return value.value
        assert isinstance(value, ast.FormattedValue)
        try:
            return str(self.resolve(value.value, scope))
        except _Unresolved:
            return "1"

    def _local(self, name: str, scope: ast.AST | None) -> ast.expr | None:
        if scope is None:
            return None
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                return node.value
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
                return node.value
        return None

    def _list_items(self, node: ast.expr, scope: ast.AST | None) -> list[str | bytes]:
        if isinstance(node, ast.List | ast.Tuple):
            return [self.resolve(e, scope) for e in node.elts]
        if isinstance(node, ast.Name) and scope is not None:
            # a list filled by .append(...): every piece that can be appended, in source order
            items = [
                self.resolve(call.args[0], scope)
                for call in ast.walk(scope)
                if isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr == "append"
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id == node.id
            ]
            if items:
                return items
        raise _Unresolved(ast.unparse(node))


def _is_attr(node: ast.expr, base: str, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) and node.value.id == base


def _patterns(source: str) -> tuple[list[tuple[int, str | bytes]], list[str]]:
    """Every pattern passed to a ``re`` function in one module, and the ones that could not be rebuilt."""
    tree = ast.parse(source)
    resolver = _Resolver(tree)
    found: list[tuple[int, str | bytes]] = []
    unresolved: list[str] = []
    scopes: list[tuple[ast.AST, ast.AST | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            scopes.extend((n, node) for n in ast.walk(node))
    in_function = {id(n): s for n, s in scopes}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RE_FUNCS):
            continue
        if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "re") or not node.args:
            continue
        try:
            found.append((node.lineno, resolver.resolve(node.args[0], in_function.get(id(node)))))
        except _Unresolved as e:
            unresolved.append(f"line {node.lineno}: {e}")
    return found, unresolved


def _forbidden_features(pattern: str | bytes) -> list[str]:
    """The possessive quantifiers and atomic groups in a pattern, from ``re``'s own parse tree."""
    out: list[str] = []

    def walk(items) -> None:  # noqa: ANN001 - re's internal SubPattern
        for op, av in items:
            if op in FORBIDDEN:
                out.append(FORBIDDEN[op])
            for arg in av if isinstance(av, tuple | list) else (av,):
                if isinstance(arg, _p.SubPattern):
                    walk(arg)
                elif isinstance(arg, tuple | list):
                    for sub in arg:
                        if isinstance(sub, _p.SubPattern):
                            walk(sub)

    text = pattern.decode("latin-1") if isinstance(pattern, bytes) else pattern
    walk(_p.parse(text))
    return out


def test_no_regex_in_vakaudit_uses_possessive_quantifiers_or_atomic_groups() -> None:
    bad: list[str] = []
    unresolved: list[str] = []
    count = 0
    for path in sorted(PKG.rglob("*.py")):
        found, missing = _patterns(path.read_text(encoding="utf-8"))
        rel = path.relative_to(PKG.parent)
        unresolved += [f"{rel} {m}" for m in missing]
        for line, pattern in found:
            count += 1
            bad += [f"{rel}:{line}: {feature} in {pattern!r}" for feature in _forbidden_features(pattern)]
    assert bad == []
    assert unresolved == [], "patterns this test cannot rebuild; teach _Resolver the construct"
    assert count >= 25  # the 27 re calls of today's sources, less two that reuse a compiled pattern name


def test_the_check_finds_each_forbidden_construct_in_a_source() -> None:
    source = (
        "import re\n"
        "A = re.compile(rb'(?:[^\"]++|\"[^\"\\\\]{0,%d}+\")*+' % 5)\n"
        "B = re.compile('(?>ab|a)c')\n"
        "def f(n):\n"
        "    parts = []\n"
        "    parts.append('x')\n"
        "    parts.append('y?+')\n"
        "    return re.match(''.join(parts), n)\n"
        "C = re.compile('a++ is not in a class [++] nor escaped \\\\+\\\\+')\n"
        "D = re.compile(f'{B}x*')\n"
    )
    found, unresolved = _patterns(source)
    assert unresolved == []
    features = {line: _forbidden_features(p) for line, p in found}
    assert features[2] == ["possessive quantifier"] * 3
    assert features[3] == ["atomic group"]
    assert features[8] == ["possessive quantifier"]
    assert features[9] == ["possessive quantifier"]  # only the first ++; [++] and \+\+ are literals
    assert features[10] == []


def test_plain_run_stops_before_a_long_string_on_every_interpreter() -> None:
    # the bytes that 3.11.2 matched to offset 6 with the possessive pattern: '{"a":' then a string
    # of 6 bytes, longer than the cap of 4, so the run stops at its opening quote (offset 5)
    from vakaudit.artifacts._jsonstream import _plain_run

    assert _plain_run(4).match(b'{"a":"abcdef","b":"xy"}').end() == 5
    assert _plain_run(4).match(b'{"a":"abcd","b":"xy"}').end() == 21
    assert _plain_run(4).match(b'{"a":"ab\\"c"}').end() == 5
