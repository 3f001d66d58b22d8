"""Incremental rescans of a 7.0 home: what 7.0 keeps immutable is not read again.

A keyless rescan trusts a sealed segment whose size, mtime and seals.log entry are as the last scan
recorded, and reads an open ``.log`` on from its last verified frame once its anchors are in place.
Expectations come from the home itself: os.stat sizes, the storage writer's own frames, and a fresh
scan of the same home into another directory.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from vakaudit.scan import scan_home
from vakaudit.storage import KeyRing, read_segments
from vakaudit.storage.writer import ChainWriter

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_homes"
LEDGERS = "agents/vak/sessions/spc_0199c3a0-7a00-7000-8000-00000000a001"
SID1 = "0199c3a0-7b00-7000-8000-0000000000aa"  # seg 1 sealed, seg 2 open
SID2 = "0199c3a0-7b00-7000-8000-0000000000bb"  # seg 1 open


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(SAMPLES / "v7", home)
    return home


def _ledger_segments(home: Path) -> list[str]:
    return sorted(p.relative_to(home).as_posix() for p in (home / LEDGERS).glob("*/seg-*"))


def _frame_rows(out: Path) -> list[dict]:
    t = pq.read_table(out / "entries" / "frames7.parquet")
    return sorted(t.to_pylist(), key=lambda r: (r["rel_path"], r["frame_index"]))


def _files(res) -> dict[str, dict]:  # noqa: ANN001 - a ScanResult
    return {r["rel_path"]: r for r in res.table("files").to_pylist()}


def _codes(res, code: str) -> list[str]:  # noqa: ANN001 - a ScanResult
    return sorted(r["rel_path"] for r in res.table("findings").to_pylist() if r["code"] == code)


def test_unchanged_home_reads_no_segment_again(tmp_path: Path) -> None:
    home = _home(tmp_path)
    first = scan_home(home, out=tmp_path / "out", jobs=1)
    segs = _ledger_segments(home)
    assert len(segs) == 3
    assert all(_files(first)[s]["scan_state"] == "full" for s in segs)
    rows_first = _frame_rows(tmp_path / "out")
    again = scan_home(home, out=tmp_path / "out", jobs=1)
    files = _files(again)
    assert {s: files[s]["scan_state"] for s in segs} == dict.fromkeys(segs, "unchanged")
    assert again.stats.files_unchanged >= len(segs)
    # what was read of the ledgers' segments: two 32-byte frame hashes (the anchors) per open .log
    logs = [s for s in segs if s.endswith(".log")]
    assert again.stats.bytes_read <= first.stats.bytes_read - sum((home / s).stat().st_size for s in segs) + 64 * len(logs)
    assert _frame_rows(tmp_path / "out") == rows_first
    fresh = scan_home(home, out=tmp_path / "fresh", jobs=1)
    assert _frame_rows(tmp_path / "out") == _frame_rows(fresh.out)
    assert "append_only_violation" not in again.findings_by_code()
    forced = scan_home(home, out=tmp_path / "out", jobs=1, full=True)  # --full reads every segment again
    assert {s: _files(forced)[s]["scan_state"] for s in segs} == dict.fromkeys(segs, "full")
    assert _frame_rows(tmp_path / "out") == rows_first


def _append(home: Path, sid: str, entries: list[bytes]) -> int:
    """Append sealed frames to the open segment of conversation ``sid`` with the storage writer,
    under the conversation's own scope key; returns the bytes appended."""
    from vakaudit.scan.frames7 import tenant_keys
    from vakaudit.scan.store7 import chain_key

    rel_dir = f"{LEDGERS}/{sid}"
    ring = KeyRing.from_file(SAMPLES / "v7-keys.json")
    key = chain_key(home / rel_dir, rel_dir, tenant_keys(home, ring))
    assert key is not None
    read = read_segments(home / rel_dir)  # rel_path: the segment file names
    last = read.segments[-1]
    assert last.form == "log"
    w = ChainWriter(last.chain.head, key=key, compress="zstd")
    w.offset = last.size_bytes  # the AAD of a sealed frame is its offset in the segment
    w.extend(entries)
    with (home / rel_dir / last.rel_path).open("ab") as fh:
        fh.write(w.data)
    return len(w.data)


