"""The scan folder's ``manifest.json``: its name and the one reader of it.

A scan folder is vakaudit's own output; a manifest that cannot be read is a caller problem (a
folder damaged or edited by hand), raised as :class:`ScanError` naming the file and what to do.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from vakaudit.errors import ScanError

__all__ = ["MANIFEST", "is_scan_dir", "read_manifest"]

#: the file that makes a folder a scan folder
MANIFEST = "manifest.json"


def is_scan_dir(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` holds a scan manifest (a scan folder, readable or not)."""
    return (Path(os.fspath(path)).expanduser() / MANIFEST).is_file()


def read_manifest(scan: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest of the scan folder ``scan``; :class:`ScanError` when it is missing or unreadable."""
    folder = Path(os.path.abspath(Path(os.fspath(scan)).expanduser()))
    path = folder / MANIFEST
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScanError(
            f"no vakaudit scan in {folder}: {MANIFEST} is missing; run `vakaudit scan HOME --out {folder}`"
        ) from None
    except (OSError, ValueError) as exc:
        raise ScanError(
            f"cannot read the scan manifest {path} ({type(exc).__name__}: {exc}); rescan with "
            f"`vakaudit scan HOME --out {folder} --full`, or delete {folder}"
        ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("home"), str):
        raise ScanError(
            f"{path} is not a vakaudit scan manifest (no 'home'); rescan with "
            f"`vakaudit scan HOME --out {folder} --full`, or delete {folder}"
        )
    return doc
