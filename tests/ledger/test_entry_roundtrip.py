"""Entry.from_line / to_line against vak's own bytes and the spec's example lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vakaudit.ledger import Entry, EntryParseError
from vakaudit.ledger.entry import parse_envelope
from vakaudit.ledger.jsonenc import dumps_exact

VECTORS = Path(__file__).parent / "vectors"


def _lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return data[:-1].split(b"\n")


def _reserialize_exact(e: Entry) -> bytes:
    """Independent re-serialization through the pure-Python reference encoder."""
    head = [("id", e.id), ("parent_id", e.parent_id), ("ts", e.ts)]
    if e.prev_hash is not None:
        head.append(("prev_hash", e.prev_hash))
    if e.at_turn is not None:
        head.append(("at_turn", e.at_turn))
    head.append(("kind", e.kind))
    parts = [dumps_exact({k: v})[1:-1] for k, v in head] + [
        dumps_exact({k: v})[1:-1] for k, v in e.payload.items()
    ]
    return b"{" + b",".join(parts) + b"}"


@pytest.mark.parametrize("sample", ["basic", "branch"])
def test_vak_sample_lines_round_trip_byte_for_byte(vak_samples: Path, sample: str) -> None:
    lines = _lines(vak_samples / sample / "ledger.jsonl")
    assert len(lines) > 20
    for raw in lines:
        e = Entry.from_line(raw)
        assert e.raw == raw
        fresh = e.replace()  # no raw: to_line must really serialize
        assert fresh.raw is None
        assert fresh.to_line() == raw
        assert e.to_line() == raw
        assert _reserialize_exact(e) == raw


def test_sample_floats_and_escapes_survive(vak_samples: Path) -> None:
    lines = _lines(vak_samples / "basic" / "ledger.jsonl")
    tool_use = next(Entry.from_line(r) for r in lines if b'"floats"' in r and b'"kind":"message"' in r)
    inp = tool_use.message["content"][0]["input"]
    assert inp["floats"][:7] == [0.1, 1e-7, 1e16, 1.5e300, -0.0, 2.5, 100.0]
    assert str(inp["floats"][4]) == "-0.0"
    assert inp["ints"] == [0, -1, 9007199254740993]
    assert inp["query"].endswith("\\ backslash \x01\x1f\t\n\r ✓ 日本語 😀")
    assert list(inp) == ["floats", "ints", "nested", "query"]


def test_spec_chain_lines_round_trip() -> None:
    for raw in _lines(VECTORS / "chain_spec_s3.jsonl"):
        assert Entry.from_line(raw).replace().to_line() == raw


EXPECTED = json.loads((VECTORS / "entries.expected.json").read_text())["lines"]


@pytest.mark.parametrize("n", range(len(EXPECTED)))
def test_entry_vectors(n: int) -> None:
    raw = _lines(VECTORS / "entries.jsonl")[n]
    exp = EXPECTED[n]
    e = Entry.from_line(raw)
    assert e.kind == exp["kind"]
    assert e.id == exp["id"]
    assert e.prev_hash == exp["prev_hash"]
    assert e.at_turn == exp["at_turn"]
    if "parent_id" in exp:
        assert e.parent_id == exp["parent_id"]
    assert list(e.payload) == exp["payload_keys"]
    if "work_event_kind" in exp:
        assert e.work_event["kind"] == exp["work_event_kind"]
    if "compaction_shape" in exp:
        assert e.compaction_shape == exp["compaction_shape"]
    if "activity_kind" in exp:
        assert e.activity_kind == exp["activity_kind"]
    if "content" in exp:
        assert e.payload["content"] == exp["content"]
    if "known_kind" in exp:
        assert e.is_known_kind is exp["known_kind"]
    if "control" in exp:
        assert e.control == exp["control"] and e.is_control and e.role == exp["role"]
    assert e.replace().to_line() == raw


def test_work_line_keeps_both_kind_keys() -> None:
    raw = _lines(VECTORS / "entries.jsonl")[0]
    e = Entry.from_line(raw)
    assert e.kind == "work"
    assert e.payload["kind"] == {
        "kind": "item_status_changed",
        "item_id": "one",
        "from": "proposed",
        "to": "ready",
        "attempt": 0,
        "reason": "dependencies satisfied",
    }
    out = e.replace().to_line()
    assert out.count(b'"kind":') == 3  # envelope tag, event object, event's own tag
    assert out.index(b'"kind":"work"') < out.index(b'"kind":{"kind":"item_status_changed"')
    assert out == raw


def test_new_entry_serializes_in_envelope_order_without_absent_options() -> None:
    e = Entry("i1", None, "2026-09-20T10:11:12Z", "child_run", {"status": "completed"})
    assert (
        e.to_line()
        == b'{"id":"i1","parent_id":null,"ts":"2026-09-20T10:11:12Z","kind":"child_run","status":"completed"}'
    )
    e2 = e.replace(prev_hash="ab", at_turn="t1", parent_id="p")
    assert e2.to_line() == (
        b'{"id":"i1","parent_id":"p","ts":"2026-09-20T10:11:12Z","prev_hash":"ab","at_turn":"t1",'
        b'"kind":"child_run","status":"completed"}'
    )


def test_to_line_follows_payload_not_raw() -> None:
    raw = _lines(VECTORS / "chain_spec_s3.jsonl")[1]
    e = Entry.from_line(raw)
    changed = e.replace(payload={**e.payload, "meta": {"control": "stop_hook"}})
    assert changed.to_line() == raw[:-1] + b',"meta":{"control":"stop_hook"}}'


def test_missing_parent_id_reads_as_null_and_is_written_back() -> None:
    e = Entry.from_line(b'{"id":"a","ts":"2026-01-01T00:00:00Z","kind":"goal","goal_id":"g"}')
    assert e.parent_id is None
    assert (
        e.to_line() == b'{"id":"a","parent_id":null,"ts":"2026-01-01T00:00:00Z","kind":"goal","goal_id":"g"}'
    )


def test_trailing_cr_is_dropped_like_vaks_reader() -> None:
    raw = _lines(VECTORS / "chain_spec_s3.jsonl")[0]
    assert Entry.from_line(raw + b"\r").raw == raw


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"not json",
        b"[1,2]",
        b'{"id":"a","parent_id":null,"ts":"2026-01-01T00:00:00Z"',  # torn
        b'{"parent_id":null,"ts":"2026-01-01T00:00:00Z","kind":"goal"}',  # no id
        b'{"id":"a","parent_id":null,"ts":"2026-01-01T00:00:00Z"}',  # no kind
        b'{"id":"a","parent_id":null,"ts":"yesterday","kind":"goal"}',  # ts not RFC 3339
        b'{"id":1,"parent_id":null,"ts":"2026-01-01T00:00:00Z","kind":"goal"}',
        b'{"id":"a","parent_id":5,"ts":"2026-01-01T00:00:00Z","kind":"goal"}',
        b'{"id":"a","parent_id":null,"ts":"2026-01-01T00:00:00Z","prev_hash":1,"kind":"goal"}',
        b'{"id":"a","parent_id":null,"ts":"2026-01-01T00:00:00Z","kind":"goal","x":NaN}',
        b'{"id":"a","parent_id":null,"ts":"2026-01-01T00:00:00Z","kind":"goal","x":"\\ud800"}',  # lone surrogate
        b'{"id":"a","parent_id":null,"ts":"2026-01-01T00:00:00Z","kind":"go\xffal"}',  # invalid UTF-8
    ],
)
def test_invalid_entries_raise_entry_parse_error(raw: bytes) -> None:
    with pytest.raises(EntryParseError):
        Entry.from_line(raw)
    assert issubclass(EntryParseError, ValueError)


def test_lazy_payload_decodes_on_demand(vak_samples: Path) -> None:
    from vakaudit.ledger.entry import parse_envelope

    raw = _lines(vak_samples / "basic" / "ledger.jsonl")[1]
    env, _ = parse_envelope(raw)
    e = Entry.lazy(raw, env)
    assert not e.payload_loaded
    assert e.kind == "turn_capabilities_bound" and e.prev_hash is not None
    assert e.payload["epoch"] == 1
    assert e.payload_loaded
    e.release_payload()
    assert not e.payload_loaded
    assert e.to_line() == raw


def test_a_work_line_whose_event_is_a_string_keeps_work_as_its_kind() -> None:
    # the first of the two kind keys is the envelope's tag whatever the type of the second (orjson
    # alone would keep the last one)
    raw = b'{"id":"w","parent_id":null,"ts":"2026-01-01T00:00:00Z","kind":"work","kind":"tool_call","x":1}'
    env, payload = parse_envelope(raw)
    assert env[5] == "work" and payload == {"kind": "tool_call", "x": 1}
