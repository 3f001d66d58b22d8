"""The one line a command prints on stderr when its home is a 7.0 data-baseline home (layout g3).

What each command reads of such a home, said once, so that a report with no sessions in it is not
taken for a home with no sessions.
"""

from __future__ import annotations

import json
from pathlib import Path

from vakaudit.cli._params import echo

#: What applies of a 7.0 home, per command (``scan`` and ``verify`` say it as a finding instead).
V7_PARTS = {
    "seal": "its record segments are listed under 'unsealed', not sealed; JSONL-form files are sealed",
    "timeline": "file times of every file apply; 7.0 ledger frames and record-chain rows give no rows yet",
    "analyze": "sizes by kind, file and frame apply without keys; per-turn figures need the plaintext entries of its sealed frames (--keys)",
    "report": "sizes by kind, file and frame apply without keys; per-turn figures need the plaintext entries of its sealed frames (--keys)",
}


#: what analyze and report read of a 7.0 home whose frames are all readable (unlocked)
V7_UNLOCKED = "unlocked: every figure applies, with stored and plaintext bytes"


def _scan_locked_frames(path: Path) -> int | None:
    """The frames a scan could not open (its manifest's ``stats.locked_frames``), None when unknown."""
    try:
        stats = json.loads((path / "manifest.json").read_text(encoding="utf-8")).get("stats", {})
        n = stats.get("locked_frames")
    except (OSError, ValueError, AttributeError):
        return None
    return int(n) if isinstance(n, int) else None


def v7_form(path: Path | None) -> str | None:
    """``"home"`` for a 7.0 home (``tenants/`` in it), ``"scan"`` for a scan of one (manifest layout
    g3), else None."""
    if path is None or not path.is_dir():
        return None
    from vakaudit.scan.walk import has_tenants_tree

    if has_tenants_tree(path):
        return "home"
    manifest = path / "manifest.json"
    if not manifest.is_file():
        return None
    try:
        layout = json.loads(manifest.read_text(encoding="utf-8")).get("layout")
    except (OSError, ValueError, AttributeError):
        return None
    return "scan" if layout == "g3" else None


def note_v7(path: Path | None, command: str, *, keys: bool = False) -> None:
    """Print, on stderr, what ``command`` reads of ``path`` when it is a 7.0 home or a scan of one.

    ``keys``: the command was given ``--keys`` (a home is then read unlocked); a scan says itself
    whether its frames were all readable."""
    form = v7_form(path)
    if form is not None:
        what = "a 7.0 data-baseline home" if form == "home" else "a scan of a 7.0 data-baseline home"
        part = V7_PARTS[command]
        if command in ("analyze", "report"):
            unlocked = keys if form == "home" else _scan_locked_frames(path) == 0  # type: ignore[arg-type]
            if unlocked:
                part = V7_UNLOCKED
        echo(f"note: {path} is {what} (layout g3): {part}", err=True)
