"""``turns`` and ``sessions`` of a 7.0 home, derived from its frames like a JSONL ledger's lines.

Expectations: the sample 7.0 home's conversations counted by hand with the turn rule (ledger.md §5:
a directive opens a turn; the prep kinds written before it belong to it; an entry whose envelope
names its turn in `at_turn` belongs to that turn, baseline7.md §8.1), the synth's own record of
what it wrote, and the same seed written in the JSONL layout (g2), whose tables come from the JSONL
path.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from vakaudit.scan import scan_home
from vakaudit.storage import KeyRing
from vakaudit.synth import build_home

SAMPLE = Path(__file__).resolve().parents[2] / "sample_homes"
CONV = "agents/vak/sessions/spc_0199c3a0-7a00-7000-8000-00000000a001/0199c3a0-7b00-7000-8000-0000000000"


def _rows(scan: Path, sql: str) -> list[tuple]:
    return duckdb.connect().execute(sql.replace("T(", f"read_parquet('{scan}/")).fetchall()


def test_sample_home_turns_counted_by_hand(tmp_path: Path) -> None:
    scan = scan_home(SAMPLE / "v7", out=tmp_path / "scan", keys=KeyRing.from_file(SAMPLE / "v7-keys.json")).out
    # conversation aa: header, then three times (user message, binding, evidence body, assistant);
    # bb: header, user message, binding, evidence body, assistant. Each user message is a directive,
    # and every entry after it names it in `at_turn` (baseline7.md §8.1: "the directive entry id of
    # the turn"), the binding written after its directive included: four entries per turn
    expected_turns = [
        (CONV + "aa", 1, True, 4, 2, 1),
        (CONV + "aa", 2, True, 4, 2, 1),
        (CONV + "aa", 3, True, 4, 2, 1),
        (CONV + "bb", 1, True, 4, 2, 1),
    ]
    got = _rows(
        scan,
        "SELECT rel_path, turn_no, turn_id IS NOT NULL, entry_count, message_count, binding_count "
        "FROM T(turns/*.parquet') ORDER BY ALL",
    )
    assert got == expected_turns
    sessions = _rows(scan, "SELECT rel_path, entry_count, turn_count, chain_ok FROM T(sessions/*.parquet') ORDER BY 1")
    assert sessions == [(CONV + "aa", 13, 3, True), (CONV + "bb", 5, 1, True)]


def test_a_locked_sample_home_has_sessions_and_no_turns(tmp_path: Path) -> None:
    scan = scan_home(SAMPLE / "v7", out=tmp_path / "scan").out
    assert _rows(scan, "SELECT count(*) FROM T(turns/*.parquet')") == [(0,)]
    # keyless, a conversation's frames are still counted and sized (stored bytes)
    sessions = _rows(scan, "SELECT rel_path, entry_count FROM T(sessions/*.parquet') ORDER BY 1")
    assert sessions == [(CONV + "aa", 13), (CONV + "bb", 5)]


@pytest.fixture(scope="module")
def both_layouts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, object]:
    root = tmp_path_factory.mktemp("layouts")
    g2 = build_home(root / "g2", turns=40, seed=3, layout="g2", fsync=False)
    v7 = build_home(root / "v7", turns=40, seed=3, layout="v7", fsync=False)
    keys = KeyRing({0: v7.keys.kek}, v7.keys.id_key)  # what `synth --keys-out` writes
    s2 = scan_home(root / "g2", out=root / "s2").out
    s7 = scan_home(root / "v7", out=root / "s7", keys=keys).out
    assert g2.turns == v7.turns
    return s2, s7, v7


def test_synth_7_0_turns_equal_the_record_and_the_jsonl_layout(both_layouts) -> None:
    s2, s7, v7 = both_layouts
    per_session = (
        "SELECT session_id, count(*), count(*) FILTER (WHERE turn_id IS NOT NULL), max(turn_no) "
        "FROM T(turns/*.parquet') GROUP BY 1 ORDER BY 1"
    )
    # the same turns per conversation (7.0 adds entries to a turn: evidence bodies, call effects)
    assert _rows(s7, per_session) == _rows(s2, per_session)
    assert _rows(s7, "SELECT count(*), sum(entry_count) FROM T(sessions/*.parquet')") == [
        (v7.record["sessions"], v7.record["ledger_entries"])
    ]
    sessions = "SELECT session_id, turn_count FROM T(sessions/*.parquet') ORDER BY 1"
    assert _rows(s7, sessions) == _rows(s2, sessions)


def test_objects_name_the_entries_that_refer_to_them(both_layouts, tmp_path: Path) -> None:
    """Expectation: every ObjectRef field vak's 7.0 entry shapes carry (baseline7.md §8.2: a
    binding's ``interface``, an evidence body's ``body``), read from the decrypted entries as JSON."""
    import json

    from vakaudit.scan.frames7 import ledger_dirs, tenant_keys
    from vakaudit.scan.store7 import chain_key
    from vakaudit.scan.walk import iter_home_files
    from vakaudit.storage import read_segments

    _s2, s7, v7 = both_layouts
    home = Path(v7.out)
    keys = KeyRing({0: v7.keys.kek}, v7.keys.id_key)
    tenants = tenant_keys(home, keys)
    expected: dict[str, set[str]] = {}
    for rel_dir in ledger_dirs(list(iter_home_files(home, layout="g3"))):
        segs = read_segments(home / rel_dir, chain_key(home / rel_dir, rel_dir, tenants))
        for seg in segs.segments:
            name = f"{rel_dir}/{seg.rel_path.rsplit('/', 1)[-1]}"
            for frame in seg.chain.frames:
                entry = json.loads(frame.entry)
                for field in ("interface", "body"):
                    ref = entry.get(field)
                    if isinstance(ref, dict) and "id" in ref:
                        expected.setdefault(ref["id"], set()).add(f"entry:{name}#{frame.index}")
    assert expected
    got = {
        oid: {r for r in refs if r.startswith("entry:")}
        for oid, refs in _rows(s7, "SELECT object_id, referenced_by FROM T(objects/*.parquet')")
    }
    assert {oid: refs for oid, refs in got.items() if refs} == expected


def test_synth_7_0_frames_aggregate_as_the_queries_derive(
    both_layouts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The frame derivation in Python (a home of at most ``HERE_ROWS`` frames) against DuckDB's
    queries (their definition) over the same frames part."""
    import shutil

    import pyarrow.parquet as pq

    from vakaudit.scan import derive

    _s2, s7, _v7 = both_layouts
    got = {}
    for way, rows in (("here", derive.HERE_ROWS), ("duckdb", -1)):
        out = tmp_path / way
        (out / "entries").mkdir(parents=True)
        shutil.copy(s7 / "entries" / "frames7.parquet", out / "entries")
        monkeypatch.setattr(derive, "HERE_ROWS", rows)
        derive.derive_frame_ledgers(out, out / "entries" / "frames7.parquet")
        got[way] = [pq.read_table(out / name / "all.parquet").to_pylist() for name in ("turns", "sessions")]
    assert got["here"] == got["duckdb"] and got["here"][0]
