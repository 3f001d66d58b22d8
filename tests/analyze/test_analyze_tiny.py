"""analyze on the tiny homes (synthetic, and committed in sample_homes/tiny) against values computed
here by another route.

The expectations below read the home's files with plain ``json`` and ``os`` (no scan, no DuckDB):
every ledger line is parsed, counted and summed in Python, and compared with what the SQL over the
scan's Parquet reports.
"""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from pathlib import Path

import pytest

ENVELOPE = ("id", "parent_id", "ts", "prev_hash", "at_turn")


def _first_kind(pairs: list[tuple[str, object]]) -> dict:
    d: dict = {}
    for k, v in pairs:
        if k == "kind" and "kind" in d:
            d["kind#2"] = v  # work entries: the second kind is the event (ledger.md §2.4)
        else:
            d[k] = v
    return d


def _ledger_files(home: Path) -> list[Path]:
    return sorted(p for p in home.rglob("*.jsonl") if p.parent.parent.name == "sessions" and p.is_file())


class Hand:
    """Figures of a home computed from its files with plain Python."""

    def __init__(self, home: Path) -> None:
        self.sessions = 0
        self.entries = 0
        self.kinds: Counter[str] = Counter()
        self.kind_bytes: Counter[str] = Counter()
        self.roles: Counter[str] = Counter()
        self.tool_result_blocks = 0
        self.ledger_bytes = 0
        self.repeated_bindings = 0
        self.repeated_binding_bytes = 0
        for path in _ledger_files(home):
            self.sessions += 1
            self.ledger_bytes += path.stat().st_size
            prev_binding: dict | None = None
            for raw in path.read_bytes().split(b"\n"):
                if not raw.strip():
                    continue
                try:
                    obj = json.loads(raw, object_pairs_hook=_first_kind)
                except ValueError:
                    continue
                size = len(raw) + 1
                self.entries += 1
                kind = obj["kind"]
                self.kinds[kind] += 1
                self.kind_bytes[kind] += size
                if kind == "message":
                    msg = obj["message"]
                    self.roles[msg["role"]] += 1
                    self.tool_result_blocks += sum(
                        1
                        for b in msg.get("content", [])
                        if isinstance(b, dict) and b.get("type") == "tool_result"
                    )
                if kind == "turn_capabilities_bound":
                    body = {k: v for k, v in obj.items() if k not in ENVELOPE and k != "kind"}
                    if body == prev_binding:
                        self.repeated_bindings += 1
                        self.repeated_binding_bytes += size
                    prev_binding = body
        self.turns = self.kinds["intent"]
        self.home_bytes = 0
        self.home_files = 0
        for root, _dirs, files in os.walk(home):
            for name in files:
                p = Path(root, name)
                if not p.is_symlink():
                    self.home_bytes += p.stat().st_size
                    self.home_files += 1
        self.routing_rows = sum(
            sum(1 for line in p.read_bytes().split(b"\n") if line.strip())
            for p in home.rglob("routing-evidence.jsonl")
        )
        self.memory_notes = sum(
            sum(1 for line in p.read_text(encoding="utf-8").splitlines() if line.startswith("## 20"))
            for p in list(home.rglob("MEMORY.md")) + list(home.rglob("USER.md"))
        )


