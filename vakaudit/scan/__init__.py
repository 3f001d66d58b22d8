"""Scan a vak home: walk it, send every file to one artifact kind, and write Arrow/Parquet tables.

Public names: :func:`scan_home`, :class:`ScanResult`, :func:`open_scan`, :func:`iter_home_files`,
:class:`HomeFile`, :func:`detect_layout`, :func:`default_home`. A scan only reads the home.
"""

from __future__ import annotations

from vakaudit.scan.walk import HomeFile, default_home, detect_layout, iter_home_files, resolve_home

__all__ = ["HomeFile", "default_home", "detect_layout", "iter_home_files", "resolve_home"]
