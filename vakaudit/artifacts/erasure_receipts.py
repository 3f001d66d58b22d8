"""Erasure receipts: signed receipts of crypto-shredding, ``erasures/`` and ``erased/`` (7.0).

``erasures/`` is a record chain of Ed25519-signed receipts (scope, subject, cause, conversations,
keys destroyed, objects deleted, …); ``erased/`` holds the receipts of an install erasure (format
unconfirmed) (baseline7.md §9.2, REGISTRY entries 31 and 34).
"""

from __future__ import annotations

from vakaudit.artifacts._chain import chain_kind

KIND = chain_kind(
    __doc__,
    name="erasure_receipts",
    title="Erasure receipts",
    dirs=("erasures", "erased"),
    entries=(31, 34),
    owner="vak-core",
    trigger="a conversation, artifact or install is erased",
)
