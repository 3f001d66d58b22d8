"""Workspace key (FNV-1a, ledger.md §1.2), session paths, ids and timestamps."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from vakaudit.ledger import agent_sessions_home, format_ts, new_uuid7, parse_ts, session_path, workspace_key
from vakaudit.ledger.ids import uuid7_from

VECTORS = json.loads((Path(__file__).parent / "vectors" / "fnv1a.json").read_text())["vectors"]


@pytest.mark.parametrize("case", VECTORS, ids=[v["path"] or "<empty>" for v in VECTORS])
def test_fnv1a_spec_vectors(case: dict) -> None:
    assert workspace_key(case["path"]) == case["key"]
    assert workspace_key(case["path"].encode()) == case["key"]


def test_fnv1a_hand_computed_single_byte() -> None:
    # (0xcbf29ce484222325 ^ 0x61) * 0x100000001b3 mod 2^64, computed by hand for "a".
    assert workspace_key("a") == f"{((0xCBF29CE484222325 ^ 0x61) * 0x100000001B3) % 2**64:016x}"
    assert workspace_key("a") == "af63dc4c8601ec8c"


def test_invalid_utf8_is_hashed_as_replacement_character() -> None:
    # One invalid byte becomes U+FFFD (EF BF BD), like Rust's to_string_lossy.
    assert workspace_key(b"/tmp/\xff") == workspace_key("/tmp/\ufffd")
    assert workspace_key("/tmp/\udcff") == workspace_key("/tmp/\ufffd")  # surrogate-escaped fs path


def test_no_normalisation_of_the_path() -> None:
    assert workspace_key("/tmp/proj") != workspace_key("/tmp/proj/")
    assert workspace_key("/tmp/./proj") != workspace_key("/tmp/proj")


def test_session_paths_both_layouts(tmp_path: Path) -> None:
    assert (
        session_path(tmp_path, "/tmp/proj", "s-1") == tmp_path / "sessions" / "2599eb06cf360587" / "s-1.jsonl"
    )
    agent_home = agent_sessions_home(tmp_path)
    assert agent_home == tmp_path / "agents" / "vak"
    assert session_path(agent_home, "/tmp/proj", "s-1") == (
        tmp_path / "agents" / "vak" / "sessions" / "2599eb06cf360587" / "s-1.jsonl"
    )
    assert agent_sessions_home(tmp_path, "helper") == tmp_path / "agents" / "helper"


def test_timestamps_use_chrono_autosi_digits() -> None:
    base = 1_789_899_072 * 10**9  # 2026-09-20T10:11:12Z
    assert format_ts(base) == "2026-09-20T10:11:12Z"
    assert format_ts(base + 120_000_000) == "2026-09-20T10:11:12.120Z"
    assert format_ts(base + 453_020_000) == "2026-09-20T10:11:12.453020Z"
    assert format_ts(base + 453_020_163) == "2026-09-20T10:11:12.453020163Z"
    assert format_ts(base + 500_000_000) == "2026-09-20T10:11:12.500Z"


def test_parse_ts_accepts_offsets_and_any_fraction() -> None:
    base = 1_789_899_072 * 10**9
    assert parse_ts("2026-09-20T10:11:12Z") == base
    assert parse_ts("2026-09-20T10:11:12.5Z") == base + 500_000_000
    assert parse_ts("2026-09-20T12:11:12.345678901+02:00") == base + 345_678_901
    with pytest.raises(ValueError):
        parse_ts("yesterday")


def test_uuid7_layout() -> None:
    u = uuid7_from(0x0199A8C24B10, bytes(range(10)))
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", u)
    assert u.startswith("0199a8c2-4b10-7")
    fresh = {new_uuid7() for _ in range(100)}
    assert len(fresh) == 100
    assert all(len(x) == 36 and x[14] == "7" for x in fresh)
