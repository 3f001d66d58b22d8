"""Hash chain (ledger.md §3) and the chain.rs acceptance lines of §8."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from vakaudit.ledger import ChainVerifier, Entry, LineStatus, SessionLog, line_digest
from vakaudit.ledger.chain import verify_lines

VECTORS = Path(__file__).parent / "vectors"
SPEC = json.loads((VECTORS / "chain_spec_s3.json").read_text())
HEADER = {
    "session_id": "s-test",
    "created_at": "2026-09-20T10:11:12Z",
    "cwd": "/tmp/proj",
    "contract": {
        "app_version": "3.5.0",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "route_ladder": [],
        "route_objective": "",
        "route_annotations": [],
        "system_prompt": "You are Vak.",
        "permission_mode": "workspace-write",
        "capabilities": [],
        "prompt_layers": [],
    },
}


def _spec_lines() -> list[bytes]:
    return (VECTORS / "chain_spec_s3.jsonl").read_bytes()[:-1].split(b"\n")


def _text(role: str, text: str) -> dict:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def _ledger(tmp_path: Path, n_messages: int = 2) -> Path:
    p = tmp_path / "s.jsonl"
    with SessionLog.create(p, HEADER, fsync=False) as log:
        for i in range(n_messages):
            log.append_message(_text("user" if i % 2 == 0 else "assistant", f"message {i}"))
    return p


def test_spec_digests_including_line_3() -> None:
    lines = _spec_lines()
    assert [line_digest(raw) for raw in lines] == SPEC["digests"]
    assert SPEC["digests"][2].startswith("3a9ac5bf")
    assert [Entry.from_line(raw).prev_hash for raw in lines] == SPEC["prev_hash"]
    assert line_digest(lines[0]) == hashlib.sha256(lines[0]).hexdigest()


def test_spec_lines_verify_clean() -> None:
    checks, warnings = verify_lines(_spec_lines())
    assert [c.status.value for c in checks] == SPEC["statuses"]
    assert warnings == []


def test_verifier_reports_each_status_and_both_warnings() -> None:
    l1, l2, l3 = _spec_lines()
    stripped = Entry.from_line(l3).replace(prev_hash=None).to_line()
    wrong = Entry.from_line(l2).replace(prev_hash="0" * 64).to_line()
    lines = [l1, b"", l2, stripped, b"{torn", wrong, wrong]
    checks, warnings = verify_lines(lines, "x.jsonl")
    assert [c.status for c in checks] == [
        LineStatus.UNCHECKED,  # first entry
        LineStatus.BLANK,
        LineStatus.CHAIN_OK,  # blank line kept the expectation
        LineStatus.UNCHAINED,
        LineStatus.UNPARSEABLE,
        LineStatus.UNCHECKED,  # right after a skipped line
        LineStatus.BROKEN,
    ]
    assert checks[6].expected == line_digest(wrong) and checks[6].found == "0" * 64
    assert warnings == [
        "skipped unparseable entry at line 5 of x.jsonl",
        "ledger x.jsonl has a broken hash chain at line(s) 7: entries before that point were modified after "
        "they were written",
        "ledger x.jsonl has 1 entry/entries written before hash chaining; those cannot be verified",
    ]


def test_broken_lines_are_listed_comma_separated() -> None:
    l1, l2, _ = _spec_lines()
    bad = Entry.from_line(l2).replace(prev_hash="f" * 64).to_line()
    v = ChainVerifier("p")
    for i, raw in enumerate([l1, bad, bad, bad], 1):
        v.feed(i, raw)
    assert v.broken_lines == [2, 3, 4]
    assert "broken hash chain at line(s) 2, 3, 4:" in v.finish()[0]


def test_link_agrees_with_entry_with_and_without_a_given_digest() -> None:
    l1, l2, l3 = _spec_lines()
    bad = Entry.from_line(l2).replace(prev_hash="f" * 64).to_line()
    lines = [l1, l2, l3, bad, l3]
    a, b, c = ChainVerifier("p"), ChainVerifier("p"), ChainVerifier("p")
    for i, raw in enumerate(lines, 1):
        prev = Entry.from_line(raw).prev_hash
        want = a.entry(i, raw, prev).status
        assert b.link(i, raw, prev) == want
        assert c.link(i, raw, prev, hashlib.sha256(raw).hexdigest()) == want
        assert a.expected == b.expected == c.expected == b.tail_hash == c.tail_hash
    assert a.broken_lines == b.broken_lines == c.broken_lines == [4, 5]
    assert a.finish() == b.finish() == c.finish()


# -- chain.rs (JSONL version) -------------------------------------------------------------------


def test_header_has_no_prev_hash_later_entries_do_reopen_clean(tmp_path: Path) -> None:
    p = _ledger(tmp_path)
    raws = p.read_bytes()[:-1].split(b"\n")
    assert b"prev_hash" not in raws[0]
    for prev, raw in zip(raws, raws[1:], strict=False):
        assert Entry.from_line(raw).prev_hash == hashlib.sha256(prev).hexdigest()
    assert SessionLog.open_read_only(p).warnings == []


def test_editing_line_2_breaks_the_chain(tmp_path: Path) -> None:
    p = _ledger(tmp_path)
    data = p.read_bytes()
    p.write_bytes(data.replace(b"message 0", b"message X"))
    log = SessionLog.open_read_only(p)
    assert len(log.entries) == 3
    assert any("broken hash chain" in w for w in log.warnings)
    assert log.warnings == [
        f"ledger {p} has a broken hash chain at line(s) 3: entries before that point were modified after they "
        "were written"
    ]


def _strip_prev_hash(p: Path) -> None:
    out = []
    for raw in p.read_bytes()[:-1].split(b"\n"):
        out.append(Entry.from_line(raw).replace(prev_hash=None).to_line())
    p.write_bytes(b"\n".join(out) + b"\n")


def test_stripped_prev_hash_loads_with_unchained_warning(tmp_path: Path) -> None:
    p = _ledger(tmp_path)
    _strip_prev_hash(p)
    log = SessionLog.open_read_only(p)
    assert len(log.entries) == 3
    assert any("before hash chaining" in w for w in log.warnings)
    assert not any("broken" in w for w in log.warnings)
    assert "has 2 entry/entries written before hash chaining" in log.warnings[0]


def test_appending_to_stripped_ledger_chains_from_there(tmp_path: Path) -> None:
    p = _ledger(tmp_path)
    _strip_prev_hash(p)
    last = p.read_bytes()[:-1].split(b"\n")[-1]
    with SessionLog.open(p, fsync=False) as log:
        new = log.append_message(_text("user", "again"))
    assert new.prev_hash == hashlib.sha256(last).hexdigest()
    log = SessionLog.open_read_only(p)
    assert log.entries[-1].prev_hash is not None
    assert not any("broken" in w for w in log.warnings)


def test_partial_line_at_eof_is_unparseable(tmp_path: Path) -> None:
    p = _ledger(tmp_path)
    with open(p, "ab") as f:
        f.write(b'{"id":"torn","parent_id":nu')
    log = SessionLog.open_read_only(p)
    assert len(log.entries) >= 3
    assert any("unparseable" in w for w in log.warnings)
    assert log.warnings == [f"skipped unparseable entry at line 4 of {p}"]


def test_header_entry_serializes_without_prev_hash_key() -> None:
    e = Entry("h", None, "2026-09-20T10:11:12Z", "header", HEADER)
    line = e.to_line()
    assert b"prev_hash" not in line and b'null,"ts"' in line
    assert line.startswith(
        b'{"id":"h","parent_id":null,"ts":"2026-09-20T10:11:12Z","kind":"header","session_id"'
    )


def test_chain_follows_file_order_not_the_tree(tmp_path: Path) -> None:
    p = tmp_path / "b.jsonl"
    with SessionLog.create(p, HEADER, fsync=False) as log:
        a = log.append_message(_text("user", "a"))
        log.append_message(_text("assistant", "b"))
        log.branch_at(a.id)
        d = log.append_message(_text("assistant", "d"))
    raws = p.read_bytes()[:-1].split(b"\n")
    assert d.parent_id == a.id
    assert d.prev_hash == line_digest(raws[2])  # the physically previous line, not the parent
    assert SessionLog.open_read_only(p).warnings == []


def test_vak_sample_chains_verify_per_line(vak_samples: Path) -> None:
    for sample in ("basic", "branch"):
        raws = (vak_samples / sample / "ledger.jsonl").read_bytes()[:-1].split(b"\n")
        checks, warnings = verify_lines(raws)
        assert warnings == []
        assert checks[0].status is LineStatus.UNCHECKED
        assert all(c.status is LineStatus.CHAIN_OK for c in checks[1:])


def test_line_splitting_same_for_mapped_file_and_stream(tmp_path: Path) -> None:
    import io

    from vakaudit.ledger.chain import iter_lines, iter_raw_lines

    data = b'{"a":1}\r\n\n' + b"x" * 70 + b"\n  \n" + b"y" * 33 + b"\ntail-without-lf"
    p = tmp_path / "f.jsonl"
    p.write_bytes(data)
    expected = [
        (b'{"a":1}\r', True),
        (b"", True),
        (b"x" * 70, True),
        (b"  ", True),
        (b"y" * 33, True),
        (b"tail-without-lf", False),
    ]
    with open(p, "rb") as f:  # memory-mapped path
        assert list(iter_lines(f)) == expected
    for block in (1, 7, 64, 1 << 20):  # block path, lines spanning blocks
        assert list(iter_lines(io.BytesIO(data), block_size=block)) == expected
    raws = list(iter_raw_lines(io.BytesIO(data)))
    assert [r.raw for r in raws][0] == b'{"a":1}'  # one CR stripped
    assert [r.offset_bytes for r in raws] == [0, 9, 10, 81, 84, 118]  # {"a":1} is 7 bytes, + CR + LF
    assert [r.line_no for r in raws] == [1, 2, 3, 4, 5, 6] and not raws[-1].terminated
    empty = tmp_path / "empty.jsonl"
    empty.touch()
    with open(empty, "rb") as f:
        assert list(iter_lines(f)) == []


def test_feed_reads_a_line_as_the_ledger_reader_does() -> None:
    """``feed`` classifies a line like the reader: an entry nested 129 levels deep (one past
    serde_json's limit of 128, which vak cannot decode) is unparseable and resets the chain, so the
    next line is unchecked; 128 levels is an entry."""
    l1, l2, l3 = _spec_lines()
    head = l2[:-1]  # the spec's second entry without its closing brace: nest a member inside it

    def nested(levels: int) -> bytes:  # the object itself is level 1
        return head + b',"x":' + b"[" * (levels - 1) + b"]" * (levels - 1) + b"}"

    v = ChainVerifier("p")
    statuses = [v.feed(i, raw)[0].status for i, raw in enumerate([l1, nested(129), l3], 1)]
    assert statuses == [LineStatus.UNCHECKED, LineStatus.UNPARSEABLE, LineStatus.UNCHECKED]
    v = ChainVerifier("p")
    check, entry = v.feed(2, nested(128))
    assert check.status is not LineStatus.UNPARSEABLE and entry is not None
