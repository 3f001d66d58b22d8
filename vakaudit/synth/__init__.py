"""Deterministic synthetic vak homes: seeded content, an injected clock, real ledger appends.

``build_home(out, profile=..., turns=..., sessions=..., seed=..., layout=..., fsync=...)`` writes a
complete home in the G1/G2 plain-file layout (home.md §2): session ledgers through
:class:`vakaudit.ledger.SessionLog`, every side ledger in its row format, checkpoints, a schema-v1
``store.db`` and the configuration files. Same arguments, same bytes.
"""

from __future__ import annotations

from vakaudit.synth.clock import IdSource, SynthClock
from vakaudit.synth.content import CapabilitySurface, ContentPools
from vakaudit.synth.home import HomeWriter, SynthResult, build_home, plan_sessions
from vakaudit.synth.profiles import APP_VERSIONS, PROFILES, Profile, get_profile
from vakaudit.synth.session import SessionResult, SessionSpec, write_session
from vakaudit.synth.store import StoreWriter

__all__ = [
    "build_home",
    "SynthResult",
    "HomeWriter",
    "plan_sessions",
    "Profile",
    "PROFILES",
    "APP_VERSIONS",
    "get_profile",
    "SessionSpec",
    "SessionResult",
    "write_session",
    "SynthClock",
    "IdSource",
    "ContentPools",
    "CapabilitySurface",
    "StoreWriter",
]
