"""vakaudit's compiled helpers, with the switch that turns them off.

``linescan`` is :mod:`vakaudit._native._linescan` (see ``linescan.c``: the session-ledger line
scanner; ``jsonl_columns``, the JSONL sidecar reader behind ``artifacts._jsonl.read_jsonl``; and
``compact_part``, the checkpoint pass behind ``artifacts._jsonstream.scan_document``) or None when
the extension was not built (no C compiler or OpenSSL headers at install time) or
``VAKAUDIT_NO_NATIVE=1`` is set. Every caller keeps a pure-Python path with identical results; the
environment switch exists so tests and benchmarks can compare the two.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

__all__ = ["linescan", "AVAILABLE", "BUILT", "arrow_column"]


def _load() -> ModuleType | None:
    try:
        from vakaudit._native import _linescan
    except ImportError:
        return None
    return _linescan


_module = _load()
#: True when the extension is importable (whatever the switch says).
BUILT: bool = _module is not None
#: the switch: VAKAUDIT_NO_NATIVE set to anything but "" or "0" turns the compiled code off
linescan: ModuleType | None = None if os.environ.get("VAKAUDIT_NO_NATIVE", "") not in ("", "0") else _module
AVAILABLE: bool = linescan is not None


def arrow_column(type_: Any, n: int, column: tuple[int, bytes | None, bytes, bytes | None]) -> Any:
    """The Arrow array of ``n`` values over a column the extension hands back, without copying:
    ``(null_count, validity bitmap or None, values or offsets, string data or None)``."""
    import pyarrow as pa

    nulls, valid, first, data = column
    buffers = [None if valid is None else pa.py_buffer(valid), pa.py_buffer(first)]
    if data is not None:
        buffers.append(pa.py_buffer(data))
    return pa.Array.from_buffers(type_, n, buffers, null_count=nulls)
