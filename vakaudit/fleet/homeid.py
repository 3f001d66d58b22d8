"""``home_id``: the stable name of one home in a fleet lake (the value of its ``home_id=`` partitions).

Definition (docs/fleet.md): the first 16 hex digits of SHA-256 over the UTF-8 bytes of ::

    "vakaudit-home-id/1\n" + <the home's resolved absolute path> + "\n" + <installed_at>

where ``installed_at`` is the string value of ``installed_at`` in the home's ``install.json`` (vak
writes it once, when the home is installed), or the empty string when the file, the field or a
string value is missing. The same home at the same path always gets the same id; a copy restored
elsewhere, or a home installed again at the same path, gets a new one. Only ``install.json`` is
read, never a secret file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

ID_PREFIX = "vakaudit-home-id/1\n"
INSTALL_FILE = "install.json"


def read_installed_at(home: Path) -> str:
    """``installed_at`` from the home's ``install.json``, or "" when there is none to read."""
    try:
        with open(home / INSTALL_FILE, "rb") as f:
            doc = json.loads(f.read(1 << 16))
    except (OSError, ValueError):
        return ""
    value = doc.get("installed_at") if isinstance(doc, dict) else None
    return value if isinstance(value, str) else ""


def home_id(home: str | Path) -> str:
    """The home's fleet id (see the module docstring for the exact definition)."""
    resolved = Path(home).resolve()
    text = ID_PREFIX + str(resolved) + "\n" + read_installed_at(resolved)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
