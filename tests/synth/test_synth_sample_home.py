"""The committed sample home is exactly what `vakaudit synth sample_homes/tiny` writes today."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from vakaudit.synth import build_home

REGENERATE = "regenerate: rm -rf sample_homes/tiny && vakaudit synth sample_homes/tiny --no-fsync"


def _rows(db: Path) -> list[tuple]:
    con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        return con.execute("SELECT * FROM entries ORDER BY entry_id").fetchall()
    finally:
        con.close()


def test_committed_tiny_home_matches_the_generator(sample_homes: Path, tmp_path: Path) -> None:
    committed = sample_homes / "tiny"
    fresh = tmp_path / "tiny"
    build_home(fresh, profile="tiny", seed=0, layout="g2", fsync=False)
    names = sorted(p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file())
    assert names == sorted(
        p.relative_to(committed).as_posix() for p in committed.rglob("*") if p.is_file()
    ), REGENERATE
    for name in names:
        if name == "cache/store.db":  # page bytes depend on the SQLite build; compare the rows
            assert _rows(committed / name) == _rows(fresh / name), REGENERATE
            continue
        assert (committed / name).read_bytes() == (fresh / name).read_bytes(), f"{name}: {REGENERATE}"


def test_sample_home_is_small(sample_homes: Path) -> None:
    size = sum(p.stat().st_size for p in (sample_homes / "tiny").rglob("*") if p.is_file())
    assert size < 5_000_000
