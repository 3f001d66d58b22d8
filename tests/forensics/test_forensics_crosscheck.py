"""Cross-artifact checks on a synthetic home: clean as built, then one real defect at a time."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from vakaudit.forensics import verify_home


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vakaudit.synth import build_home

    home = tmp_path_factory.mktemp("cross") / "home"
    build_home(home, profile="tiny", fsync=False)
    return home


def _copy(built: Path, tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(built, home, symlinks=True)
    return home


def _codes(home: Path) -> set[tuple[str, str]]:
    return {
        (f.code.value, f.rel_path or "") for f in verify_home(home).findings if f.severity.value != "info"
    }


def test_as_built_every_dispatch_is_accounted_once(built: Path) -> None:
    report = verify_home(built)
    assert report.cross_checks == [
        "receipts_vs_routing_evidence",
        "receipts_vs_cost_log",
        "store_db_vs_ledgers",
        "checkpoint_sequences",
        "commitment_replay",
        "outbox_jobs",
    ]
    assert [
        f
        for f in report.findings
        if f.code.value.startswith(("receipt_", "sidecar_row", "index_extra", "index_stale"))
    ] == []


def test_a_lost_routing_row_is_a_receipt_unaccounted(built: Path, tmp_path: Path) -> None:
    home = _copy(built, tmp_path)
    path = next(home.rglob("routing-evidence.jsonl"))
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:3] + lines[4:]))
    codes = _codes(home)
    assert {c for c, _ in codes} == {"receipt_unaccounted"}
    assert all(rel.endswith(".jsonl") and "/sessions/" in rel for _, rel in codes)


def test_a_cost_row_written_twice_is_a_duplicate(built: Path, tmp_path: Path) -> None:
    home = _copy(built, tmp_path)
    path = next(home.rglob("cost-log.jsonl"))
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:2] + [lines[1]] + lines[2:]))
    rel = path.relative_to(home).as_posix()
    assert _codes(home) == {("sidecar_row_duplicate", rel)}


def test_a_cost_row_for_an_unknown_session_is_unmatched(built: Path, tmp_path: Path) -> None:
    home = _copy(built, tmp_path)
    path = next(home.rglob("cost-log.jsonl"))
    with open(path, "ab") as f:
        f.write(b'{"ts":"2026-08-24T09:15:03.002114Z","model":"m","provider":"p","input_tokens":1,'
                b'"output_tokens":1,"source":"estimated","session_id":"no-such-session"}\n')  # fmt: skip
    rel = path.relative_to(home).as_posix()
    assert _codes(home) == {("sidecar_row_unmatched", rel)}


def test_index_rows_for_gone_or_rewritten_entries(built: Path, tmp_path: Path) -> None:
    home = _copy(built, tmp_path)
    db = next(home.rglob("store.db"))
    con = sqlite3.connect(db)
    with con:
        con.execute(
            "UPDATE entries SET kind = 'goal' WHERE rowid = (SELECT min(rowid) FROM entries WHERE kind = 'message')"
        )
        con.execute("INSERT INTO entries (entry_id, session_id, project_hash, ts, kind, content_text) "
                    "VALUES ('gone-1', 's', '', '2026-01-01T00:00:00+00:00', 'message', '')")  # fmt: skip
    con.close()
    for extra in ("-wal", "-shm"):
        Path(str(db) + extra).unlink(missing_ok=True)
    rel = db.relative_to(home).as_posix()
    assert _codes(home) == {("index_extra_row", rel), ("index_stale_row", rel)}


def test_rows_compacted_away_by_the_cost_log_are_not_missing(built: Path, tmp_path: Path) -> None:
    # vak's cost log drops rows older than 90 days when it compacts: the oldest rows simply vanish
    home = _copy(built, tmp_path)
    path = max(home.rglob("cost-log.jsonl"), key=lambda p: p.stat().st_size)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[4:]))
    assert _codes(home) == set()


def test_an_outbox_record_after_delivery_is_invalid(built: Path, tmp_path: Path) -> None:
    home = _copy(built, tmp_path)
    job = next(
        p for p in sorted(home.rglob("delivery/jobs/*.json")) if b'"state":"delivered"' in p.read_bytes()
    )
    lines = job.read_bytes().splitlines(keepends=True)
    job.write_bytes(b"".join(lines) + lines[0])  # a pending record again, after the delivered one
    rel = job.relative_to(home).as_posix()
    assert _codes(home) == {("outbox_job_invalid", rel)}


def test_commitment_events_before_opened_are_illegal(built: Path, tmp_path: Path) -> None:
    home = _copy(built, tmp_path)
    path = next(home.rglob("commitments.jsonl"))
    lines = path.read_bytes().splitlines(keepends=True)
    assert b'"kind":"opened"' in lines[0]
    path.write_bytes(b"".join(lines[1:]))
    rel = path.relative_to(home).as_posix()
    assert _codes(home) == {("commitment_event_illegal", rel)}


def test_a_renamed_checkpoint_manifest_is_a_mismatch(built: Path, tmp_path: Path) -> None:
    home = _copy(built, tmp_path)
    manifest = sorted(home.rglob("checkpoints/*/0001.json"))[0]
    target = manifest.with_name("0042.json")
    manifest.rename(target)
    assert _codes(home) == {("checkpoint_mismatch", target.relative_to(home).as_posix())}


def test_ledgers_verified_in_two_worker_processes(built: Path, tmp_path: Path) -> None:
    home = _copy(built, tmp_path)
    ledgers = sorted(p for p in home.rglob("*.jsonl") if p.parent.parent.name == "sessions")
    assert len(ledgers) >= 2
    path = next(home.rglob("routing-evidence.jsonl"))  # a lost routing row: a receipt unaccounted
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:3] + lines[4:]))
    victim = ledgers[-1]  # one payload byte of line 2 changed: line 3's prev_hash no longer matches it
    raw = victim.read_bytes()
    end2 = raw.index(b"\n", raw.index(b"\n") + 1)
    at = max(raw.rfind(bytes([c]), 0, end2) for c in b"abcdefghijklmnopqrstuvwxyz")  # last letter of line 2
    victim.write_bytes(raw[:at] + raw[at : at + 1].upper() + raw[at + 1 :])
    progress: list[str] = []
    report = verify_home(home, jobs=2, progress=lambda event: progress.append(event.rel_path))
    got = {(f.code.value, f.rel_path, f.line_no) for f in report.findings if f.severity.value != "info"}
    rel = victim.relative_to(home).as_posix()
    assert ("line_modified", rel, 2) in got
    assert {c for c, _, _ in got} == {"receipt_unaccounted", "line_modified"}
    assert report.ledger_count == len(ledgers)
    assert set(progress) >= {p.relative_to(home).as_posix() for p in ledgers}
    assert report.to_dict() == verify_home(home, jobs=1).to_dict()
