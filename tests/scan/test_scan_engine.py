"""scan_home end to end: read-only, byte accounting, ledger rows, findings, layouts."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest
from scan_homes import lstat_total, make_ledger, snapshot

from vakaudit.errors import HomeNotFoundError, ScanError, UsageError
from vakaudit.scan import ScanProgress, detect_layout, iter_home_files, open_scan, scan_home


@pytest.fixture(scope="module")
def tiny_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vakaudit.synth import build_home

    home = tmp_path_factory.mktemp("scan") / "tiny"
    build_home(home, profile="tiny", seed=3, fsync=False)
    return home


def test_scan_never_touches_the_home(tiny_home: Path, tmp_path: Path) -> None:
    before = snapshot(tiny_home)
    scan_home(tiny_home, out=tmp_path / "out", jobs=2)
    scan_home(tiny_home, out=tmp_path / "out", jobs=2)  # incremental pass too
    after = snapshot(tiny_home)
    assert before == after


def test_byte_shares_add_up_to_the_whole_home(tiny_home: Path, tmp_path: Path) -> None:
    res = scan_home(tiny_home, out=tmp_path / "out", jobs=1)
    con = res.duckdb()
    total, files = con.execute("SELECT sum(size_bytes), count(*) FROM files").fetchone()
    assert total == lstat_total(tiny_home)
    assert files == sum(len(f) for _, _, f in os.walk(tiny_home))
    shares = con.execute(
        "SELECT kind, sum(size_bytes) * 1.0 / (SELECT sum(size_bytes) FROM files) FROM files GROUP BY kind"
    )
    assert abs(sum(s for _, s in shares.fetchall()) - 1.0) < 1e-12
    # every path exactly once
    assert con.execute("SELECT count(DISTINCT rel_path) FROM files").fetchone()[0] == files


def test_entry_sizes_add_up_to_each_ledger(tiny_home: Path, tmp_path: Path) -> None:
    res = scan_home(tiny_home, out=tmp_path / "out", jobs=1)
    con = res.duckdb()
    per_file = dict(con.execute("SELECT rel_path, sum(size_bytes) FROM entries GROUP BY rel_path").fetchall())
    assert per_file, "the tiny home has ledgers"
    for rel, size in per_file.items():
        assert size == (tiny_home / rel).stat().st_size
    lines = dict(con.execute("SELECT rel_path, count(*) FROM entries GROUP BY rel_path").fetchall())
    for rel, n in lines.items():
        data = (tiny_home / rel).read_bytes()
        assert n == data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    fields = dict(
        con.execute("SELECT rel_path, sum(size_bytes) FROM entry_fields GROUP BY rel_path").fetchall()
    )
    assert fields == per_file
    # offsets are contiguous
    gaps = con.execute(
        "SELECT count(*) FROM (SELECT offset_bytes, lag(offset_bytes + size_bytes, 1, 0) "
        "OVER (PARTITION BY rel_path ORDER BY line_no) AS expect FROM entries) WHERE offset_bytes <> expect"
    ).fetchone()[0]
    assert gaps == 0


def test_vak_written_ledger_reads_like_vak(vak_samples: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    dst = home / "agents/vak/sessions/2599eb06cf360587/basic.jsonl"
    dst.parent.mkdir(parents=True)
    shutil.copy(vak_samples / "basic/ledger.jsonl", dst)
    expected = json.loads((vak_samples / "basic/expected.json").read_text())
    res = scan_home(home, out=tmp_path / "out", jobs=1)
    entries = res.table("entries").to_pylist()
    assert len(entries) == len(expected["chain_to_root"])  # no branches: every entry is on the chain
    assert [e["id"] for e in entries] == expected["chain_to_root"]
    assert expected["warnings"] == []
    assert entries[0]["chain_status"] == "unchecked" and all(e["chain_ok"] for e in entries[1:])
    out_tokens = sum(e["output_tokens"] or 0 for e in entries if e["kind"] == "message")
    in_tokens = sum(e["input_tokens"] or 0 for e in entries if e["kind"] == "message")
    assert {"input_tokens": in_tokens, "output_tokens": out_tokens} == {
        k: expected["total_usage"][k] for k in ("input_tokens", "output_tokens")
    }
    # the README: 3 turns, each opened by one directive; the header belongs to no turn
    turns = res.table("turns").to_pylist()
    assert [t["turn_no"] for t in turns] == [1, 2, 3]
    assert entries[0]["turn_no"] is None
    sessions = res.table("sessions").to_pylist()
    assert sessions[0]["session_id"] == "basic" and sessions[0]["chain_ok"] is True
    assert sessions[0]["turn_count"] == 3 and sessions[0]["size_bytes"] == dst.stat().st_size


def test_torn_last_line_gets_a_row_and_a_finding(tmp_path: Path) -> None:
    home = tmp_path / "home"
    led = make_ledger(home / "sessions/k/s.jsonl", 2)
    good = led.read_bytes()
    with open(led, "ab") as f:
        f.write(b'{"id":"x","parent_id":null,"ts":"2026-')
    res = scan_home(home, out=tmp_path / "out", jobs=1)
    rows = res.table("entries").to_pylist()
    last = rows[-1]
    assert last["kind"] is None and last["offset_bytes"] == len(good)
    assert last["size_bytes"] == len(b'{"id":"x","parent_id":null,"ts":"2026-')
    assert sum(r["size_bytes"] for r in rows) == led.stat().st_size
    f = [x for x in res.table("findings").to_pylist() if x["code"] == "torn_last_line"]
    assert len(f) == 1 and f[0]["line_no"] == len(rows) and f[0]["offset_bytes"] == len(good)


def test_modified_line_is_line_modified_at_that_line_and_breaks_the_chain_at_the_next(tmp_path: Path) -> None:
    # vak's reader flags line 4 (its prev_hash no longer matches); the bytes that changed are line 3's,
    # and the finding says so, as `vakaudit verify` does (one verdict per defect)
    home = tmp_path / "home"
    led = make_ledger(home / "sessions/k/s.jsonl", 2)
    lines = led.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b"question 0", b"question X")  # same length, line 3 changed
    led.write_bytes(b"\n".join(lines))
    res = scan_home(home, out=tmp_path / "out", jobs=1)
    chain = [(x["code"], x["line_no"]) for x in res.table("findings").to_pylist()]
    assert chain == [("line_modified", 3)]
    rows = res.table("entries").to_pylist()
    assert rows[3]["chain_ok"] is False and rows[2]["chain_ok"] is True


def test_unparseable_line_still_gets_a_row(tmp_path: Path) -> None:
    home = tmp_path / "home"
    led = make_ledger(home / "sessions/k/s.jsonl", 1)
    lines = led.read_bytes().split(b"\n")
    lines.insert(2, b"{not json")
    led.write_bytes(b"\n".join(lines))
    res = scan_home(home, out=tmp_path / "out", jobs=1)
    rows = res.table("entries").to_pylist()
    assert rows[2]["kind"] is None and rows[2]["chain_status"] == "unparseable"
    assert rows[3]["chain_status"] == "unchecked"  # rule 5: accepted unchecked after a skipped line
    codes = [(x["code"], x["line_no"]) for x in res.table("findings").to_pylist()]
    assert ("unparseable_line", 3) in codes
    assert sum(r["size_bytes"] for r in rows) == led.stat().st_size


def test_symlink_out_of_the_home_is_not_followed(small_home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b"secret outside bytes\n" * 100)
    link = small_home / "agents/vak/sessions/2599eb06cf360587/link.jsonl"
    link.symlink_to(outside)
    res = scan_home(small_home, out=tmp_path / "out", jobs=1)
    f = [x for x in res.table("findings").to_pylist() if x["code"] == "symlink_outside_home"]
    assert [x["rel_path"] for x in f] == ["agents/vak/sessions/2599eb06cf360587/link.jsonl"]
    row = [r for r in res.table("files").to_pylist() if r["rel_path"].endswith("link.jsonl")][0]
    assert row["file_type"] == "symlink" and row["size_bytes"] == len(str(outside))
    assert row["scan_state"] == "not_read"
    assert "agents/vak/sessions/2599eb06cf360587/link.jsonl" not in set(
        res.table("entries")["rel_path"].to_pylist()
    )


def test_unreadable_file_is_reported_and_the_scan_goes_on(
    small_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tests run as root, and root reads a chmod 000 file. open() on a Unix socket fails for every
    # user (ENXIO), so a socket where a ledger is expected is a file whose open really fails.
    path = small_home / "agents/vak/sessions/2599eb06cf360587/sock.jsonl"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        monkeypatch.chdir(path.parent)  # AF_UNIX paths are limited to 108 bytes: bind a relative name
        sock.bind(path.name)
        monkeypatch.undo()
        with pytest.raises(OSError):
            open(path, "rb")  # noqa: SIM115 - proves the premise: this open fails even for root
        res = scan_home(small_home, out=tmp_path / "out", jobs=1)
    finally:
        sock.close()
    f = [x for x in res.table("findings").to_pylist() if x["code"] == "unreadable_file"]
    assert [x["rel_path"] for x in f] == ["agents/vak/sessions/2599eb06cf360587/sock.jsonl"]
    assert res.row_counts["sessions"] == 2  # the two real ledgers were still read


def test_unlistable_directory_for_a_non_root_user(small_home: Path, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        # root bypasses permission bits; the socket test above covers a real open failure
        d = small_home / "agents/vak/sessions"
        assert os.access(d, os.R_OK)
        return
    d = small_home / "agents/vak/sessions/2599eb06cf360587"
    d.chmod(0)
    try:
        res = scan_home(small_home, out=tmp_path / "out", jobs=1)
    finally:
        d.chmod(0o755)
    assert "unreadable_file" in res.findings_by_code()


def test_nested_home_and_undeclared_file_findings(small_home: Path, tmp_path: Path) -> None:
    res = scan_home(small_home, out=tmp_path / "out", jobs=1)
    codes = {(x["code"], x["rel_path"]) for x in res.table("findings").to_pylist()}
    assert ("nested_home", "agents/vak/agents/vak") in codes
    assert ("undeclared_file", "notes.txt") in codes
    files = {r["rel_path"]: r for r in res.table("files").to_pylist()}
    assert (
        files["agents/vak/agents/vak/sessions/2599eb06cf360587/s2.jsonl"]["home_scope"]
        == "agents/vak/agents/vak"
    )
    assert files["agents/vak/sessions/2599eb06cf360587/s1.jsonl"]["session_id"] == "s1"
    assert files["notes.txt"]["kind"] == "unclassified"


def test_g3_tenant_store_home_is_reported_not_misread(tmp_path: Path) -> None:
    home = tmp_path / "home"
    seg = home / "tenants/t_01/store/objects/seg-00000001.sealed"
    seg.parent.mkdir(parents=True)
    seg.write_bytes(b"\x00\x01sealed segment bytes" * 50)
    make_ledger(home / "agents/vak/sessions/k/legacy.jsonl", 1)  # even a JSONL file is not read in G3
    assert detect_layout(home) == "g3"
    res = scan_home(home, out=tmp_path / "out", jobs=1)
    assert res.layout == "g3"
    assert "tenant_store_home" in res.findings_by_code()
    assert res.row_counts["entries"] == 0
    con = res.duckdb()
    assert con.execute("SELECT sum(size_bytes) FROM files").fetchone()[0] == lstat_total(home)
    assert {r[0] for r in con.execute("SELECT DISTINCT scan_state FROM files").fetchall()} == {"not_read"}


def test_g2_layout_detected_from_trace_keys(small_home: Path, tmp_path: Path) -> None:
    assert detect_layout(small_home) == "g1"
    (small_home / "agents/vak/routing-evidence.jsonl").write_bytes(
        b'{"ts":"2026-08-24T09:15:02Z","provider":"p","model":"m","outcome":"success","latency_ms":1,'
        b'"trace":{"tenant":"t","space":"s","agent":"vak","run":"r1","span":"0123456789abcdef",'
        b'"cause":{"kind":"heartbeat"}}}\n'
    )
    assert detect_layout(small_home) == "g2"


def test_walk_is_reusable_on_its_own(small_home: Path) -> None:
    files = list(iter_home_files(small_home))
    rels = [f.rel_path for f in files]
    assert rels == sorted(rels, key=lambda r: r.split("/"))
    kinds = {f.rel_path: f.kind.name for f in files}
    assert kinds["agents/vak/cost-log.jsonl"] == "cost_log"
    assert kinds["agents/vak/sessions/2599eb06cf360587/s1.jsonl"] == "session_ledger"


def test_parallel_scan_equals_serial_scan(
    tiny_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import vakaudit.scan.derive as derive
    import vakaudit.scan.engine as engine

    monkeypatch.setattr(engine, "INLINE_BYTES", 0)  # force the process pool on this small home
    monkeypatch.setattr(derive, "DERIVE_APART_BYTES", 0)  # and turns/sessions derived in a child
    seen: list[ScanProgress] = []
    par = scan_home(tiny_home, out=tmp_path / "par", jobs=2, progress=seen.append)
    ser = scan_home(tiny_home, out=tmp_path / "ser", jobs=1)
    assert seen and seen[-1].bytes_done == seen[-1].bytes_total
    for name in ("entries", "entry_fields", "turns", "sessions", "files", "cost_log", "checkpoints"):
        a = par.table(name).sort_by([(c, "ascending") for c in ("rel_path",)])
        b = ser.table(name).sort_by([(c, "ascending") for c in ("rel_path",)])
        if name == "entries":
            a = a.sort_by([("rel_path", "ascending"), ("line_no", "ascending")])
            b = b.sort_by([("rel_path", "ascending"), ("line_no", "ascending")])
        assert a.equals(b), name


def test_out_dir_rules(small_home: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        scan_home(small_home, out=small_home / "scan")
    with pytest.raises(HomeNotFoundError):
        scan_home(tmp_path / "missing", out=tmp_path / "out")
    res = scan_home(small_home, out=tmp_path / "out", jobs=1)
    again = open_scan(tmp_path / "out")
    assert again.row_counts == res.row_counts and again.home == small_home
    # a directory holding something else is never cleared, nor is a scan of another home reused
    other = tmp_path / "not-a-scan"
    other.mkdir()
    (other / "precious.txt").write_text("keep me")
    with pytest.raises(ScanError):
        scan_home(small_home, out=other)
    assert (other / "precious.txt").read_text() == "keep me"
    second_home = tmp_path / "home2"
    (second_home / "agents").mkdir(parents=True)  # an empty but real home
    with pytest.raises(ScanError):
        scan_home(second_home, out=tmp_path / "out")


def test_default_home_follows_vak_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from vakaudit.scan import default_home

    assert default_home({"VAK_HOME": str(tmp_path), "HOME": "/h"}) == tmp_path
    assert default_home({"VAK_HOME": "", "HOME": "/h", "XDG_DATA_HOME": "/x"}) in (
        Path("/x/vak"),
        Path("/h/Library/Application Support/vak"),
    )


def test_secret_files_are_sized_never_opened(
    small_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = small_home / "vak-home/credentials.enc"
    key.parent.mkdir(parents=True)
    key.write_bytes(b"\x93encrypted" * 10)
    # .credential_key as a socket: had the scan tried to open it, open() would fail (ENXIO, even for
    # root) and an unreadable_file finding would name it
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        monkeypatch.chdir(key.parent)
        sock.bind(".credential_key")
        monkeypatch.undo()
        res = scan_home(small_home, out=tmp_path / "out", jobs=1)
    finally:
        sock.close()
    found = [
        (x["code"], x["rel_path"])
        for x in res.table("findings").to_pylist()
        if "vak-home" in (x["rel_path"] or "")
    ]
    assert sorted(found) == [
        ("secret_file", "vak-home/.credential_key"),
        ("secret_file", "vak-home/credentials.enc"),
    ]
    files = {r["rel_path"]: r for r in res.table("files").to_pylist()}
    enc = files["vak-home/credentials.enc"]
    assert enc["kind"] == "secrets" and enc["size_bytes"] == 100 and enc["readable"] is False
    assert enc["scan_state"] == "not_read"
