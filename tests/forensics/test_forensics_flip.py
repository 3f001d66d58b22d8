"""Flip every bit of a small ledger, one at a time: every flip is reported, at the right line.

The ledger is the spec's computed hash-chain example (ledger.md §3: header, user message, assistant
tool call with usage meta; 1,245 bytes, so 9,960 flips). A flip in
line N must produce a finding (warning or worse) at line N and none before it. The chain cannot see
a content change of the LAST line (no successor recorded its digest); for those flips the seal
(``verify --since``) must name the line instead (systemd's journal verify test flips every bit the
same way).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vakaudit.findings import Severity
from vakaudit.forensics import seal_file, verify_ledger
from vakaudit.forensics.seal import verify_file_since

LEDGER = Path(__file__).resolve().parent.parent / "ledger" / "vectors" / "chain_spec_s3.jsonl"


@pytest.mark.slow
def test_every_bit_flip_is_reported_at_its_line(tmp_path: Path) -> None:
    src = LEDGER.read_bytes()
    line_of: list[int] = []  # 1-based line holding each byte (an LF belongs to the line it ends)
    line = 1
    for b in src:
        line_of.append(line)
        if b == 0x0A:
            line += 1
    last = line - 1
    assert last == 3
    seal = seal_file(LEDGER, "s.jsonl")
    target = tmp_path / "s.jsonl"
    missed, late, early, seal_only = [], [], [], 0
    for i in range(len(src)):
        for bit in range(8):
            data = bytearray(src)
            data[i] ^= 1 << bit
            target.write_bytes(data)
            want = line_of[i]
            lines = {f.line_no for f in verify_ledger(target) if f.severity.rank >= Severity.WARNING.rank}
            lines.discard(None)
            if lines and min(lines) < want:
                early.append((i, bit, want, sorted(lines)))
            if want in lines:
                continue
            if want == last:
                v = verify_file_since(target, seal)
                if v is not None and v.line_no == want:
                    seal_only += 1
                    continue
            (missed if not lines else late).append((i, bit, want, sorted(lines)))
    assert early == []
    assert missed == []
    assert late == []
    # only last-line flips that keep the line a valid entry need the seal (a fact of the format)
    assert 0 < seal_only < 8 * (len(src) - src.rindex(b"\n", 0, len(src) - 1))
