"""Key rotations: one row per tenant KEK rotation, ``key-rotations/`` at the data root (7.0).

Rows ``{id (rot_<uuidv7>), at, version, rewrapped, actor?}`` (baseline7.md §6.4, §9.2).
"""

from __future__ import annotations

from vakaudit.artifacts._chain import chain_kind

KIND = chain_kind(
    __doc__,
    name="key_rotations",
    title="Key rotations",
    dirs=("key-rotations",),
    entries=(33,),
    owner="vak-core",
    trigger="the tenant's key encryption key is rotated",
)
