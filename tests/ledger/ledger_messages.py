"""Message and header builders shared by the ledger tests (vak-llm message shape, ledger.md §5)."""

from __future__ import annotations


def U(text: str) -> dict:  # noqa: N802 - the tests read like vak's fixtures: U(...), A(...)
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def A(text: str) -> dict:  # noqa: N802
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def SUMMARY(text: str) -> dict:  # noqa: N802
    return U(f"<context_summary>\n{text}\n</context_summary>")


def header(app_version: str, provider: str = "scripted", model: str = "test-model") -> dict:
    """A session header whose contract names the generation (``app_version``)."""
    return {
        "session_id": "s-test",
        "created_at": "2026-01-01T00:00:00Z",
        "cwd": "/tmp/proj",
        "contract": {"app_version": app_version, "provider": provider, "model": model},
    }