@pytest.fixture(scope="module", params=["synth", "sample_homes/tiny"])
def case(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    """(home, analysis): the synthetic tiny home built for this run, and the committed sample home."""
    if request.param == "synth":
        return request.getfixturevalue("tiny_home"), request.getfixturevalue("tiny_analysis")
    from vakaudit.analyze import analyze
    from vakaudit.scan import scan_home

    home = Path(__file__).resolve().parents[2] / "sample_homes" / "tiny"
    if not home.is_dir():
        pytest.fail(f"{home} is missing: the committed tiny sample home is part of the repository")
    out = tmp_path_factory.mktemp("sample-tiny") / "scan"
    scan_home(home, out=out, jobs=1)
    return home, analyze(out)


@pytest.fixture(scope="module")
def hand(case) -> Hand:
    return Hand(case[0])


@pytest.fixture(scope="module")
def analysis(case):
    return case[1]


def test_overview_matches_plain_python(analysis, hand: Hand) -> None:
    ov = analysis["overview"].one()
    assert ov["sessions"] == hand.sessions
    assert ov["turns"] == hand.turns > 0
    assert ov["entries"] == hand.entries
    assert ov["user_messages"] == hand.roles["user"]
    assert ov["assistant_messages"] == hand.roles["assistant"]
    assert ov["tool_result_blocks"] == hand.tool_result_blocks
    assert ov["ledger_bytes"] == hand.ledger_bytes
    assert ov["home_bytes"] == hand.home_bytes
    assert ov["home_files"] == hand.home_files


def test_bytes_by_kind_and_shares(analysis, hand: Hand) -> None:
    rows = {r["kind"]: r for r in analysis["ledger_bytes_by_kind"].rows}
    assert {k: r["entry_count"] for k, r in rows.items()} == dict(hand.kinds)
    assert {k: r["size_bytes"] for k, r in rows.items()} == dict(hand.kind_bytes)
    total = sum(hand.kind_bytes.values())
    for k, r in rows.items():
        assert r["share"] == pytest.approx(hand.kind_bytes[k] / total, rel=1e-5)
    assert sum(r["share"] for r in rows.values()) == pytest.approx(1.0, rel=1e-5)


def test_disk_shares_add_up_to_the_home(analysis, hand: Hand) -> None:
    rows = analysis["disk_by_kind"].rows
    assert sum(r["size_bytes"] for r in rows) == hand.home_bytes
    assert sum(r["file_count"] for r in rows) == hand.home_files
    assert sum(r["share"] for r in rows) == pytest.approx(1.0, rel=1e-5)


def test_per_turn_constants_are_totals_over_intents(analysis, hand: Hand) -> None:
    row = next(r for r in analysis["per_turn"].rows if r["scope"] == "all")
    assert row["entries_per_turn"] == pytest.approx(hand.entries / hand.turns, rel=1e-5)
    assert row["bytes_per_turn"] == pytest.approx(sum(hand.kind_bytes.values()) / hand.turns, rel=1e-5)
    assert row["ledger_barriers_per_turn"] == pytest.approx(hand.entries / hand.turns, rel=1e-5)
    split = {r["scope"]: r["turns"] for r in analysis["per_turn"].rows}
    assert split["with_tool_calls"] + split.get("without_tool_calls", 0) == split["all"]
    hist = analysis["per_turn_histogram"].rows
    assert sum(r["turns"] for r in hist) == split["all"]


def test_barriers_follow_declared_disciplines(analysis, hand: Hand) -> None:
    rows = {r["artifact"]: r for r in analysis["barriers_per_turn"].rows}
    # the ledger: one sync_data per entry appended (spec ledger.md §2.1)
    assert rows["session_ledger"]["barriers"] == hand.entries
    # memory notes: append + sync_data each (home.md §7.1)
    if hand.memory_notes:
        assert rows["memory"]["barriers"] == hand.memory_notes
    total = sum(r["barriers"] for r in rows.values())
    assert analysis.headline["barriers_per_turn"] == pytest.approx(total / hand.turns, rel=1e-5)


def test_sidecar_rows_per_turn(analysis, hand: Hand) -> None:
    rows = {r["artifact"]: r for r in analysis["sidecar_growth"].rows}
    assert rows["routing_evidence"]["rows"] == hand.routing_rows
    assert rows["routing_evidence"]["rows_per_turn"] == pytest.approx(
        hand.routing_rows / hand.turns, rel=1e-5
    )
    assert "session_ledger" not in rows


def test_repeated_bindings_found_by_comparing_parsed_bodies(analysis, hand: Hand) -> None:
    dup = defaultdict(int)
    dup_bytes = defaultdict(int)
    for r in analysis["duplication"].rows:
        dup[r["category"]] += r["entry_count"]
        dup_bytes[r["category"]] += r["repeated_bytes"]
    assert dup["binding_unchanged_since_previous_turn"] == hand.repeated_bindings
    assert dup_bytes["binding_unchanged_since_previous_turn"] == hand.repeated_binding_bytes
    w = analysis["ledger_without_repeated_bindings"].one()
    assert w["repeated_bindings"] == hand.repeated_bindings
    assert w["repeated_binding_bytes"] == hand.repeated_binding_bytes
    assert w["binding_share"] == pytest.approx(
        hand.kind_bytes["turn_capabilities_bound"] / sum(hand.kind_bytes.values()), rel=1e-5
    )
    # each removed binding leaves a reference line: smaller than what it replaces, never free
    assert hand.repeated_bindings == 0 or 81 < w["mean_reference_line_bytes"] < (
        hand.repeated_binding_bytes / hand.repeated_bindings
    )
    assert w["ledger_bytes_without"] < w["ledger_bytes"] or hand.repeated_bindings == 0


def test_projection_is_labelled_and_uses_measured_per_turn_bytes(analysis, hand: Hand) -> None:
    p = analysis.projection
    assert p.estimate and p.method.startswith("estimate:")
    ledger = next(r for r in p.rows if r.artifact == "session_ledger")
    assert ledger.per_turn_bytes == pytest.approx(hand.ledger_bytes / hand.turns, rel=1e-5)
    assert ledger.projected_bytes["1000"] == pytest.approx(hand.ledger_bytes / hand.turns * 1000, rel=1e-5)
    assert "projection" in analysis.provenance
    assert all(m.measured for m in analysis.metrics.values())
