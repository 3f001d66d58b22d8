"""Voice activities (spec ledger.md §4.7): the ``voice_transcript`` and ``voice_playback`` activity
payloads vak-session's ``append_voice_transcript`` / ``append_voice_playback`` write.

Both are audit facts, never model-visible: a committed utterance is appended separately as a normal
``message``. Field values restated from vak's log.rs: no ``turn``, no ``detail``; ``data`` values are
strings (``"true"``/``"false"``, decimal milliseconds), keys sorted.

- transcript: label ``Voice transcript``, data ``finalized`` + ``text``; status ``succeeded`` when
  finalized, else ``running`` (a provisional recognition segment).
- playback: label ``Voice playback``, data ``emitted_ms`` + ``interrupted``; status ``partial`` when
  the user did not hear the whole synthesis (interrupted), else ``succeeded``.

No I/O here; the entries are written by :class:`~vakaudit.ledger.log.SessionLog`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["voice_transcript_activity", "voice_playback_activity"]


def _flag(value: bool) -> str:
    return "true" if value else "false"


def voice_transcript_activity(activity_id: str, text: str, finalized: bool) -> dict[str, Any]:
    """Keyword arguments of :meth:`SessionLog.append_activity` for a voice transcript."""
    return {
        "activity_id": activity_id,
        "activity_kind": "voice_transcript",
        "status": "succeeded" if finalized else "running",
        "label": "Voice transcript",
        "data": {"text": text, "finalized": _flag(finalized)},
    }


def voice_playback_activity(activity_id: str, emitted_ms: int, interrupted: bool) -> dict[str, Any]:
    """Keyword arguments of :meth:`SessionLog.append_activity` for a playback report."""
    if isinstance(emitted_ms, bool) or not isinstance(emitted_ms, int) or emitted_ms < 0:
        raise ValueError(f"emitted_ms must be a non-negative integer (vak's u64), not {emitted_ms!r}")
    return {
        "activity_id": activity_id,
        "activity_kind": "voice_playback",
        "status": "partial" if interrupted else "succeeded",
        "label": "Voice playback",
        "data": {"emitted_ms": str(emitted_ms), "interrupted": _flag(interrupted)},
    }
