"""``entries.commit_point`` on a 7.0 home: which frames vak's group commit syncs after (baseline7.md
§8.3), read from hand-written entries whose answer is known, and the ``ledger_syncs`` view built on it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson

from vakaudit.analyze import open_scan
from vakaudit.scan import scan_home
from vakaudit.storage import GENESIS
from vakaudit.storage.writer import ChainWriter

SAMPLES = Path(__file__).resolve().parents[2] / "sample_homes"
LEDGERS = "agents/vak/sessions/spc_0199c3a0-7a00-7000-8000-00000000a001"

# (entry, does vak sync right after it?) - the rules of baseline7.md §8.3, written out by hand
ENTRIES: list[tuple[dict, bool]] = [
    ({"kind": "header", "contract": {"app_version": "7.0.0"}}, True),
    ({"kind": "intent", "text": "do it"}, False),
    ({"kind": "message", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}}, True),
    ({"kind": "activity", "activity_kind": "run", "label": "admitted", "data": {"request_id": "r-1"}}, True),
    ({"kind": "activity", "activity_kind": "run", "label": "working", "data": {"step": 1}}, False),
    ({"kind": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}}, False),
    ({"kind": "message", "message": {"role": "user", "content": "stop"}, "meta": {"control": "steer"}}, False),
    # a control that is not a string is still a control: no sync
    ({"kind": "message", "message": {"role": "user", "content": "x"}, "meta": {"control": {"k": 1}}}, False),
    ({"kind": "call_effect", "call_id": "c1"}, True),
    ({"kind": "receipt", "purpose": "main", "provider": "p", "model": "m"}, False),
    # an activity that mentions request_id elsewhere than in data does not admit a request
    ({"kind": "activity", "activity_kind": "run", "label": "request_id", "data": {}}, False),
    ({"kind": "turn_card", "card": {}}, True),
    ({"kind": "presentation", "text": "bye"}, False),
]


def test_commit_points_and_group_commit_syncs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(SAMPLES / "v7", home)
    conv = home / LEDGERS / "0199c3a0-7b00-7000-8000-0000000000cd"  # no KEY: plaintext frames
    conv.mkdir()
    lines = []
    for i, (e, _) in enumerate(ENTRIES):
        env = {"id": f"e{i}", "ts": f"2026-10-09T10:00:{i:02d}Z", **e}
        lines.append(orjson.dumps(env))
    w = ChainWriter(GENESIS, compress="zstd")
    w.extend(lines)
    (conv / "seg-00000001.log").write_bytes(w.data)
    res = scan_home(home, out=tmp_path / "out", jobs=1)
    rel = f"{LEDGERS}/{conv.name}/seg-00000001.log"
    got = [r["commit_point"] for r in res.table("entries").to_pylist() if r["rel_path"] == rel]
    assert got == [want for _, want in ENTRIES]
    # every JSONL-era row leaves it null
    con = open_scan(res.out)
    try:
        assert con.execute("SELECT count(*) FROM entries WHERE segment IS NULL AND commit_point IS NOT NULL"
                           ).fetchone()[0] == 0
        # this conversation alone, the view's rules by hand: 4 commit points besides the admission
        # (header, user message, call_effect, turn_card), 1 admission, and its last frame (a
        # presentation) leaves a tail synced when the writer is dropped: 6 syncs
        con.execute(f"CREATE OR REPLACE VIEW entries AS SELECT * FROM {res.sources()['entries']} WHERE rel_path = '{rel}'")
        row = con.execute("SELECT commits, admitted, tails, seals, syncs FROM ledger_syncs").fetchone()
    finally:
        con.close()
    assert row == (4, 1, 1, 0, 6)
