"""``entry_fields`` of a 7.0 home: the bytes of each payload member of every readable entry.

Expectations are independent of the scan: the synth's own record of the plaintext bytes and frames
it wrote per entry kind, the storage writer's entries, and a fresh scan next to an incremental one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import orjson

from vakaudit.analyze import analyze
from vakaudit.artifacts.session_ledger import ENVELOPE_FIELD
from vakaudit.scan import scan_home
from vakaudit.storage import GENESIS, KeyRing
from vakaudit.storage.writer import ChainWriter

SAMPLES = Path(__file__).resolve().parents[2] / "sample_homes"
LEDGERS = "agents/vak/sessions/spc_0199c3a0-7a00-7000-8000-00000000a001"


def _by_kind(res) -> dict[str, dict[str, int]]:  # noqa: ANN001 - a ScanResult
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in res.table("entry_fields").to_pylist():
        out[r["kind"]][r["field"]] += r["size_bytes"]
        out[r["kind"]]["(entries)"] += r["entry_count"] if r["field"] == ENVELOPE_FIELD else 0
    return out


def test_fields_add_up_to_what_the_synth_wrote_per_kind(tmp_path: Path) -> None:
    home, keys, record = tmp_path / "home", tmp_path / "keys.json", tmp_path / "record.json"
    subprocess.run([sys.executable, "-m", "vakaudit", "synth", str(home), "--layout", "v7", "--keys-out", str(keys),
                    "--record", str(record), "--no-fsync", "-q"], check=True, capture_output=True)
    rec = json.loads(record.read_text(encoding="utf-8"))["entry_kinds"]
    res = scan_home(home, out=tmp_path / "scan", keys=KeyRing.from_file(keys))
    got = _by_kind(res)
    assert set(got) == set(rec)
    for kind, r in rec.items():
        assert sum(v for f, v in got[kind].items() if f != "(entries)") == r["plain_bytes"], kind
        assert got[kind]["(entries)"] == r["frames"], kind
    assert got["message"]["message"] > 0 and got["intent"][ENVELOPE_FIELD] > 0
    rows = analyze(res)["ledger_bytes_by_field"].rows
    shares = defaultdict(float)
    for row in rows:
        shares[row["kind"]] += row["share_of_kind"]
    assert all(abs(s - 1.0) < 1e-4 for s in shares.values()), shares  # of the kind plaintext (rounded figures)
    # locked, nothing is readable: no rows, and the metric says why
    locked = scan_home(home, out=tmp_path / "locked")
    assert locked.table("entry_fields").num_rows == 0
    assert "scan with --keys" in analyze(locked)["ledger_bytes_by_field"].measured


def test_a_plaintext_ledger_rescanned_counts_every_entry_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(SAMPLES / "v7", home)
    conv = home / LEDGERS / "0199c3a0-7b00-7000-8000-0000000000cc"  # no KEY: its frames are plaintext
    conv.mkdir()
    first = [b'{"id":"e%d","ts":"2026-10-09T10:00:0%dZ","kind":"message","role":"user","content":"%s"}' % (i, i, b"x" * i) for i in range(4)]
    w = ChainWriter(GENESIS, compress="zstd")
    w.extend(first)
    (conv / "seg-00000001.log").write_bytes(w.data)
    scan_home(home, out=tmp_path / "out", jobs=1)
    more = [b'{"id":"f%d","ts":"2026-10-09T10:01:0%dZ","kind":"message","role":"assistant","content":"y","model":"m"}' % (i, i) for i in range(3)]
    w2 = ChainWriter(w.head, compress="zstd")
    w2.offset = len(w.data)
    w2.extend(more)
    with (conv / "seg-00000001.log").open("ab") as fh:
        fh.write(w2.data)
    again = scan_home(home, out=tmp_path / "out", jobs=1)
    # readable entries' turns depend on the ones before them: the directory is read whole again
    assert {r["rel_path"]: r["scan_state"] for r in again.table("files").to_pylist()}[
        f"{LEDGERS}/{conv.name}/seg-00000001.log"] == "full"
    fresh = scan_home(home, out=tmp_path / "fresh", jobs=1)
    assert sorted(again.table("entry_fields").to_pylist(), key=str) == sorted(
        fresh.table("entry_fields").to_pylist(), key=str)
    got = _by_kind(again)["message"]
    entries = [orjson.loads(e) for e in first + more]
    assert got["(entries)"] == 7
    assert sum(v for f, v in got.items() if f != "(entries)") == sum(len(e) for e in first + more)
    # ,"role":"user" is 14 bytes, ,"role":"assistant" 19; "model" only on the three appended
    assert got["role"] == 4 * 14 + 3 * 19
    assert got["model"] == 3 * len(b',"model":"m"') and sum("model" in e for e in entries) == 3
