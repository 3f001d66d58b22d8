"""Verification of ledgers in use: appended to meanwhile, locked by a writer, unreadable, symlinked out."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from vakaudit.findings import Severity
from vakaudit.forensics import verify_home, verify_ledger

pytestmark = pytest.mark.live_writer

CLEAN = "broken/clean/home"
LEDGER_REL = "agents/vak/sessions/2599eb06cf360587/s-sample.jsonl"

WRITER = r"""
import sys
from vakaudit.ledger import SessionLog
log = SessionLog.open(sys.argv[1], fsync=False)
print("locked", flush=True)
n = int(sys.argv[2])
for i in range(n):
    log.append_message({"role": "user", "content": [{"type": "text", "text": "line %d " % i + "x" * 400}]})
if n == 0:
    sys.stdin.readline()  # hold the lock until told to stop
log.close()
print("done", flush=True)
"""


def _copy_home(sample_homes: Path, dest: Path) -> Path:
    shutil.copytree(sample_homes / CLEAN, dest, symlinks=True)
    return dest


def test_a_line_completed_by_a_writer_during_verification_is_not_torn(
    sample_homes: Path, tmp_path: Path
) -> None:
    home = _copy_home(sample_homes, tmp_path / "home")
    path = home / LEDGER_REL
    last = path.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[1]
    parent = json.loads(last)["id"]
    line = (
        b'{"id":"01a0be42-ffff-7000-8000-000000000001","parent_id":"' + parent.encode() + b'","ts":'
        b'"2026-09-20T10:09:00Z","prev_hash":"' + hashlib.sha256(last).hexdigest().encode() + b'",'
        b'"kind":"child_run","status":"completed"}'
    )
    with open(path, "ab") as w:
        w.write(line[:40])  # the writer is half-way through its write when verification opens the file
    calls = []

    def finish_write(*_args: object) -> None:
        if not calls:
            with open(path, "ab") as w2:
                w2.write(line[40:] + b"\n")
        calls.append(1)

    report = verify_ledger(path, on_entry=finish_write)
    assert calls  # the writer really appended during the pass
    assert [f.code.value for f in report] == ["ledger_growing"]
    assert report.findings[0].severity is Severity.INFO
    assert report.grew_bytes == len(line) - 40 + 1
    # once the writer is done, the ledger is clean
    assert list(verify_ledger(path)) == []


def test_verifying_while_another_process_appends(sample_homes: Path, tmp_path: Path) -> None:
    home = _copy_home(sample_homes, tmp_path / "home")
    path = home / LEDGER_REL
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), "3000"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "locked"
        rounds = 0
        while proc.poll() is None or rounds == 0:
            report = verify_ledger(path)
            rounds += 1
            assert [f for f in report if f.severity.rank >= Severity.WARNING.rank] == []
            assert {f.code.value for f in report} <= {"ledger_growing"}
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == 0
    final = verify_ledger(path)
    assert list(final) == [] and final.entry_count == 7 + 3000


def test_a_locked_ledger_verifies_without_touching_the_lock(sample_homes: Path, tmp_path: Path) -> None:
    home = _copy_home(sample_homes, tmp_path / "home")
    path = home / LEDGER_REL
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), "0"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stdout.readline().strip() == "locked"
        report = verify_home(home)
        assert report.findings == [] and report.ledger_count == 1
        fd = os.open(path, os.O_RDONLY)
        try:  # vak's flock is still held by the writer: verification neither took nor broke it
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
    finally:
        proc.stdin.write("\n")
        proc.stdin.close()
        proc.wait(timeout=30)
    assert proc.returncode == 0


def _verify_as_nobody(home: Path) -> list[dict]:
    """Run verify_home in a forked child that dropped root privileges (chmod 000 does not stop root)."""
    verify_home(home)  # import everything lazily loaded before the fork
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            rep = verify_home(home)
            os.write(w, json.dumps([f.to_dict() for f in rep.findings]).encode())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(data)


def test_an_unreadable_ledger_is_a_finding(sample_homes: Path) -> None:
    base = Path(tempfile.mkdtemp(prefix="vakaudit-unreadable-"))
    try:
        os.chmod(base, 0o755)
        home = _copy_home(sample_homes, base / "home")
        for dirpath, _, _ in os.walk(home):
            os.chmod(dirpath, 0o755)
        os.chmod(home / LEDGER_REL, 0)
        if os.geteuid() == 0:
            findings = _verify_as_nobody(home)
        else:
            findings = [f.to_dict() for f in verify_home(home).findings]
        assert [(f["code"], f["severity"], f["rel_path"]) for f in findings] == [
            ("unreadable_file", "error", LEDGER_REL)
        ]
    finally:
        os.chmod(base / "home" / LEDGER_REL, 0o644)
        shutil.rmtree(base)


def test_a_symlinked_directory_out_of_the_home_is_not_entered(sample_homes: Path, tmp_path: Path) -> None:
    outside = _copy_home(sample_homes, tmp_path / "outside")
    home = tmp_path / "home"
    (home / "agents").mkdir(parents=True)
    (home / "agents" / "vak").symlink_to(outside / "agents" / "vak")
    report = verify_home(home)
    assert report.ledger_count == 0
    # the link itself is reported (and, as no kind declares a link there, it is undeclared too)
    assert {(f.code.value, f.rel_path) for f in report.findings} == {
        ("symlink_outside_home", "agents/vak"),
        ("undeclared_file", "agents/vak"),
    }


@pytest.mark.parametrize("deep", [False, True], ids=["compiled", "reference"])
def test_only_an_unterminated_last_line_waits_for_a_writer(
    sample_homes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, deep: bool
) -> None:
    """A ledger whose last line ends in LF has nothing in flight: verify looks for a writer's append
    (and pauses for one) only when the last line is unterminated, on both paths (``deep`` takes the
    pure-Python one)."""
    import vakaudit.ledger.records as records
    import vakaudit.ledger.verdict as verdict

    home = _copy_home(sample_homes, tmp_path / "home")
    path = home / LEDGER_REL
    assert path.read_bytes().endswith(b"\n")
    looks: list[int] = []
    real = verdict.grew_past
    monkeypatch.setattr(verdict, "grew_past", lambda fd, size: looks.append(size) or real(fd, size))
    monkeypatch.setattr(records, "TORN_RECHECK_S", 0.0)
    report = verify_ledger(path, deep=deep)
    assert looks == [] and report.line_count > 0

    with open(path, "ab") as w:
        w.write(b'{"id":"half')
    size = path.stat().st_size
    report = verify_ledger(path, deep=deep)
    assert looks == [size]
    assert "torn_last_line" in {f.code for f in report.findings}
