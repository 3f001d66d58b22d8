"""flock discipline (ledger.md §6.3) with real processes: one writer, concurrent read-only readers."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vakaudit.ledger import LockedError, SessionLog

HEADER = {"session_id": "s-lock", "created_at": "2026-09-20T10:11:12Z", "cwd": "/tmp/proj",
          "contract": {"app_version": "4.0.0", "provider": "p", "model": "m", "system_prompt": "",
                       "permission_mode": "read-only"}}  # fmt: skip

WRITER = textwrap.dedent(
    """
    import sys
    from vakaudit.ledger import SessionLog
    path, n = sys.argv[1], int(sys.argv[2])
    log = SessionLog.open(path)  # fsync on: one write + fdatasync per entry, like vak
    print("locked", flush=True)
    for i in range(n):
        text = f"entry {i} " + "x" * (i * 997 % 6000)
        log.append_message({"role": "user", "content": [{"type": "text", "text": text}]})
    print("appended", flush=True)
    sys.stdin.readline()
    log.close()  # explicit LOCK_UN; the process stays alive afterwards
    print("closed", flush=True)
    sys.stdin.readline()
    """
)


def _expected_text(i: int) -> str:
    return f"entry {i} " + "x" * (i * 997 % 6000)


def _check_prefix(log: SessionLog) -> int:
    """Entries read while the writer appends are a prefix of what it writes; returns the count."""
    assert log.entries[0].kind == "header"
    for i, e in enumerate(log.entries[1:]):
        assert e.message["content"][0]["text"] == _expected_text(i)
    assert not any("broken" in w for w in log.warnings)
    # The only tolerated warning is a final line caught mid-write (read beyond the last LF).
    for w in log.warnings:
        assert w.startswith("skipped unparseable entry at line")
    return len(log.entries)


def test_writer_process_holds_lock_while_readers_see_consistent_prefixes(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    SessionLog.create(p, HEADER).close()
    n = 150
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(p), str(n)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "locked"
        with pytest.raises(LockedError):
            SessionLog.open(p)
        seen = []
        for _ in range(200):
            seen.append(_check_prefix(SessionLog.open_read_only(p)))
            if seen[-1] == n + 1:
                break
        assert seen == sorted(seen)  # never goes backwards
        assert proc.stdout.readline().strip() == "appended"
        final = SessionLog.open_read_only(p)
        assert _check_prefix(final) == n + 1 and final.warnings == []
        with pytest.raises(LockedError):
            SessionLog.open(p)
        with pytest.raises(LockedError):
            SessionLog.create(p, HEADER)
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "closed"
        # The writer process is still alive but released the lock explicitly on close().
        assert proc.poll() is None
        with SessionLog.open(p, fsync=False) as log:
            assert len(log.entries) == n + 1
            log.append_message({"role": "assistant", "content": [{"type": "text", "text": "mine now"}]})
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert SessionLog.open_read_only(p).warnings == []


def test_second_writable_open_in_same_process_is_locked(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    first = SessionLog.create(p, HEADER, fsync=False)
    with pytest.raises(LockedError, match="locked by another writable handle"):
        SessionLog.open(p)
    ro = SessionLog.open_read_only(p)  # no lock needed
    assert len(ro.entries) == 1
    with pytest.raises(LockedError):
        ro.append("goal", {})
    first.close()
    with SessionLog.open(p) as second:
        assert second.writable
    with SessionLog.open(p):  # released again by the context manager
        pass


def test_close_unlocks_even_when_a_duplicate_descriptor_survives(tmp_path: Path) -> None:
    """A child spawned at the wrong moment can hold a copy of the descriptor; close() must still
    release the lock (explicit LOCK_UN, as vak's later code does)."""
    p = tmp_path / "s.jsonl"
    log = SessionLog.create(p, HEADER, fsync=False)
    dup = os.dup(log._fd)  # same open file description, like an inherited descriptor
    try:
        log.close()
        with SessionLog.open(p):
            pass
    finally:
        os.close(dup)


def test_lock_is_flock_on_the_jsonl_itself(tmp_path: Path) -> None:
    import fcntl

    p = tmp_path / "s.jsonl"
    with SessionLog.create(p, HEADER, fsync=False):
        assert sorted(x.name for x in tmp_path.iterdir()) == ["s.jsonl"]  # no sidecar lock file
        fd = os.open(p, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
