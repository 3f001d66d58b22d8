"""Re-derive the provider requests vak sent from a session ledger, and check them against it."""

from __future__ import annotations

from vakaudit.replay.prefix import estimate_tokens, prefix_digest, request_message_chars

__all__ = ["estimate_tokens", "prefix_digest", "request_message_chars"]
