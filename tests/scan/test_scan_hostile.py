"""Hostile files in a home: blank-only ledgers, symlink loops, FIFOs and folders named like ledgers.

scan and verify share the walk; each case is checked through both.
"""

from __future__ import annotations

import os
import socket

import pytest

from tests.hostile_homes import SESSIONS, scan_findings, tiny_copy, verify_findings

BLANK = "019fc57b-0000-7066-a68c-cce18aef18b7.jsonl"


def _codes_for(findings: list[dict], name: str) -> list[str]:
    return sorted(f["code"] for f in findings if (f["rel_path"] or "").endswith(name))


@pytest.fixture
def home(tmp_path):
    return tiny_copy(tmp_path / "home")


def test_ledger_of_only_newlines_is_empty_ledger_in_scan_and_verify(home, tmp_path) -> None:
    (home / SESSIONS / BLANK).write_bytes(b"\n\n\n")
    assert _codes_for(scan_findings(home, tmp_path / "scan"), BLANK) == ["empty_ledger"]
    found = [f for f in verify_findings(home) if f["rel_path"].endswith(BLANK)]
    assert [f["code"] for f in found] == ["empty_ledger"]
    assert "3 line(s), 3 bytes" in found[0]["message"]


def test_ledger_of_whitespace_lines_is_empty_ledger(home, tmp_path) -> None:
    (home / SESSIONS / BLANK).write_bytes(b"  \n\t\n \r\n")
    assert _codes_for(scan_findings(home, tmp_path / "scan"), BLANK) == ["crlf_line_end", "empty_ledger"]
    assert "empty_ledger" in _codes_for(verify_findings(home), BLANK)


def test_blank_lines_around_entries_are_not_empty_ledger(home, tmp_path) -> None:
    ledger = home / SESSIONS / BLANK
    ledger.write_bytes(b"\n" + (home / SESSIONS / "019fc57b-c546-7066-a68c-cce18aef18b7.jsonl").read_bytes() + b"\n")
    assert "empty_ledger" not in _codes_for(scan_findings(home, tmp_path / "scan"), BLANK)
    assert "empty_ledger" not in _codes_for(verify_findings(home), BLANK)


def test_ledger_named_symlink_loop_is_a_finding(home, tmp_path) -> None:
    d = home / SESSIONS
    os.symlink("loop-b.jsonl", d / "loop-a.jsonl")
    os.symlink("loop-a.jsonl", d / "loop-b.jsonl")
    os.symlink("missing.jsonl", d / "dangling.jsonl")
    for findings in (scan_findings(home, tmp_path / "scan"), verify_findings(home)):
        assert _codes_for(findings, "loop-a.jsonl") == ["symlink_unresolvable"]
        assert _codes_for(findings, "loop-b.jsonl") == ["symlink_unresolvable"]
        assert _codes_for(findings, "dangling.jsonl") == ["symlink_unresolvable"]
        msg = next(f["message"] for f in findings if f["rel_path"].endswith("loop-a.jsonl"))
        assert "loop" in msg


def test_fifo_and_socket_named_like_ledgers_are_never_opened(home, tmp_path) -> None:
    # a FIFO with no writer blocks an open without O_NONBLOCK forever; the test would hang
    d = home / SESSIONS
    os.mkfifo(d / "fifo.jsonl")
    s = socket.socket(socket.AF_UNIX)
    cwd = os.getcwd()
    os.chdir(d)  # a socket path is limited to 107 bytes: bind relative to the folder
    try:
        s.bind("sock.jsonl")
    finally:
        os.chdir(cwd)
    os.mkfifo(home / "agents" / "vak" / "cost-log.jsonl.fifo")
    try:
        for findings in (scan_findings(home, tmp_path / "scan"), verify_findings(home)):
            assert _codes_for(findings, "fifo.jsonl") == ["unreadable_file"]
            assert _codes_for(findings, "sock.jsonl") == ["unreadable_file"]
    finally:
        s.close()


def test_folder_named_like_a_ledger_is_walked_as_a_folder(home, tmp_path) -> None:
    d = home / SESSIONS / "019fc57b-2222-7066-a68c-cce18aef18b7.jsonl"
    d.mkdir()
    (d / "inner.txt").write_bytes(b"x")
    scan = scan_findings(home, tmp_path / "scan")
    assert _codes_for(scan, ".jsonl/inner.txt") == ["undeclared_file"]
    assert not [f for f in scan if f["rel_path"].endswith("2222-7066-a68c-cce18aef18b7.jsonl")]
    assert _codes_for(verify_findings(home), ".jsonl/inner.txt") == ["undeclared_file"]
