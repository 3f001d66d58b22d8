"""Dependencies point one way; library code never prints, exits or imports typer."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "vakaudit"

# package -> vakaudit packages it may import (besides itself and the base modules every layer may use:
# errors, findings, names, the output guard, the lazy-export helper and the private SQLite copy)
ALLOWED = {
    "ledger": {"_native"},  # the verdict's compiled fast path
    "_native": set(),
    "storage": {"_native"},  # the frame walker's compiled fast path
    "artifacts": {"ledger", "_native"},
    "scan": {"ledger", "artifacts", "storage"},
    "analyze": {"ledger", "artifacts", "scan", "storage"},  # 7.0 format facts (group commit)
    "forensics": {"ledger", "storage", "artifacts", "scan", "_native"},
    "replay": {"ledger", "storage", "scan"},  # 7.0 ledgers: frames, tenant objects, the tenant tree
    "synth": {"ledger", "replay", "artifacts", "storage"},  # the 7.0 layout through the storage writers
    "levers": {"ledger", "synth", "scan", "analyze", "artifacts"},
    "report": {"ledger", "artifacts", "scan", "analyze", "forensics", "replay", "levers"},
    "gates": {"ledger", "artifacts", "scan", "analyze", "forensics", "replay", "schemas"},
    "fleet": {"ledger", "artifacts", "scan", "analyze", "report", "storage"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_packages_import_only_downstream() -> None:
    bad = []
    for pkg, allowed in ALLOWED.items():
        for path in (PKG / pkg).rglob("*.py"):
            for name in _imports(path):
                parts = name.split(".")
                if parts[0] == "typer" or parts[0] == "click":
                    bad.append(f"{path.relative_to(PKG)} imports {name}")
                if parts[0] != "vakaudit" or len(parts) < 2:
                    continue
                target = parts[1]
                if target in {pkg, "errors", "outputs", "findings", "names", "_lazy", "_sqlite"}:
                    continue
                if target == "cli" or target not in allowed:
                    bad.append(f"{path.relative_to(PKG)} imports {name}")
    assert bad == []


def test_library_code_never_prints_or_exits() -> None:
    bad = []
    for path in PKG.rglob("*.py"):
        if "cli" in path.relative_to(PKG).parts or path.name == "__main__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                bad.append(f"{path.relative_to(PKG)}:{node.lineno} print()")
            if isinstance(node, ast.Attribute) and node.attr == "exit" and getattr(node.value, "id", "") == "sys":
                bad.append(f"{path.relative_to(PKG)}:{node.lineno} sys.exit")
    assert bad == []


def test_base_modules_import_no_layer() -> None:
    """The base modules every layer may import import nothing of vakaudit but each other."""
    base = {"errors", "outputs", "findings", "names", "_lazy", "_sqlite"}
    bad = []
    for name in sorted(base):
        for imported in _imports(PKG / f"{name}.py"):
            parts = imported.split(".")
            if parts[0] == "vakaudit" and (len(parts) < 2 or parts[1] not in base):
                bad.append(f"{name}.py imports {imported}")
    assert bad == []
