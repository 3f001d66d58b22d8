"""Workspace keys and session paths (spec ledger.md §1).

- ``workspace_key``: 64-bit FNV-1a of the workspace path's bytes rendered lossily as UTF-8 (invalid
  sequences become U+FFFD), exactly as given: no canonicalisation, no trailing-slash handling.
- Layouts: ``<data-home>/sessions/<key>/<id>.jsonl`` (before 3.2.0) and
  ``<data-home>/agents/<agent-id>/sessions/<key>/<id>.jsonl`` (3.2.0 on; built-in agent ``vak``).

No I/O here.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["workspace_key", "fnv1a64", "session_path", "agent_sessions_home", "session_dir"]

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = 0xFFFFFFFFFFFFFFFF


def fnv1a64(data: bytes) -> int:
    """64-bit FNV-1a of ``data``."""
    h = _FNV_OFFSET
    for b in data:
        h = ((h ^ b) * _FNV_PRIME) & _MASK
    return h


def _lossy_utf8(path: str | bytes | os.PathLike) -> bytes:
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if isinstance(path, str):
        # Undecodable bytes of a file-system path arrive as surrogate escapes: restore them first.
        path = path.encode("utf-8", "surrogateescape")
    # Like Rust's to_string_lossy: each maximal invalid subsequence becomes U+FFFD.
    return path.decode("utf-8", "replace").encode("utf-8")


def workspace_key(path: str | bytes | os.PathLike) -> str:
    """vak's per-workspace directory name: FNV-1a 64 as 16 lowercase hex digits.

    ``path`` is the workspace path as vak recorded it, hashed byte for byte: ``~`` is not expanded
    (vak hashes the absolute cwd; expanding would change the key of the very string given)."""
    return f"{fnv1a64(_lossy_utf8(path)):016x}"


def agent_sessions_home(data_home: str | os.PathLike, agent_id: str = "vak") -> Path:
    """Sessions home of an agent (3.2.0 on): ``<data-home>/agents/<agent-id>``."""
    return Path(data_home).expanduser() / "agents" / agent_id


def session_dir(sessions_home: str | os.PathLike, cwd: str | bytes | os.PathLike) -> Path:
    """``<sessions-home>/sessions/<workspace_key(cwd)>``."""
    return Path(sessions_home).expanduser() / "sessions" / workspace_key(cwd)


def session_path(sessions_home: str | os.PathLike, cwd: str | bytes | os.PathLike, session_id: str) -> Path:
    """``<sessions-home>/sessions/<workspace_key(cwd)>/<session_id>.jsonl``.

    ``sessions_home`` is the data home itself (before 3.2.0) or :func:`agent_sessions_home`.
    """
    return session_dir(sessions_home, cwd) / f"{session_id}.jsonl"
