"""``refs.db`` of a vak 7.0 tenant store (baseline7.md §5): one SQLite table of named refs.

``refs(name TEXT PRIMARY KEY, generation INTEGER, epoch INTEGER, target BLOB)``. The home's
database is never opened: it and its ``-wal`` (committed rows may still be only there) are copied
into a private temporary directory and the copy is read. The two reserved store refs
(``_store/commit``, ``_store/epoch``) hold u64 LE targets.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from vakaudit.findings import Finding, FindingCode
from vakaudit.storage.policy import finding

__all__ = ["REFS_TABLE", "STORE_COMMIT", "STORE_EPOCH", "read_refs", "u64_target", "export_line"]

REFS_TABLE = ("CREATE TABLE refs (name TEXT PRIMARY KEY, generation INTEGER NOT NULL, "
              "epoch INTEGER NOT NULL, target BLOB NOT NULL)")
STORE_COMMIT = "_store/commit"
STORE_EPOCH = "_store/epoch"

Ref = tuple[str, int, int, bytes]


def u64_target(target: bytes) -> int | None:
    """The value of a reserved store ref's u64 LE target, None when it is not 8 bytes."""
    return struct.unpack("<Q", target)[0] if len(target) == 8 else None


def export_line(name: str, generation: int, epoch: int, target: bytes) -> str:
    """One line of vak's ``export_refs`` text (§5.3), without the newline."""
    return f"{name.encode('utf-8').hex()} {generation} {epoch} {target.hex()}"


def read_refs(db: Path, rel_path: str = "refs.db") -> tuple[list[Ref], list[Finding]]:
    """Every ref, sorted by name, read from a private copy of ``db`` and its ``-wal``
    (:func:`vakaudit._sqlite.open_private_copy`); none when there is no file. A path that is not a
    regular file (a symlink, a FIFO) is not followed: it is a finding."""
    if not os.path.lexists(db):
        return [], []
    import sqlite3  # here, with the private copy's module: a store without refs.db never loads them

    from vakaudit._sqlite import open_private_copy

    try:
        with open_private_copy(db, with_wal=True) as copy:
            rows = copy.rows("SELECT name, generation, epoch, target FROM refs ORDER BY name")
    except OSError as exc:
        return [], [finding(FindingCode.REFS_DB_UNREADABLE, rel_path,
                            f"refs.db cannot be copied: {type(exc).__name__}")]
    except sqlite3.DatabaseError as exc:
        return [], [finding(FindingCode.REFS_DB_UNREADABLE, rel_path,
                            f"refs.db cannot be read as vak's ref table: {exc}")]
    out: list[Ref] = []
    findings: list[Finding] = []
    for name, gen, epoch, target in rows:
        if not isinstance(target, bytes):
            # vak binds targets as blobs; a text value read here would be a hand edit
            target = str(target).encode("utf-8")
        out.append((str(name), int(gen), int(epoch), target))
    return out, findings
