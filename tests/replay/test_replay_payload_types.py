"""A payload field of the wrong JSON type never crashes a reader: replay names the line, verify flags it.

Regression: an assistant text block whose ``text`` is a number made ``replay`` die with a TypeError in
``text_content``. Property: take the tiny home's ledgers, replace one payload value at a time with a
value of another JSON type, and run replay and verify on the ledger.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hostile_homes import LEDGER, TINY
from vakaudit.errors import CorruptError, LedgerError
from vakaudit.forensics import verify_ledger
from vakaudit.ledger.shape import payload_type_error
from vakaudit.replay import iter_requests

ENVELOPE = {"id", "parent_id", "ts", "prev_hash", "kind", "at_turn"}
OTHERS = [0, 2.5, "s", None, [], [1, "x"], {}, {"a": 1}, True, False]
LEDGERS = sorted(TINY.glob("agents/vak/sessions/*/*.jsonl"))


def _leaves(obj, path=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _leaves(v, (*path, i))
    if path:
        yield path


def _set(obj, path, value) -> None:
    for p in path[:-1]:
        obj = obj[p]
    obj[path[-1]] = value


def test_text_block_whose_text_is_a_number_is_not_replayable_at_its_line(tmp_path) -> None:
    lines = (TINY / LEDGER).read_bytes().split(b"\n")
    n = next(i for i, raw in enumerate(lines) if b'"role":"assistant"' in raw and b'"type":"text"' in raw)
    d = json.loads(lines[n])
    block = next(b for b in d["message"]["content"] if b["type"] == "text")
    block["text"] = 42
    lines[n] = json.dumps(d).encode()
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines))
    try:
        list(iter_requests(path))
    except CorruptError as exc:
        assert exc.line == n + 1
        assert "is number, expected string" in str(exc)
    else:
        raise AssertionError("a text block holding a number replayed as if it were text")


def test_payload_type_error_names_the_field() -> None:
    assert payload_type_error("message", {"message": {"role": "user", "content": [{"type": "text", "text": 1}]}}) == (
        "message.content[0].text is number, expected string")
    assert payload_type_error("activity", {"data": [1]}) == "data is array, expected object"
    assert payload_type_error("receipt", {"attempts": [{"usage": True}]}) == "attempts[0].usage is boolean, expected object"
    assert payload_type_error("message", {"message": {"role": "user", "content": "hi"}}) is None
    assert payload_type_error("turn_card", {"card": {"did": [3]}}) == "card.did[0] is number, expected object"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_any_payload_value_of_another_type_never_crashes_replay_or_verify(tmp_path_factory, data) -> None:
    ledger = data.draw(st.sampled_from(LEDGERS))
    lines = ledger.read_bytes().split(b"\n")
    n = data.draw(st.integers(0, len(lines) - 3))  # not the last line: its successor proves the edit
    d = json.loads(lines[n])
    paths = [p for p in _leaves(d) if p[0] not in ENVELOPE]
    if not paths:
        return
    field = data.draw(st.sampled_from(paths))
    _set(d, field, data.draw(st.sampled_from(OTHERS)))
    edited = json.dumps(d, separators=(",", ":")).encode()
    if edited == lines[n]:
        return  # the drawn value is the one already there (e.g. 0 for 0): nothing was edited
    lines[n] = edited
    path = Path(tmp_path_factory.mktemp("p")) / ledger.name
    path.write_bytes(b"\n".join(lines))
    try:
        list(iter_requests(path))
    except LedgerError as exc:  # not replayable: the error names the line
        assert getattr(exc, "line", None) == n + 1, str(exc)
    report = verify_ledger(path)
    assert any(f.line_no in (n + 1, n + 2) for f in report.findings), [f.to_dict() for f in report.findings]
