"""The turn vocabulary (vakaudit.ledger.vocab) against hand-computed values, and every reader of it.

The directive rule is replay.md §6.1/§13's (a user message, no control tag, a text block, no
tool_result block); the turn numbering is the ``entries`` table's (docs/tables.md: prep entries
carry the number of the turn they prepare). The compiled scanner is handed the prep kinds as data:
for every kind vak writes, the compiled and the reference reader number a ledger's turns alike and
as computed here by hand.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pytest

import vakaudit.artifacts.session_ledger as sl
from vakaudit._native import linescan
from vakaudit.ledger.entry import KNOWN_KINDS
from vakaudit.ledger.projection import latest_directive_entry_id
from vakaudit.ledger.vocab import PREP_KINDS, is_directive, is_directive_message, turn_step
from vakaudit.replay.request import cache_boundary

TEXT = {"type": "text", "text": "hi"}
RESULT = {"type": "tool_result", "tool_use_id": "t", "content": "x"}
USE = {"type": "tool_use", "id": "t", "name": "n", "input": {}}

# (message, control tag, is a directive), by hand from replay.md §6.1
MESSAGES = [
    ({"role": "user", "content": [TEXT]}, None, True),
    ({"role": "user", "content": [TEXT, {"type": "image"}]}, None, True),
    ({"role": "user", "content": [TEXT]}, "compaction", False),
    ({"role": "user", "content": [TEXT, RESULT]}, None, False),
    ({"role": "user", "content": [RESULT]}, None, False),
    ({"role": "user", "content": []}, None, False),
    ({"role": "user", "content": "hi"}, None, False),
    ({"role": "user"}, None, False),
    ({"role": "assistant", "content": [TEXT]}, None, False),
    ({"role": "assistant", "content": [TEXT, USE]}, None, False),
]


def _entry(kind: str, payload: dict, ident: str = "e") -> SimpleNamespace:
    return SimpleNamespace(kind=kind, payload=payload, id=ident, at_turn=None)


@pytest.mark.parametrize(("message", "control", "expected"), MESSAGES)
def test_directive_rule_everywhere(message: dict, control: str | None, expected: bool) -> None:
    meta = {} if control is None else {"control": control}
    entry = _entry("message", {"message": message, "meta": meta})
    assert is_directive(entry) is expected
    assert is_directive_message(message, control is not None) is expected
    assert (latest_directive_entry_id([entry]) == "e") is expected
    if control is None:  # a request message carries no meta: the cache boundary is the directive's index
        assert (cache_boundary([{"role": "assistant", "content": [TEXT]}, message]) == 1) is expected
    # the scan's row facts
    assert sl.payload_facts("message", {"message": message, "meta": meta})[2] is expected
    assert is_directive(_entry("intent", {"message": message})) is False


def test_turn_step_by_hand() -> None:
    # header, prep, intent, directive, assistant, intent (open turn), prep, directive
    seq = [
        ("header", False, "h", None, None),
        ("turn_capabilities_bound", False, "b1", 1, None),
        ("intent", False, "i1", 1, None),
        ("message", True, "d1", 1, "d1"),
        ("message", False, "a1", 1, "d1"),
        ("intent", False, "i2", 1, "d1"),
        ("goal_update", False, "g", 2, None),
        ("message", True, "d2", 2, "d2"),
    ]
    state = (0, None, False)
    for kind, directive, ident, want_no, want_id in seq:
        *new, no, tid = turn_step(*state, kind, directive, ident)
        state = tuple(new)
        assert (no, tid) == (want_no, want_id), ident
    # before the first directive an entry has no turn
    assert turn_step(0, None, False, "receipt", None, "r")[3:] == (None, None)


def _chained(payloads: list[bytes]) -> bytes:
    out, prev = [], None
    for i, members in enumerate(payloads):
        env = b'{"id":"e%d","parent_id":null,"ts":"2026-01-01T00:00:0%dZ",' % (i, i % 10)
        if prev is not None:
            env += b'"prev_hash":"' + prev.encode() + b'",'
        line = env + members
        out.append(line)
        prev = hashlib.sha256(line).hexdigest()
    return b"\n".join(out) + b"\n"


DIRECTIVE = b'"kind":"message","message":{"role":"user","content":[{"type":"text","text":"go"}]},"meta":{}}'
ANSWER = b'"kind":"message","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]},"meta":{}}'
INTENT = b'"kind":"intent","reading":{}}'


def _turn_columns(path: Path, monkeypatch: pytest.MonkeyPatch, *, compiled: bool) -> list[tuple]:
    with monkeypatch.context() as m:
        if not compiled:
            m.setattr(sl, "_EntryCols", None)
        s = sl.LedgerScanner("agents/vak/sessions/ws/s1.jsonl", emit=lambda f: None)
        with path.open("rb") as f:
            batches = list(s.scan(f, f.seek(0, 2), native=None if compiled else False))
            table = pa.Table.from_batches(batches, schema=sl.ENTRIES_SCHEMA)
    return list(
        zip(
            table["kind"].to_pylist(), table["turn_no"].to_pylist(), table["turn_id"].to_pylist(), strict=True
        )
    )


@pytest.mark.parametrize("kind", sorted(KNOWN_KINDS - {"work", "message"}))
def test_every_kind_is_numbered_alike_compiled_and_reference(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = b'"kind":"%s"}' % kind.encode()
    path = tmp_path / "s1.jsonl"
    path.write_bytes(_chained([DIRECTIVE, ANSWER, body, INTENT, DIRECTIVE]))
    prep = kind in PREP_KINDS
    if kind == "header":
        mid = [("header", None, None), ("intent", 1, "e0")]
    elif kind == "intent":
        mid = [("intent", 1, "e0"), ("intent", 1, "e0")]
    elif prep:
        mid = [(kind, 2, None), ("intent", 2, None)]
    else:
        mid = [(kind, 1, "e0"), ("intent", 1, "e0")]
    want = [("message", 1, "e0"), ("message", 1, "e0"), *mid, ("message", 2, "e4")]
    assert _turn_columns(path, monkeypatch, compiled=False) == want
    if linescan is not None:
        assert _turn_columns(path, monkeypatch, compiled=True) == want
