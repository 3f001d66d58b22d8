"""Intake: the 7.0 record chain of items taken from intake sources, ``intake/`` at the data root.

Replaces the JSONL era's feeds pipeline. Rows taken / released / quarantined; title, link, key and
evidence are sealed under ``intake:<source>`` (baseline7.md §9.2; exact field names unconfirmed).
"""

from __future__ import annotations

from vakaudit.artifacts._chain import chain_kind

KIND = chain_kind(
    __doc__,
    name="intake",
    title="Intake items",
    dirs=("intake",),
    entries=(37,),
    owner="vak-core",
    trigger="an intake source yields, releases or quarantines an item",
    bound="per-source limits (unconfirmed)",
)
