"""The fleet lake on disk: layout, the atomic replacement of one home's partitions, output paths.

Layout of a lake folder (docs/fleet.md)::

    LAKE/_lake.json                         marks the folder as a lake (format, vakaudit version)
    LAKE/<table>/home_id=<id>/part-0.parquet  one Hive partition per scan table and home
    LAKE/homes/home_id=<id>/part-0.parquet    one row per home: where it is, when it was scanned
    LAKE/_state/<id>/                       the home's last scan (manifest + parts), for rescans
    LAKE/_staging/                          write-aside area; same file system, so renames are atomic

Folders starting with ``_`` are not tables (Spark, Trino, DuckDB and polars skip them when they read
``<table>/``). A partition folder is replaced whole: the new one is written aside in ``_staging``
and swapped in with one ``renameat2(RENAME_EXCHANGE)`` (Linux), so a reader of a table sees the
home's old rows or its new ones, never a mix and never none. Where the exchange is not available
(another OS, a file system without it) the old folder is renamed away first and the new one renamed
in: readers may then miss the home for that instant, never see half of it. Nothing here reads or
writes a home.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa

from vakaudit.errors import UsageError

LAKE_FILE = "_lake.json"
LAKE_FORMAT = 1
STAGING = "_staging"
STATE = "_state"
PARTITION_COLUMN = "home_id"
PARTITION_TYPE = "VARCHAR"
HOMES_TABLE = "homes"
PART_FILE = "part-0.parquet"

#: the ``homes`` table: one row per home (``home_id`` comes from the partition path)
HOMES_SCHEMA = pa.schema(
    [
        pa.field("home_path", pa.string()),
        pa.field("layout", pa.string()),
        pa.field("scanned_at", pa.string()),
        pa.field("tool_version", pa.string()),
        pa.field("home_bytes", pa.int64()),
        pa.field("file_count", pa.int64()),
        pa.field("bytes_read", pa.int64()),
        pa.field("scan_duration_ms", pa.float64()),
    ]
)


def check_output_path(path: Path, homes: list[Path], *, folder: bool = False) -> Path:
    """``path`` made absolute, or a UsageError when it lies inside (or holds, or is hard-linked into)
    one of ``homes``: the shared guard of every vakaudit output (:func:`vakaudit.outputs.check_output`)
    over every home of the fleet. Every path the fleet commands write to goes through here."""
    from vakaudit.outputs import check_output

    return check_output(path, homes, folder=folder)


def is_lake(path: Path) -> bool:
    return (Path(path) / LAKE_FILE).is_file()


def init_lake(lake: Path, tool_version: str) -> None:
    """Create the lake folder (or check that an existing, non-empty folder is one)."""
    lake.mkdir(parents=True, exist_ok=True)
    marker = lake / LAKE_FILE
    if marker.is_file():
        return
    if any(lake.iterdir()):
        raise UsageError(f"{lake} is not empty and holds no vakaudit lake ({LAKE_FILE}); choose another --lake")
    tmp = lake / f".{LAKE_FILE}.{uuid.uuid4().hex}"
    tmp.write_text(json.dumps({"format": LAKE_FORMAT, "tool_version": tool_version}) + "\n", encoding="utf-8")
    os.replace(tmp, marker)


def read_lake_info(lake: Path) -> dict[str, Any]:
    try:
        return json.loads((lake / LAKE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{lake} is not a vakaudit lake ({exc}); run `vakaudit fleet scan --lake {lake}`") from None


def partition_dir(lake: Path, table: str, hid: str) -> Path:
    return lake / table / f"{PARTITION_COLUMN}={hid}"


def state_dir(lake: Path, hid: str) -> Path:
    return lake / STATE / hid


def staging_dir(lake: Path, run_id: str) -> Path:
    """A fresh folder in the lake's staging area for one attempt of one task of run ``run_id``."""
    d = lake / STAGING / run_id / uuid.uuid4().hex
    d.mkdir(parents=True)
    return d


def clear_staging(lake: Path, run_id: str) -> None:
    """Remove what attempts of run ``run_id`` left in staging (a worker lost mid-task leaves some)."""
    shutil.rmtree(lake / STAGING / run_id, ignore_errors=True)


def table_names(lake: Path) -> list[str]:
    """The tables the lake holds partitions for (folders not starting with ``_``)."""
    return sorted(p.name for p in lake.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


def home_ids(lake: Path) -> list[str]:
    """Every home with a row in the ``homes`` table."""
    prefix = f"{PARTITION_COLUMN}="
    root = lake / HOMES_TABLE
    if not root.is_dir():
        return []
    return sorted(p.name[len(prefix) :] for p in root.iterdir() if p.name.startswith(prefix))


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _renameat2() -> Any:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError, TypeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_EXCHANGE = _renameat2()


def exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths atomically; False when this system or file system cannot."""
    if _EXCHANGE is None:
        return False
    rc = _EXCHANGE(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def replace_dir(staged: Path, target: Path) -> None:
    """Put the folder ``staged`` at ``target``, replacing whatever is there, atomically where the
    system allows (see the module docstring). ``staged`` is gone afterwards. Idempotent: replacing a
    partition again with the same rows leaves the same partition."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        try:
            os.rename(staged, target)
            return
        except OSError as exc:  # another attempt put one there meanwhile: swap with it below
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
    if exchange(staged, target):
        shutil.rmtree(staged)  # now holds the old folder
        return
    old = staged.with_name(staged.name + ".old")
    os.rename(target, old)
    os.rename(staged, target)
    shutil.rmtree(old)


def remove_dir(lake: Path, target: Path, run_id: str) -> None:
    """Take ``target`` out of the lake (rename into staging first, so it vanishes in one step)."""
    if not target.exists():
        return
    aside = staging_dir(lake, run_id) / "gone"
    os.rename(target, aside)
    shutil.rmtree(aside.parent)
