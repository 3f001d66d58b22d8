"""An unlocked rescan of a 7.0 home keeps a conversation's rows when none of its segments changed.

Readable entries' rows depend on the entries before them (turn numbers), so a conversation is kept
whole or read whole. The expectation of every rescan is a fresh unlocked scan of the same bytes
into another folder: ``entries``, ``entry_fields`` and the objects' ``referenced_by`` equal."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.synth_homes import synth_v7
from vakaudit.scan import scan_home
from vakaudit.scan.frames7 import tenant_keys
from vakaudit.scan.store7 import chain_key
from vakaudit.storage import KeyRing, read_segments
from vakaudit.storage.writer import ChainWriter


@pytest.fixture(scope="module")
def home7(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return synth_v7(tmp_path_factory.mktemp("frames7u"), "--turns", "60", "--sessions", "3")


def _tables(res) -> dict[str, list]:  # noqa: ANN001 - a ScanResult
    def rows(name: str) -> list:
        return sorted(res.table(name).to_pylist(), key=lambda r: json.dumps(r, sort_keys=True, default=str))

    return {name: rows(name) for name in ("entries", "entry_fields", "objects", "turns", "sessions")}


def _ledger_states(res) -> dict[str, str]:  # noqa: ANN001
    return {r["rel_path"]: r["scan_state"] for r in res.table("files").to_pylist()
            if "/sessions/" in r["rel_path"] and "/seg-" in r["rel_path"]}


def test_an_unchanged_home_keeps_every_conversation(home7: tuple[Path, Path], tmp_path: Path) -> None:
    home, keys = home7
    ring = KeyRing.from_file(keys)
    before = _tables(scan_home(home, out=tmp_path / "out", keys=ring, jobs=1))  # read before the rescan
    again = scan_home(home, out=tmp_path / "out", keys=ring, jobs=1)
    assert set(_ledger_states(again).values()) == {"unchanged"}
    assert _tables(again) == before
    assert any(any(r.startswith("entry:") for r in o["referenced_by"]) for o in before["objects"])


def test_a_grown_conversation_is_read_whole_and_the_others_kept(home7: tuple[Path, Path], tmp_path: Path) -> None:
    src, keys = home7
    home = tmp_path / "home"
    shutil.copytree(src, home)
    ring = KeyRing.from_file(keys)
    scan_home(home, out=tmp_path / "out", keys=ring, jobs=1)
    conv = sorted({p.parent for p in home.glob("agents/*/sessions/*/*/seg-*.log")})[0]
    rel_dir = conv.relative_to(home).as_posix()
    key = chain_key(conv, rel_dir, tenant_keys(home, ring))
    seg = read_segments(conv, key).segments[-1]
    log = conv / Path(seg.rel_path).name
    last = seg.chain.frames[-1].entry
    w = ChainWriter(seg.chain.head, key=key, compress="zstd")
    w.offset = log.stat().st_size
    w.append(last)  # the same entry again (a plausible append: vak re-appends nothing, but its shape is real)
    with log.open("ab") as fh:
        fh.write(w.data)
    again = scan_home(home, out=tmp_path / "out", keys=ring, jobs=1)
    states = _ledger_states(again)
    assert {st for rel, st in states.items() if rel.startswith(rel_dir + "/")} == {"full"}
    assert {st for rel, st in states.items() if not rel.startswith(rel_dir + "/")} == {"unchanged"}
    fresh = scan_home(home, out=tmp_path / "fresh", keys=ring, jobs=1)
    assert _tables(again) == _tables(fresh)
