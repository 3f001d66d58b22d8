"""Voice activity helpers against vak-session's session_log.rs fixture (spec ledger.md §4.7, §8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vakaudit.ledger import SessionLog

HEADER = {
    "session_id": "s-test",
    "created_at": "2026-01-01T00:00:00Z",
    "cwd": "/tmp/proj",
    "contract": {"app_version": "0.1.0", "provider": "anthropic", "model": "claude-sonnet-4-5"},
}


def test_voice_transcript_and_playback_helpers(tmp_path: Path) -> None:
    """§8 session_log.rs: "voice transcript/playback helpers store `finalized`/status Partial as
    expected" (vak's voice_activity_helpers_record_transcript_and_playback: "u1", "open the build
    log", finalized; "p1", 640 ms, interrupted)."""
    path = tmp_path / "voice.jsonl"
    with SessionLog.create(path, HEADER, fsync=False) as log:
        transcript = log.append_voice_transcript("u1", "open the build log", True)
        playback = log.append_voice_playback("p1", 640, True)
        assert transcript.payload["activity_kind"] == "voice_transcript"
        assert transcript.payload["data"]["finalized"] == "true"
        assert playback.payload["activity_kind"] == "voice_playback"
        assert playback.payload["status"] == "partial"
        assert log.derive_messages() == []  # audit only, never model-visible
    lines = path.read_bytes().splitlines()
    # vak's ActivityRecord field order; no turn, no detail; data keys sorted, string values
    assert lines[1].endswith(
        b'"kind":"activity","activity_id":"u1","activity_kind":"voice_transcript","status":"succeeded",'
        b'"label":"Voice transcript","data":{"finalized":"true","text":"open the build log"}}'
    )
    assert lines[2].endswith(
        b'"kind":"activity","activity_id":"p1","activity_kind":"voice_playback","status":"partial",'
        b'"label":"Voice playback","data":{"emitted_ms":"640","interrupted":"true"}}'
    )
    reopened = SessionLog.open_read_only(path)
    assert reopened.warnings == []
    assert [e.activity_kind for e in reopened.entries[1:]] == ["voice_transcript", "voice_playback"]


def test_provisional_transcript_runs_and_complete_playback_succeeds(tmp_path: Path) -> None:
    with SessionLog.create(tmp_path / "v.jsonl", HEADER, fsync=False) as log:
        t = log.append_voice_transcript("u2", "open the", False)
        p = log.append_voice_playback("p2", 0, False)
    assert (t.payload["status"], t.payload["data"]) == ("running", {"finalized": "false", "text": "open the"})
    assert (p.payload["status"], p.payload["data"]) == (
        "succeeded",
        {"emitted_ms": "0", "interrupted": "false"},
    )


def test_playback_refuses_a_negative_duration(tmp_path: Path) -> None:
    with SessionLog.create(tmp_path / "v.jsonl", HEADER, fsync=False) as log:
        with pytest.raises(ValueError):
            log.append_voice_playback("p3", -1, False)
        assert len(log.entries) == 1