def test_appended_frames_are_the_only_ones_read(tmp_path: Path) -> None:
    home = _home(tmp_path)
    scan_home(home, out=tmp_path / "out", jobs=1)
    log = f"{LEDGERS}/{SID1}/seg-00000002.log"
    before = (home / log).stat().st_size
    n_before = sum(1 for r in _frame_rows(tmp_path / "out") if r["rel_path"] == log)
    assert n_before == 7
    entries = [b'{"id":"0199c3a0-7c00-7000-8000-0000000000%02x","kind":"message","n":%d}' % (i, i) for i in range(3)]
    added = _append(home, SID1, entries)
    again = scan_home(home, out=tmp_path / "out", jobs=1)
    files = _files(again)
    assert files[log]["scan_state"] == "appended"
    assert files[f"{LEDGERS}/{SID1}/seg-00000001.sealed"]["scan_state"] == "unchanged"
    assert files[f"{LEDGERS}/{SID2}/seg-00000001.log"]["scan_state"] == "unchanged"
    rows = [r for r in _frame_rows(tmp_path / "out") if r["rel_path"] == log]
    assert len(rows) == n_before + 3
    assert [r["offset_bytes"] for r in rows][n_before] == before
    assert sum(r["stored_bytes"] for r in rows) == before + added == (home / log).stat().st_size
    # read of the ledgers this time: the appended bytes and the anchors, nothing else
    fresh = scan_home(home, out=tmp_path / "fresh", jobs=1)
    seg_bytes = sum((home / s).stat().st_size for s in _ledger_segments(home))
    assert again.stats.bytes_read <= fresh.stats.bytes_read - seg_bytes + added + 64 * 2
    assert _frame_rows(tmp_path / "out") == _frame_rows(fresh.out)
    assert "append_only_violation" not in again.findings_by_code()


def test_tampered_segments_are_findings_and_read_whole(tmp_path: Path) -> None:
    home = _home(tmp_path)
    scan_home(home, out=tmp_path / "out", jobs=1)
    sealed = home / LEDGERS / SID1 / "seg-00000001.sealed"
    data = bytearray(sealed.read_bytes())
    data[-1] ^= 0x01  # the last frame's hash: a sealed segment is never written again
    sealed.write_bytes(bytes(data))
    log = home / LEDGERS / SID2 / "seg-00000001.log"
    data = bytearray(log.read_bytes())
    data[-1] ^= 0x01  # same size: only the anchor tells
    log.write_bytes(bytes(data))
    res = scan_home(home, out=tmp_path / "out", jobs=1)
    rel_sealed, rel_log = sealed.relative_to(home).as_posix(), log.relative_to(home).as_posix()
    assert _codes(res, "append_only_violation") == sorted([rel_sealed, rel_log])
    files = _files(res)
    assert files[rel_sealed]["scan_state"] == "full" and files[rel_log]["scan_state"] == "full"
    # read whole: the bad link is found again, as a fresh scan finds it
    fresh = scan_home(home, out=tmp_path / "fresh", jobs=1)
    assert _codes(res, "frame_bad_link") == _codes(fresh, "frame_bad_link") != []
    assert _frame_rows(tmp_path / "out") == _frame_rows(fresh.out)


def _append_plain(home: Path, sid: str, entries: list[bytes]) -> None:
    """Append plaintext frames (flags 0: readable without a key) to the open segment of ``sid``."""
    rel_dir = f"{LEDGERS}/{sid}"
    last = read_segments(home / rel_dir).segments[-1]
    w = ChainWriter(last.chain.head, compress="zstd")
    w.offset = last.size_bytes
    w.extend(entries)
    with (home / rel_dir / last.rel_path).open("ab") as fh:
        fh.write(w.data)


