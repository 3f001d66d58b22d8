"""Scan a vak home: walk it, send every file to one artifact kind, and write Arrow/Parquet tables.

Public names: :func:`scan_home`, :class:`ScanResult`, :func:`open_scan`, :func:`iter_home_files`,
:class:`HomeFile`, :func:`detect_layout`, :func:`has_tenants_tree`, :func:`default_home`,
:class:`ScanProgress`, :class:`ScanStats`, :func:`ledger_kind_bytes`. A scan only reads the home. Names are imported
lazily, so the quick byte-share path does not pay for pyarrow.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "HomeFile": "vakaudit.scan.walk",
    "default_home": "vakaudit.scan.walk",
    "detect_layout": "vakaudit.scan.walk",
    "has_tenants_tree": "vakaudit.scan.walk",
    "iter_home_files": "vakaudit.scan.walk",
    "resolve_home": "vakaudit.scan.walk",
    "ScanProgress": "vakaudit.scan.engine",
    "ScanStats": "vakaudit.scan.manifest",
    "default_out": "vakaudit.scan.plan",
    "scan_home": "vakaudit.scan.engine",
    "ScanResult": "vakaudit.scan.result",
    "open_scan": "vakaudit.scan.result",
    "all_tables": "vakaudit.scan.tables",
    "ledger_kind_bytes": "vakaudit.scan.quick",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'vakaudit.scan' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
