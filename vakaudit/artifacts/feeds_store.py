"""Feeds store: the Python feed pipeline's DuckDB database (sized only) and the rest of ``feeds/``.

Lives at ``<data>/feeds/feeds.duckdb`` (+ ``feeds.duckdb.wal``) — the platform data home, since the
pipeline ignores ``VAK_HOME`` (D18); undeclared in G1 (D10), declared as ``feeds`` (Ledger) in G2.
Written by ``scripts/feeds`` (Python, not Rust) under DuckDB's exclusive lock (5 retries, backoff from
50 ms); bounded by ``max_items_per_feed = 500`` and a 90-day dedup window (home.md §9). The database is
never opened by vakaudit (a DuckDB open may write): no rows. ``feeds.toml`` is a config file and
``feeds/security.log`` has its own kind.
"""

from __future__ import annotations

from vakaudit.artifacts._base import ArtifactKind, Discipline, RegistryClass, WriteCard, WriteGroup

KIND = ArtifactKind(
    name="feeds_store",
    title="Feeds store (DuckDB)",
    patterns=("**/feeds/feeds.duckdb", "**/feeds/feeds.duckdb.wal", "**/feeds/**"),
    card=WriteCard(
        writer="scripts/feeds (Python) — not Rust",
        trigger="each feed check interval",
        discipline="DuckDB transactions under an exclusive file lock; 5 retries with backoff",
        barriers_per_write=1,
        read="DuckDB read-only opens by the pipeline and its tools",
        bound="max_items_per_feed = 500 and a 90-day dedup window in feeds.toml",
        group=WriteGroup.FEEDS,
        read_class="flat",
        style=Discipline.DATABASE,
    ),
    registry_class=RegistryClass.UNDECLARED,
    description=__doc__,
    priority=2,
)
