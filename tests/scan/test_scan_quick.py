"""The quick per-kind byte share agrees with the verified scan's entries table."""

from __future__ import annotations

from pathlib import Path

from vakaudit.artifacts import get_kind
from vakaudit.scan import ledger_kind_bytes, scan_home
from vakaudit.scan.paths import LEDGER_GLOB, iter_ledger_paths


def test_quick_path_uses_the_ledger_kind_glob() -> None:
    assert get_kind("session_ledger").patterns == (LEDGER_GLOB,)


def test_quick_byte_share_equals_the_scan(small_home: Path, tmp_path: Path) -> None:
    # add a torn line and a symlinked ledger: the first is counted (under no kind), the second never
    led = small_home / "agents/vak/sessions/2599eb06cf360587/s1.jsonl"
    with open(led, "ab") as f:
        f.write(b'{"id":"torn')
    (small_home / "agents/vak/sessions/2599eb06cf360587/ln.jsonl").symlink_to(led)
    quick = ledger_kind_bytes(small_home, jobs=1)
    res = scan_home(small_home, out=tmp_path / "out", jobs=1)
    con = res.duckdb()
    scanned = {
        k: (n, b)
        for k, n, b in con.execute(
            "SELECT kind, count(*), sum(size_bytes) FROM entries GROUP BY kind"
        ).fetchall()
    }
    assert quick == scanned
    assert {r for r, _ in iter_ledger_paths(small_home)} == {
        r for (r,) in con.execute("SELECT DISTINCT rel_path FROM entries").fetchall()
    }
    assert ledger_kind_bytes(small_home, jobs=2) == quick
