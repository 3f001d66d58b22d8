"""Scan a vak home: walk it, send every file to one artifact kind, and write Arrow/Parquet tables.

Public names: :func:`scan_home`, :class:`ScanResult`, :func:`open_scan`, :func:`iter_home_files`,
:class:`HomeFile`, :func:`detect_layout`, :func:`default_home`, :class:`ScanProgress`,
:class:`ScanStats`. A scan only reads the home.
"""

from __future__ import annotations

from vakaudit.scan.engine import ScanProgress, ScanStats, default_out, scan_home
from vakaudit.scan.result import ScanResult, open_scan
from vakaudit.scan.tables import all_tables
from vakaudit.scan.walk import HomeFile, default_home, detect_layout, iter_home_files, resolve_home

__all__ = [
    "HomeFile",
    "ScanProgress",
    "ScanResult",
    "ScanStats",
    "all_tables",
    "default_home",
    "default_out",
    "detect_layout",
    "iter_home_files",
    "open_scan",
    "resolve_home",
    "scan_home",
]