def test_a_readable_conversation_that_grew_is_read_whole(tmp_path: Path) -> None:
    # plaintext rows depend on the entries before them, so a conversation with readable frames is
    # not read on from its last frame: it is read whole, and its rows are a fresh scan's
    home = _home(tmp_path)
    scan_home(home, out=tmp_path / "out", jobs=1)
    log = f"{LEDGERS}/{SID2}/seg-00000001.log"
    msg = b'{"id":"0199c3a0-7c00-7000-8000-0000000000%02x","parent_id":null,"ts":"2026-01-01T00:00:0%dZ","kind":"message","payload":{"role":"user","content":[{"type":"text","text":"hi"}]}}'
    _append_plain(home, SID2, [msg % (1, 1)])
    res = scan_home(home, out=tmp_path / "out", jobs=1)
    assert _files(res)[log]["scan_state"] == "appended"  # nothing was readable before: read on
    _append_plain(home, SID2, [msg % (2, 2)])
    res = scan_home(home, out=tmp_path / "out", jobs=1)
    assert _files(res)[log]["scan_state"] == "full"
    fresh = scan_home(home, out=tmp_path / "fresh", jobs=1)
    rows = _frame_rows(tmp_path / "out")
    assert rows == _frame_rows(fresh.out)
    assert sum(1 for r in rows if r["rel_path"] == log and r["plain_bytes"] is not None) == 2


@pytest.mark.parametrize("source", ["table", "parquet"])
def test_rows_by_path_gives_each_paths_rows_in_table_order_across_chunks(source: str, tmp_path: Path) -> None:
    """The previous scan's rows of one segment, whether they are one run or several, in memory or read
    from a Parquet part a row group at a time: the rows of that path, in table order, and none of
    another path's."""
    import pyarrow as pa

    from vakaudit.scan.frames7 import RowsByPath

    chunks = [
        pa.record_batch({"rel_path": ["a", "a", "b"], "n": [1, 2, 3]}),
        pa.record_batch({"rel_path": ["b", "c", "a"], "n": [4, 5, 6]}),
        pa.record_batch({"rel_path": ["d"], "n": [7]}),
    ]
    table = pa.Table.from_batches(chunks)
    if source == "table":
        rows = RowsByPath(table)
    else:
        pq.write_table(table, tmp_path / "part.parquet", row_group_size=2)  # groups: ab | bb | ca | d
        assert pq.ParquetFile(tmp_path / "part.parquet").metadata.num_row_groups == 4
        rows = RowsByPath.of_file(tmp_path / "part.parquet")
    assert rows.rows("b").to_pydict() == {"rel_path": ["b", "b"], "n": [3, 4]}  # one run over two chunks
    assert rows.rows("a").to_pydict() == {"rel_path": ["a", "a", "a"], "n": [1, 2, 6]}  # two runs
    assert rows.rows("d").to_pydict() == {"rel_path": ["d"], "n": [7]}
    assert rows.rows("c").to_pydict() == {"rel_path": ["c"], "n": [5]}
    assert rows.rows("zzz").num_rows == 0 and rows.rows("zzz").schema == table.schema


def test_frame_rows_in_small_row_groups_scan_and_rescan_alike(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """The frames part's row groups are bounded in bytes (a rescan holds one of the last scan's while
    writing the new part): with a bound of one byte every conversation's rows are a row group of
    their own, and the rows, full and rescanned, are those of a scan with the default bound."""
    import vakaudit.scan.engine as engine

    home = _home(tmp_path)
    scan_home(home, out=tmp_path / "default", full=True)
    monkeypatch.setattr(engine, "FRAMES_GROUP_BYTES", 1)
    scan_home(home, out=tmp_path / "small", full=True)
    conversations = len({r["rel_path"].rsplit("/", 1)[0] for r in _frame_rows(tmp_path / "default")})
    assert conversations == 2  # SID1 and SID2
    groups = pq.ParquetFile(tmp_path / "small" / "entries" / "frames7.parquet").metadata.num_row_groups
    assert groups >= conversations
    assert _frame_rows(tmp_path / "small") == _frame_rows(tmp_path / "default")
    scan_home(home, out=tmp_path / "small")  # a rescan reads the small groups back
    assert _frame_rows(tmp_path / "small") == _frame_rows(tmp_path / "default")
