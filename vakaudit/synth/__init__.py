"""Deterministic synthetic vak homes: seeded content, an injected clock, real ledger appends.

``build_home(out, profile=..., turns=..., sessions=..., seed=..., layout=..., fsync=...)`` writes a
complete home in the G1/G2 plain-file layout (home.md §2), or with ``layout="v7"`` the same workload
in vak's 7.0 layout (:mod:`vakaudit.synth.v7`; its keys in ``SynthResult.keys``, never in the home): session ledgers through
:class:`vakaudit.ledger.SessionLog`, every side ledger in its row format, checkpoints, a schema-v1
``store.db`` and the configuration files. Same arguments, same bytes.

Ledger generations (header ``contract.app_version``): 3.4.9 (G1: shape-A compaction, no prefix
digests, no cards), 3.5.0 (G2: shape-A compaction, digests, presentations and cards), 3.5.1 (G3:
shape-B range packets; the capacity report's build) and, in G2-layout homes only, 4.0.0 (G3).
Not synthesised: ``feeds/feeds.duckdb`` (a DuckDB file is not byte-reproducible run to run).
"""

from __future__ import annotations

from vakaudit.synth.clock import IdSource, SynthClock
from vakaudit.synth.content import CapabilitySurface, ContentPools
from vakaudit.synth.home import HomeWriter, SynthResult, build_home, build_one_session, plan_sessions
from vakaudit.synth.profiles import APP_VERSIONS, PROFILES, Profile, get_profile
from vakaudit.synth.session import SessionResult, SessionSpec, write_session
from vakaudit.synth.store import StoreWriter

__all__ = [
    "build_home",
    "build_one_session",
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
