"""Feeds security log: URL and DNS-rebind rejections of the Python feed pipeline (JSONL despite the name).

Lives at ``<data>/feeds/security.log`` — the platform data home, since the pipeline ignores
``VAK_HOME`` (D18). Written by ``scripts/feeds/feed_security.py``: one JSON object per line,
``{"timestamp": ISO-8601 +00:00, "event": type, <context key>: string ≤ 500 chars, …}``; append, no
fsync (home.md §9). The context keys vary per event and are kept as one JSON object.
"""

from __future__ import annotations

from typing import Any

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._columns import col, ts_cols
from vakaudit.artifacts._rowspec import RowSpec


def _context(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("timestamp", "event")}


ROWS = RowSpec(
    (
        *ts_cols("timestamp"),
        col("event", decl.string()),
        col("context", decl.string(), _context, json=True),
    ),
    trace=False,
)

KIND = ROWS.kind(
    __doc__,
    name="feeds_security_log",
    title="Feeds security log",
    patterns=("**/feeds/security.log",),
    card=WriteCard(
        writer="feed_security.py — scripts/feeds (Python, not Rust)",
        trigger="a feed item or URL is rejected (invalid_item_url, dns_rebind_detected, …)",
        discipline="append, no fsync",
        barriers_per_write=0,
        read="not read by vak",
        bound="none",
        group=WriteGroup.FEEDS,
        read_class="flat",
        style=Discipline.APPEND,
    ),
    registry_class=RegistryClass.LEDGER,
    append_only=True,
    priority=10,  # beats `logs` (`*.log`) and the feeds store kind
)
