"""``vakaudit report HOME --compare OTHER``: the same seed written as a JSONL-era home (g2) and as a
7.0 home, side by side.

Expectations are computed here, straight from each home's own scan with DuckDB (turns are intent
entries, home bytes the files' sizes, sessions the ledger files or conversation directories, read
classes the kinds present per card), not from the report; the difference and ratio columns must
be the subtraction and the division of the two.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from vakaudit.synth import build_home

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "vakaudit", *args],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": "/tmp"},
    )


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("compare")
    build_home(root / "g2", turns=40, seed=8, layout="g2", fsync=False)
    v7 = build_home(root / "v7", turns=40, seed=8, layout="v7", fsync=False)
    from vakaudit.storage.tenant_writer import json_key_file_text

    (root / "keys.json").write_text(json_key_file_text({0: v7.keys.kek}, v7.keys.id_key))
    for name, extra in (("g2", []), ("v7", ["--keys", str(root / "keys.json")])):
        r = _cli("scan", str(root / name), "--out", str(root / f"scan-{name}"), "-q", *extra)
        assert r.returncode == 0, r.stderr
    return {"root": root, "g2": root / "g2", "v7": root / "v7", "keys": root / "keys.json"}


def _expected(scan: Path) -> dict[str, float]:
    con = duckdb.connect()
    entries = f"read_parquet('{scan}/entries/*.parquet', union_by_name = true)"
    files = f"read_parquet('{scan}/files/*.parquet')"
    turns = con.execute(f"SELECT count(*) FROM {entries} WHERE kind = 'intent'").fetchone()[0]
    home = con.execute(f"SELECT sum(size_bytes) FROM {files}").fetchone()[0]
    v7 = con.execute(f"SELECT count(*) FROM {entries} WHERE segment IS NOT NULL").fetchone()[0] > 0
    ledger_files = [r[0] for r in con.execute(f"SELECT rel_path FROM {files} WHERE kind = 'session_ledger'").fetchall()]
    sessions = len({p.rsplit("/", 1)[0] for p in ledger_files}) if v7 else len(set(ledger_files))
    return {"turns": turns, "home_bytes": home, "home_bytes_per_turn": home / turns, "sessions": sessions}


def _section(doc: dict, name: str) -> dict:
    return next(s["context"] for s in doc["sections"] if s["name"] == name)


def test_g2_compared_with_the_same_seed_in_7_0(homes: dict[str, Path]) -> None:
    root = homes["root"]
    out = root / "compare.json"
    r = _cli("report", str(root / "scan-g2"), "--compare", str(root / "scan-v7"), "--format", "json", "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    ctx = _section(doc, "compare")
    rows = {row["name"]: row for row in ctx["rows"]}
    mine, theirs = _expected(root / "scan-g2"), _expected(root / "scan-v7")
    assert mine["turns"] == theirs["turns"] > 0  # the same conversation
    for name in ("turns", "home_bytes", "sessions"):
        assert rows[name]["this"] == mine[name] and rows[name]["other"] == theirs[name], name
    assert rows["home_bytes_per_turn"]["this"] == pytest.approx(mine["home_bytes_per_turn"])
    assert rows["home_bytes_per_turn"]["other"] == pytest.approx(theirs["home_bytes_per_turn"])
    assert theirs["home_bytes"] < mine["home_bytes"]  # 7.0 writes less for the same workload
    for row in rows.values():
        if row["this"] is not None and row["other"] is not None:
            assert row["difference"] == pytest.approx(row["other"] - row["this"])
            if row["this"]:
                assert row["ratio"] == pytest.approx(row["other"] / row["this"])
    # the as-is -> to-be section shows the comparison home as the measured to-be
    to_be = _section(doc, "levers")["measured_to_be"]
    assert to_be["layout"] == "7.0 data baseline"
    assert {r["name"]: r["other"] for r in to_be["rows"]} == {
        k: rows[k]["other"] for k in (r["name"] for r in to_be["rows"])
    }
    assert "ledger_bytes_per_turn" in {r["name"] for r in to_be["rows"]}


def test_the_7_0_side_first_and_markdown(homes: dict[str, Path]) -> None:
    root = homes["root"]
    out = root / "compare.md"
    r = _cli(
        "report", str(homes["v7"]), "--keys", str(homes["keys"]), "--scan-out", str(root / "scan-v7b"),
        "--compare", str(root / "scan-g2"), "--format", "md", "-o", str(out), "-q",
    )
    assert r.returncode == 0, r.stderr
    md = out.read_text(encoding="utf-8")
    assert "## Compared with another home" in md and "### Measured to-be" in md
    assert "JSONL era (g2)" in md


def test_without_compare_there_is_no_comparison(homes: dict[str, Path]) -> None:
    out = homes["root"] / "plain.json"
    r = _cli("report", str(homes["root"] / "scan-g2"), "--format", "json", "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert "compare" not in {s["name"] for s in doc["sections"]}
    assert _section(doc, "levers")["measured_to_be"] is None


def test_compare_mistakes_are_usage_errors(homes: dict[str, Path]) -> None:
    scan = str(homes["root"] / "scan-g2")
    r = _cli("report", scan, "--compare", str(homes["root"] / "missing"), "--format", "md", "-o", "-")
    assert r.returncode == 2 and "does not exist" in r.stderr
    r = _cli("report", scan, "--compare-keys", str(homes["keys"]), "--format", "md", "-o", "-")
    assert r.returncode == 2 and "--compare" in r.stderr
    # the output may not go into the comparison home either (refused before anything is read)
    r = _cli("report", scan, "--compare", str(homes["v7"]), "-o", str(homes["v7"] / "r.html"))
    assert r.returncode == 2 and not (homes["v7"] / "r.html").exists()
