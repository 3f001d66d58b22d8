"""``--keys``: the one place a command turns the option into a :class:`~vakaudit.storage.KeyRing`.

``--keys FILE`` reads vak's portable key file (its passphrase from ``$VAKAUDIT_KEY_PASSPHRASE``,
else a hidden prompt when stdin is a terminal) or vakaudit's JSON key file; ``--keys home`` reads
vak's file credential store in the home (``credentials.enc`` with ``.credential_key``), only when
asked. Nothing read here is ever printed, logged or written.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vakaudit.storage import KeyRing

#: What ``--keys`` says in every command's ``--help``.
KEYS_HELP = (
    "Unlock a 7.0 home's sealed frames and objects: vak's key file (passphrase from "
    "$VAKAUDIT_KEY_PASSPHRASE or a prompt), a JSON key file, or `home` for vak's file credential "
    "store in the home. Keyless without it."
)


def load_keys(value: str | None, home: Path | None) -> KeyRing | None:
    """The key ring ``--keys value`` names, or None without the option."""
    if value is None:
        return None
    from vakaudit.errors import KeyFileError, UsageError
    from vakaudit.scan import resolve_home
    from vakaudit.storage import KeyRing
    from vakaudit.storage.keys import KEY_FILE_MAGIC, PASSPHRASE_ENV

    if value == "home":
        return KeyRing.from_home(resolve_home(home))
    path = Path(value)
    if not path.is_file():
        raise UsageError(f"--keys {value}: no such file (give a key file, or `home` for the home's credential store)")
    passphrase = None
    try:
        with path.open("rb") as fh:
            sealed = fh.read(len(KEY_FILE_MAGIC)) == KEY_FILE_MAGIC.encode("ascii")
    except OSError as exc:
        raise KeyFileError(f"cannot read key file {path}: {type(exc).__name__}") from None
    if sealed and os.environ.get(PASSPHRASE_ENV) is None and sys.stdin.isatty():
        import typer

        passphrase = typer.prompt(f"passphrase for {path}", hide_input=True, err=True)
    return KeyRing.from_file(path, passphrase)


def load_keys_for(value: str | None, home_or_scan: Path | None) -> KeyRing | None:
    """``--keys`` of a command that takes a home or a scan directory: keys unlock the scan it makes
    of a home; a scan directory was unlocked (or not) when it was scanned, so keys are refused there."""
    if value is None:
        return None
    from vakaudit.errors import UsageError
    from vakaudit.scan.manifest import is_scan_dir

    if home_or_scan is not None and is_scan_dir(home_or_scan):
        raise UsageError(
            f"--keys applies to a home, and {home_or_scan} is a scan directory: scan the home with "
            "`vakaudit scan HOME --keys FILE --out DIR` and give that directory instead"
        )
    return load_keys(value, home_or_scan)
