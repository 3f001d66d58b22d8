"""verify_ledger against independent expectations: spec vectors, vak's own ledgers, hand-made breaks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from vakaudit.findings import FindingCode, Severity
from vakaudit.forensics import LONG_LINE_BYTES, TornPolicy, severity_of, verify_ledger
from vakaudit.ledger import SessionLog

CLEAN = "broken/clean/home/agents/vak/sessions/2599eb06cf360587/s-sample.jsonl"
SPEC_S3 = Path(__file__).resolve().parent.parent / "ledger" / "vectors" / "chain_spec_s3.jsonl"


def test_spec_vector_verifies_and_its_head_is_the_digest_the_spec_states() -> None:
    report = verify_ledger(SPEC_S3)
    assert list(report) == []
    assert (
        report.head_digest == "3a9ac5bf7b6ad0055c4cd06092309a3be73bdb9b9768ac8b92100fd159372cc8"
    )  # ledger.md §3
    assert (report.entry_count, report.last_verified_line) == (3, 3)


@pytest.mark.parametrize("name", ["basic", "branch"])
def test_ledgers_written_by_vak_itself(vak_samples: Path, name: str) -> None:
    expected = json.loads((vak_samples / name / "expected.json").read_text())
    report = verify_ledger(vak_samples / name / "ledger.jsonl")
    assert report.entry_count == expected["entries"]
    assert report.active_chain_length == len(expected["chain_to_root"])
    codes = [f.code.value for f in report]
    assert codes == (["abandoned_branch"] if name == "branch" else [])
    if name == "branch":  # the abandoned leaf forks from vak's branch point
        assert expected["in_process_after_branch"]["branch_point"] in report.findings[0].message


def _lines(sample_homes: Path) -> list[bytes]:
    return (sample_homes / CLEAN).read_bytes().split(b"\n")[:-1]


def _write(tmp_path: Path, lines: list[bytes]) -> Path:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\n".join(lines) + b"\n")
    return p


def test_a_deleted_line_is_reported_where_the_gap_is(sample_homes: Path, tmp_path: Path) -> None:
    lines = _lines(sample_homes)
    del lines[3]
    got = {(f.code.value, f.line_no) for f in verify_ledger(_write(tmp_path, lines))}
    assert got == {("prev_hash_mismatch", 4), ("orphan_parent", 4)}


def test_a_line_moved_far_is_reordering(sample_homes: Path, tmp_path: Path) -> None:
    lines = _lines(sample_homes)
    moved = lines.pop(1)
    lines.insert(5, moved)
    got = {f.code.value for f in verify_ledger(_write(tmp_path, lines))}
    assert got == {"lines_reordered"}


def test_a_garbage_line_mid_file_resets_the_chain_like_vak(sample_homes: Path, tmp_path: Path) -> None:
    lines = _lines(sample_homes)
    lines.insert(3, b'{"id":"x", oops')
    got = [(f.code.value, f.line_no) for f in verify_ledger(_write(tmp_path, lines))]
    assert got == [("unparseable_line", 4)]  # line 5 is accepted unchecked (rule 5); blank lines are skipped


def test_blank_lines_are_skipped_without_breaking_the_chain(sample_homes: Path, tmp_path: Path) -> None:
    lines = _lines(sample_homes)
    lines.insert(2, b"")
    lines.insert(5, b"   \t")
    assert list(verify_ledger(_write(tmp_path, lines))) == []


def test_fast_path_and_deep_decode_agree_on_every_sample_ledger(sample_homes: Path) -> None:
    paths = sorted((sample_homes / "broken").rglob("*.jsonl"))
    assert len(paths) >= 20
    for p in paths:
        if p.is_symlink():
            continue
        fast = [f.to_dict() for f in verify_ledger(p)]
        deep = [f.to_dict() for f in verify_ledger(p, deep=True)]
        assert fast == deep, p


def test_a_20_mb_line(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    log = SessionLog.create(path, {"session_id": "big", "created_at": "2026-09-20T10:00:00Z", "cwd": "/tmp/proj",
                                   "contract": {"app_version": "3.5.0"}}, fsync=False)  # fmt: skip
    log.append_message({"role": "user", "content": [{"type": "text", "text": "x" * (20 * 1024 * 1024)}]})
    log.append_message({"role": "assistant", "content": [{"type": "text", "text": "that is long"}]})
    log.close()
    report = verify_ledger(path)
    # a line over the bound is not held: reported, not read, and the chain restarts after it
    assert [(f.code.value, f.line_no, f.severity) for f in report] == [("line_too_long", 2, Severity.INFO)]
    length = len(path.read_bytes().split(b"\n")[1])
    assert length > LONG_LINE_BYTES
    assert f"line of {length:,} bytes" in report.findings[0].message
    assert report.entry_count == 2


def test_severity_policy_by_torn_mode() -> None:
    C, S, T = FindingCode, Severity, TornPolicy
    assert severity_of(C.TORN_LAST_LINE) is S.WARNING
    assert severity_of(C.TORN_LAST_LINE, T.STRICT) is S.ERROR
    assert severity_of(C.UNPARSEABLE_LINE, T.SKIP) is S.WARNING
    assert severity_of(C.INVALID_UTF8, T.SKIP) is S.WARNING
    assert severity_of(C.UNPARSEABLE_LINE, T.STRICT) is S.ERROR
    for mode in T:
        for code in (C.PREV_HASH_MISMATCH, C.LINE_MODIFIED, C.LINES_REORDERED):
            assert severity_of(code, mode) is S.ERROR
    assert severity_of(C.UNDECLARED_FILE) is S.INFO


def test_unreadable_path_is_a_finding_not_an_exception(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").mkdir()
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "d.jsonl")
    for name in ("d.jsonl", "link.jsonl", "missing.jsonl"):
        (f,) = verify_ledger(tmp_path / name)
        assert f.code is FindingCode.UNREADABLE_FILE
    shutil.rmtree(tmp_path / "d.jsonl")


def test_a_write_torn_inside_a_multibyte_character_is_torn_not_invalid_utf8(
    sample_homes: Path, tmp_path: Path
) -> None:
    data = (sample_homes / CLEAN).read_bytes()
    cut = data.index("café".encode()) + 4  # between the two bytes of "é"
    p = tmp_path / "s.jsonl"
    p.write_bytes(data[:cut])
    got = [(f.code.value, f.line_no) for f in verify_ledger(p)]
    assert got == [("torn_last_line", 4)]


def test_deep_nesting_is_found_in_attested_lines_that_look_like_a_shallow_one(tmp_path: Path) -> None:
    # A shallow and a 200-deep payload of the same length whose bytes agree at the start, middle and end:
    # a repeat of the shallow one must not vouch for the deep one (vak's reader skips lines > 128 deep).
    nest = "[" * 200 + "0" + "]" * 200
    shallow, deep = "[" * 200 + "]" * 199, json.loads(nest)  # a string vs 200 nested lists
    assert len(json.dumps(shallow, separators=(",", ":"))) == len(nest)

    def message(v: object) -> dict:
        return {"role": "user", "content": [{"type": "text", "text": "a" * 2000}, {"type": "data", "v": v},
                                            {"type": "text", "text": "b" * 6000}]}  # fmt: skip

    path = tmp_path / "s.jsonl"
    log = SessionLog.create(path, {"session_id": "d", "created_at": "2026-09-20T10:00:00Z", "cwd": "/tmp/proj",
                                   "contract": {"app_version": "3.5.0"}}, fsync=False)  # fmt: skip
    for v in (shallow, deep, shallow, deep, shallow):  # lines 2-6; 3 and 5 are too deep
        log.append_message(message(v))
    log.append_message({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    log.close()
    raw = path.read_bytes().split(b"\n")
    assert len(raw[1]) == len(raw[2]) and raw[1][-64:] == raw[2][-64:]
    for d in (False, True):
        got = [(f.code.value, f.line_no) for f in verify_ledger(path, deep=d)]
        assert got == [("nesting_too_deep", 3), ("nesting_too_deep", 5)], d


def test_an_entry_that_is_its_own_parent_is_a_cycle(sample_homes: Path, tmp_path: Path) -> None:
    lines = _lines(sample_homes)
    e = json.loads(lines[3])
    assert e["parent_id"] is not None
    old, new = f'"parent_id":"{e["parent_id"]}"', f'"parent_id":"{e["id"]}"'
    lines[3] = lines[3].replace(old.encode(), new.encode())
    got = {(f.code.value, f.line_no) for f in verify_ledger(_write(tmp_path, lines))}
    assert {("parent_cycle", 4), ("line_modified", 4)} <= got
