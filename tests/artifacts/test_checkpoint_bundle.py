"""Checkpoint files read into one ``CheckpointBundle`` give the rows the reader gives file by file.

The bundle builds the columns of many snapshots at once (the values common to a snapshot's rows once
per file, repeated over its rows); its rows must be those of the streaming reference reader
(``fast=False``) over each file in turn, and each row must carry its own file's common values.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from test_checkpoint_fast_path import TRICKY_SNAPSHOTS

from vakaudit.artifacts import checkpoints, get_kind
from vakaudit.artifacts._base import ReadContext
from vakaudit.artifacts.checkpoints import SCHEMA, CheckpointBundle
from vakaudit.findings import Finding

FIXTURES = Path(__file__).parent / "fixtures" / "checkpoints"
SID = "01920d6e-8f1a-7c3b-9a55-2f0e6b7d4c10"


def _home(tmp_path: Path) -> tuple[Path, list[str]]:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES, home)
    folder = home / "agents/vak/checkpoints/sid"
    folder.mkdir()
    rels = []
    for i, doc in enumerate(TRICKY_SNAPSHOTS, start=1):
        (folder / f"{i:04d}.json").write_bytes(doc)
        rels.append(f"agents/vak/checkpoints/sid/{i:04d}.json")
    (folder / ".0009.tmp").write_bytes(b'{"seq":9')
    rels.append("agents/vak/checkpoints/sid/.0009.tmp")
    fixed = sorted(
        str(p.relative_to(home)) for p in (home / "agents/vak/checkpoints").rglob("*") if p.is_file()
    )
    rels += [r for r in fixed if r not in rels]
    return home, rels


def _reference(home: Path, rel: str, found: list[Finding]) -> list[dict]:
    ctx = ReadContext(home, rel, "agents/vak", checkpoints.session_of(rel), emit=found.append)
    if rel.rsplit("/", 1)[-1].endswith(".json") and "/blobs/" not in rel:
        batches = list(checkpoints._snapshot(ctx, fast=False))
    else:
        batches = list(checkpoints.reader(ctx))
    return [row for b in batches for row in b.to_pylist()]


def test_bundle_rows_equal_the_reference_file_by_file(tmp_path: Path) -> None:
    home, rels = _home(tmp_path)
    found_r: list[Finding] = []
    expected = []
    counts = []
    for rel in rels:
        rows = _reference(home, rel, found_r)
        expected += rows
        counts.append(len(rows))
    found_b: list[Finding] = []
    bundle = get_kind("checkpoints").reader.bundle.new()
    assert isinstance(bundle, CheckpointBundle)
    got_counts = []
    for rel in rels:
        ctx = ReadContext(home, rel, "agents/vak", checkpoints.session_of(rel), emit=found_b.append)
        rows, end = bundle.add(ctx)
        assert end is None
        got_counts.append(rows)
    batches = bundle.batches()
    assert len(batches) == 1 and batches[0].schema.equals(SCHEMA)
    assert got_counts == counts
    assert 0 in counts and counts.count(1) >= 3  # the temp file; snapshots without entries, the blob
    assert batches[0].to_pylist() == expected
    assert found_b == found_r and found_r  # the truncated snapshots are reported, once each


def test_each_row_carries_its_own_snapshot_values(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = home / "agents/vak/checkpoints" / SID
    folder.mkdir(parents=True)
    docs = {
        "0001.json": b'{"seq":1,"label":"ab","files":[{"rel_path":"x","content":"QQ=="},{"rel_path":"y","content":"QUI="}]}',
        "0002.json": b'{"seq":2,"files":[],"observed":["x"]}',
        "0003.json": b'{"seq":3,"label":"\xc3\xa9","files":[{"rel_path":"z","hash":"h","size":7}]}',
    }
    for name, doc in docs.items():
        (folder / name).write_bytes(doc)
    bundle = CheckpointBundle()
    for name in docs:
        rel = f"agents/vak/checkpoints/{SID}/{name}"
        bundle.add(ReadContext(home, rel, "agents/vak", SID))
    (batch,) = bundle.batches()
    cols = [
        "rel_path",
        "seq",
        "label_bytes",
        "format",
        "files_count",
        "observed_count",
        "snapshot_content_bytes",
        "entry_index",
        "file_rel_path",
        "content_bytes",
    ]
    got = [tuple(r[c] for c in cols) for r in batch.to_pylist()]
    d = f"agents/vak/checkpoints/{SID}/"
    assert got == [
        (d + "0001.json", 1, 2, "base64", 2, 0, 3, 0, "x", 1),
        (d + "0001.json", 1, 2, "base64", 2, 0, 3, 1, "y", 2),
        (d + "0002.json", 2, None, None, 0, 1, 0, None, None, None),
        (d + "0003.json", 3, 2, "hashed", 1, 0, 7, 0, "z", 7),
    ]
    assert set(batch["session_id"].to_pylist()) == {SID}
    assert bundle.batches() == []


def test_long_members_of_an_item_fold_like_the_streaming_reader(tmp_path: Path) -> None:
    """A ``rel_path`` or ``hash`` longer than the 4 KiB cap is measured, not kept: no path, no hash."""
    folder = tmp_path / "checkpoints" / "sid"
    folder.mkdir(parents=True)
    long = "p" * 5000
    doc = (
        '{"seq":1,"files":[{"rel_path":"'
        + long
        + '","content":"QQ=="},{"rel_path":"b","hash":"'
        + long
        + '","size":3},{"rel_path":"c","content":"'
        + "QUJD" * 2000
        + '","mtime_ns":5,"extra":{"k":1}},{"rel_path":["x"]},[1]]}'
    )
    (folder / "0001.json").write_text(doc)
    rel = "checkpoints/sid/0001.json"
    fast = [
        r
        for b in checkpoints._snapshot(ReadContext(tmp_path, rel, "", None), fast=True)
        for r in b.to_pylist()
    ]
    ref = [
        r
        for b in checkpoints._snapshot(ReadContext(tmp_path, rel, "", None), fast=False)
        for r in b.to_pylist()
    ]
    assert fast == ref
    cols = ("entry_index", "file_rel_path", "hash", "content_bytes", "encoded_bytes", "mtime_ns", "format")
    assert [tuple(r[c] for c in cols) for r in fast] == [
        (0, None, None, 1, 4, None, "hashed"),
        (1, "b", None, 3, None, None, "hashed"),
        (2, "c", None, 6000, 8000, 5, "hashed"),
        (4, None, None, None, None, None, "hashed"),
    ]
