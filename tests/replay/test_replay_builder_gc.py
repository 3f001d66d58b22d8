"""`step_request_message_chars` keeps one builder per log without keeping the log alive."""

from __future__ import annotations

import gc
import weakref

from vakaudit.ledger import SessionLog
from vakaudit.replay import step_request_message_chars


def _log(path):
    log = SessionLog.create(
        path,
        {
            "session_id": "gc",
            "created_at": "2026-01-01T00:00:00Z",
            "cwd": "/w",
            "contract": {"app_version": "3.5.1"},
        },
        fsync=False,
    )
    log.append_message({"role": "user", "content": [{"type": "text", "text": "hello there"}]})
    return log


def test_log_is_freed_after_message_chars(tmp_path) -> None:
    log = _log(tmp_path / "a.jsonl")
    first = step_request_message_chars(log)
    assert first > 0
    assert step_request_message_chars(log) == first  # the kept builder answers the same
    ref = weakref.ref(log)
    log.close()
    del log
    gc.collect()
    assert ref() is None


def test_many_logs_do_not_accumulate(tmp_path) -> None:
    refs = []
    for i in range(5):
        log = _log(tmp_path / f"{i}.jsonl")
        step_request_message_chars(log)
        refs.append(weakref.ref(log))
        log.close()
    del log
    gc.collect()
    assert [r() for r in refs] == [None] * 5
