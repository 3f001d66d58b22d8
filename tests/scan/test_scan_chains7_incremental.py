"""Rescans of a 7.0 home's record chains trust what 7.0 guarantees (baseline7.md §3.6): a sealed
segment is immutable and an open ``.log`` only grows. The expectation of every rescan is a fresh
scan of the same bytes in another folder; the bytes read are the segments' own sizes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from tests.synth_homes import synth_v7
from vakaudit.scan import scan_home
from vakaudit.scan.chains7 import CHAINS_PART
from vakaudit.storage import KeyRing, read_segments
from vakaudit.storage.writer import ChainWriter

CHAIN = "agents/vak/activity-log"  # a plaintext chain with sealed segments and an open .log


@pytest.fixture(scope="module")
def home7(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return synth_v7(tmp_path_factory.mktemp("chains7"), "--profile", "measured", "--turns", "300", "--sessions", "6")


def _chain_rows(res) -> dict[str, list]:  # noqa: ANN001 - a ScanResult
    out = {}
    for name in res.row_counts:
        part = res.out / name / CHAINS_PART
        if part.is_file():
            import pyarrow.parquet as pq

            t = pq.read_table(part)
            out[name] = sorted(t.to_pylist(), key=lambda r: (r["rel_path"], r.get("line_no") or r.get("frame_index")))
    return out


def _states(res, prefix: str) -> dict[str, str]:  # noqa: ANN001
    return {r["rel_path"]: r["scan_state"] for r in res.table("files").to_pylist()
            if r["rel_path"].startswith(prefix) and "/seg-" in r["rel_path"]}


@pytest.mark.parametrize("unlocked", [False, True])
def test_an_unchanged_home_reads_no_chain_segment_again(home7: tuple[Path, Path], tmp_path: Path,
                                                        unlocked: bool) -> None:
    src, keys = home7
    ring = KeyRing.from_file(keys) if unlocked else None
    first = scan_home(src, out=tmp_path / "out", keys=ring, jobs=1)
    before = _chain_rows(first)  # read before the rescan rewrites the folder
    again = scan_home(src, out=tmp_path / "out", keys=ring, jobs=1)
    chains = {rel: st for rel, st in _states(again, "").items() if "/sessions/" not in rel}
    assert chains and set(chains.values()) == {"unchanged"}
    assert any(rel.endswith(".sealed") for rel in chains)
    assert _chain_rows(again) == before and before
    assert again.row_counts == first.row_counts


def test_an_appended_log_is_read_from_its_last_frame(home7: tuple[Path, Path], tmp_path: Path) -> None:
    src, _keys = home7
    home = tmp_path / "home"
    shutil.copytree(src, home)
    scan_home(home, out=tmp_path / "out", jobs=1)
    seg = next(s for s in read_segments(home / CHAIN).segments if s.form == "log")
    log = home / seg.rel_path if seg.rel_path.startswith(CHAIN) else home / CHAIN / Path(seg.rel_path).name
    last = seg.chain.frames[-1].entry
    w = ChainWriter(seg.chain.head, compress="zstd")
    w.offset = log.stat().st_size
    w.extend([last, last])
    with log.open("ab") as fh:
        fh.write(w.data)
    again = scan_home(home, out=tmp_path / "out", jobs=1)
    fresh = scan_home(home, out=tmp_path / "fresh", jobs=1)
    rel = log.relative_to(home).as_posix()
    assert _states(again, CHAIN)[rel] == "appended"
    assert {st for r, st in _states(again, CHAIN).items() if r != rel} == {"unchanged"}
    assert _chain_rows(again) == _chain_rows(fresh)
    rows = [r for r in _chain_rows(again)["activity_log"] if r["rel_path"] == rel]
    assert len(rows) == len(seg.chain.frames) + 2


def test_a_changed_sealed_segment_is_read_whole_and_reported(home7: tuple[Path, Path], tmp_path: Path) -> None:
    src, _keys = home7
    home = tmp_path / "home"
    shutil.copytree(src, home)
    scan_home(home, out=tmp_path / "out", jobs=1)
    sealed = sorted((home / CHAIN).glob("seg-*.sealed"))[0]
    st = sealed.stat()
    os.utime(sealed, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # same bytes, touched
    again = scan_home(home, out=tmp_path / "out", jobs=1)
    rel = sealed.relative_to(home).as_posix()
    assert _states(again, CHAIN)[rel] == "full"
    codes = {(r["code"], r["rel_path"]) for r in again.table("findings").to_pylist()}
    assert ("append_only_violation", rel) in codes
    fresh = scan_home(home, out=tmp_path / "fresh", jobs=1)
    assert _chain_rows(again) == _chain_rows(fresh)
    assert isinstance(again.table("activity_log"), pa.Table)
