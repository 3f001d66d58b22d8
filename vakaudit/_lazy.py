"""Names of a package resolved on first use (PEP 562), so importing the package imports none of
its modules until one of its names is used. Imports nothing of vakaudit."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, exports: dict[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the package ``package`` whose module namespace is ``namespace``:
    ``exports`` maps a name to the module defining it (absolute, or relative to the package when it
    has no dot). A resolved name is kept in the namespace, so it is looked up once."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module if "." in module else f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
