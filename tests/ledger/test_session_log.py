"""SessionLog against vak's own outputs and the session_log.rs acceptance lines (core part)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from vakaudit.errors import LedgerError
from vakaudit.ledger import CorruptError, Entry, ExistsError, LockedError, SessionLog, line_digest

HEADER = {
    "session_id": "s-test",
    "created_at": "2026-09-20T10:11:12Z",
    "cwd": "/tmp/proj",
    "contract": {
        "app_version": "3.5.0",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "route_ladder": [],
        "route_objective": "",
        "route_annotations": [],
        "system_prompt": "You are Vak.",
        "permission_mode": "workspace-write",
        "capabilities": [],
        "prompt_layers": [],
    },
}


def _text(role: str, text: str) -> dict:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def _usage(i: int, o: int) -> dict:
    return {"model": "m", "stop_reason": "end_turn", "usage": {"input_tokens": i, "output_tokens": o}}


class _Clock:
    def __init__(self) -> None:
        self.t = 1_789_899_072 * 10**9

    def __call__(self) -> int:
        self.t += 1_000_000
        return self.t


# -- vak's own ledgers ---------------------------------------------------------------------------


@pytest.mark.parametrize("sample", ["basic", "branch"])
def test_open_read_only_matches_vak(vak_samples: Path, sample: str) -> None:
    exp = json.loads((vak_samples / sample / "expected.json").read_text())
    log = SessionLog.open_read_only(vak_samples / sample / "ledger.jsonl")
    assert len(log.entries) == exp["entries"]
    assert log.warnings == exp["warnings"]
    assert [e.id for e in log.chain_to_root()] == exp["chain_to_root"]
    assert log.tail_id == exp["tail_id"]
    assert log.total_usage() == exp["total_usage"]
    assert log.derive_messages() == exp["derive_messages"]
    assert log.generation == "g3"  # app_version "oracle": the packet-era code that wrote them
    assert log.header.payload["contract"]["model"] == "oracle-model"
    with pytest.raises(LockedError):
        log.append_message(_text("user", "x"))


def test_branch_sample_in_process_view(vak_samples: Path, tmp_path: Path) -> None:
    """Replaying vak's branch_at on the written file gives vak's in-memory view after branching."""
    exp = json.loads((vak_samples / "branch" / "expected.json").read_text())["in_process_after_branch"]
    p = tmp_path / "ledger.jsonl"
    shutil.copyfile(vak_samples / "branch" / "ledger.jsonl", p)
    with SessionLog.open(p, fsync=False) as log:
        assert [e.id for e in log.chain_to_root()] == exp["in_process_chain_to_root"]
        assert log.total_usage() == exp["in_process_total_usage"]
        log.branch_at(exp["branch_point"])
        assert log.tail_id == exp["branch_point"]
        assert log.chain_to_root()[-1].id == exp["branch_point"]
        assert exp["t1"] in log and exp["t2b"] in log


def test_lines_are_not_decoded_on_open(vak_samples: Path) -> None:
    log = SessionLog.open_read_only(vak_samples / "basic" / "ledger.jsonl")
    assert not any(e.payload_loaded for e in log.entries)
    raws = (vak_samples / "basic" / "ledger.jsonl").read_bytes()[:-1].split(b"\n")
    assert [e.raw for e in log.entries] == raws
    assert log.line_nos == list(range(1, len(raws) + 1))


# -- session_log.rs (core lines) ------------------------------------------------------------------


def test_create_two_messages_reopen(tmp_path: Path) -> None:
    p = tmp_path / "deep" / "s-test.jsonl"
    with SessionLog.create(p, HEADER, clock=_Clock(), fsync=False) as log:
        log.append_message(_text("user", "hi"))
        log.append_message(_text("assistant", "hello"), {"usage": {"input_tokens": 3, "output_tokens": 5}})
    log = SessionLog.open_read_only(p)
    assert len(log.entries) == 3
    assert log.warnings == []
    assert log.total_usage() == {"input_tokens": 3, "output_tokens": 5}
    assert log.header.payload["contract"]["model"] == "claude-sonnet-4-5"
    assert len(log.derive_messages()) == 2
    first = p.read_bytes().split(b"\n")[0]
    assert (
        first.startswith(b'{"id":"')
        and b'"parent_id":null,"ts":"2026-09-20T10:11:12.001Z","kind":"header"' in first
    )


def test_append_defaults_parent_to_tail_and_links_prev_hash(tmp_path: Path) -> None:
    ids = iter(f"id-{i}" for i in range(10))
    p = tmp_path / "s.jsonl"
    with SessionLog.create(p, HEADER, clock=_Clock(), new_id=lambda: next(ids), fsync=False) as log:
        e = log.append_message(_text("user", "hi"))
        assert e.parent_id == "id-0" and e.id == "id-1"
        root = log.append("goal", {"goal_id": "g"}, parent_id=None, ts="2026-01-01T00:00:00Z", entry_id="x")
        assert root.parent_id is None and root.ts == "2026-01-01T00:00:00Z"
    raws = p.read_bytes()[:-1].split(b"\n")
    assert [Entry.from_line(r).prev_hash for r in raws] == [None, line_digest(raws[0]), line_digest(raws[1])]
    assert raws[2] == (
        b'{"id":"x","parent_id":null,"ts":"2026-01-01T00:00:00Z","prev_hash":"'
        + line_digest(raws[1]).encode()
        + b'","kind":"goal","goal_id":"g"}'
    )


def test_activity_round_trips(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    with SessionLog.create(p, HEADER, fsync=False) as log:
        a = log.append_activity(
            "a1", "retry", "succeeded", "Recovered", turn=1, detail="t", data={"b": "2", "a": "1"}
        )
    line = p.read_bytes()[:-1].split(b"\n")[1]
    assert line.endswith(
        b'"kind":"activity","activity_id":"a1","turn":1,"activity_kind":"retry","status":"succeeded",'
        b'"label":"Recovered","detail":"t","data":{"a":"1","b":"2"}}'
    )
    log = SessionLog.open_read_only(p)
    assert log.entries[1] == a
    assert log.derive_messages() == []


def test_unknown_parent_is_refused_and_nothing_written(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    with SessionLog.create(p, HEADER, fsync=False) as log:
        size = p.stat().st_size
        with pytest.raises(CorruptError, match="parent entry nope not found") as info:
            log.append_message(_text("user", "x"), parent_id="nope")
        assert info.value.line == 0
        assert p.stat().st_size == size and len(log.entries) == 1
        with pytest.raises(CorruptError, match="cannot branch at unknown entry"):
            log.branch_at("nope")


def test_torn_trailing_line_is_skipped(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    with SessionLog.create(p, HEADER, fsync=False) as log:
        log.append_message(_text("user", "safe"))
    with open(p, "ab") as f:
        f.write(b'{"id":"t","parent_id":null,"ts":"2026-09-20T10:11:13Z","kind":"mess')
    log = SessionLog.open_read_only(p)
    assert len(log.entries) == 2
    assert log.warnings == [f"skipped unparseable entry at line 3 of {p}"]
    assert [m["content"][0]["text"] for m in log.derive_messages()] == ["safe"]


def test_torn_tail_gets_an_lf_before_the_next_append(tmp_path: Path) -> None:
    """vak would fuse the new line with the fragment and lose it; vakaudit terminates the fragment."""
    p = tmp_path / "s.jsonl"
    with SessionLog.create(p, HEADER, fsync=False) as log:
        log.append_message(_text("user", "safe"))
    fragment = b'{"id":"t","parent_id":null,"ts":"2026-09'
    with open(p, "ab") as f:
        f.write(fragment)
    before = p.read_bytes()
    with SessionLog.open(p, fsync=False) as log:
        assert p.read_bytes() == before  # opening never repairs
        new = log.append_message(_text("assistant", "after"))
        log.append_message(_text("user", "more"))
    data = p.read_bytes()
    assert data.startswith(before + b"\n")  # the fragment is kept byte for byte, then terminated
    assert data.count(b"\n") == 5  # header, safe, fragment, after, more
    log = SessionLog.open_read_only(p)
    assert [e.id for e in log.entries][-2] == new.id
    assert log.warnings == [f"skipped unparseable entry at line 3 of {p}"]  # no broken chain
    assert new.prev_hash == line_digest(before.split(b"\n")[1])  # last line that parsed
    # A torn line that happens to be a complete entry is kept and the append follows it.
    q = tmp_path / "q.jsonl"
    q.write_bytes(before.split(b"\n")[0] + b"\n" + before.split(b"\n")[1])
    with SessionLog.open(q, fsync=False) as log:
        assert len(log.entries) == 2
        log.append_message(_text("assistant", "x"))
    assert SessionLog.open_read_only(q).warnings == [] and len(SessionLog.open_read_only(q).entries) == 3


def test_create_refuses_non_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"x")
    with pytest.raises(ExistsError):
        SessionLog.create(p, HEADER)
    assert p.read_bytes() == b"x"
    with SessionLog.open(p):  # the refused create released its lock
        pass
    empty = tmp_path / "empty.jsonl"
    empty.touch()
    with SessionLog.create(empty, HEADER, fsync=False) as log:
        assert log.entries[0].kind == "header"


def test_open_missing_file_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        SessionLog.open(tmp_path / "missing.jsonl")
    with pytest.raises(FileNotFoundError):
        SessionLog.open_read_only(tmp_path / "missing.jsonl")


def test_total_usage_counts_only_active_branch(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    with SessionLog.create(p, HEADER, fsync=False) as log:
        a = log.append_message(_text("user", "a"))
        log.append_message(_text("assistant", "a-reply"), _usage(100, 30))
        b = log.append_message(_text("user", "b"))
        log.append_message(_text("assistant", "b-reply (abandoned)"), _usage(500, 500))
        log.branch_at(b.id)
        log.append_message(_text("assistant", "b-reply"), _usage(100, 30))
        log.append("receipt", {"purpose": "execute", "model": "m", "attempts": [
            {"ordinal": 0, "reason": "initial", "domain": "unknown", "settlement": "ok", "latency_ms": 1,
             "usage": {"input_tokens": 999, "output_tokens": 999}}]})  # fmt: skip
        assert log.total_usage() == {"input_tokens": 200, "output_tokens": 60}
        assert a.id in [e.id for e in log.chain_to_root()]
    assert SessionLog.open_read_only(p).total_usage() == {"input_tokens": 200, "output_tokens": 60}


def test_branching_projects_only_active_path(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    with SessionLog.create(p, HEADER, fsync=False) as log:
        log.append_message(_text("user", "a"))
        b_ = log.append_message(_text("assistant", "a-reply"))
        log.append_message(_text("user", "b"))
        log.branch_at(b_.id)
        log.append_message(_text("user", "d"))
        ids = [e.id for e in log.chain_to_root()]
    reopened = SessionLog.open_read_only(p)
    assert [e.id for e in reopened.chain_to_root()] == ids  # tail = last line in file order
    texts = [e.message["content"][0]["text"] for e in reopened.chain_to_root() if e.kind == "message"]
    assert texts == ["a", "a-reply", "d"]


def test_turn_capabilities_round_trip_and_never_projected(tmp_path: Path) -> None:
    bound = {
        "epoch": 1,
        "capability_ids": ["Tool:read"],
        "excluded_ids": [],
        "system_prompt": "You are Vak.",
        "tool_schemas": [{"name": "read", "input_schema": {"type": "object"}}],
    }
    p = tmp_path / "s.jsonl"
    with SessionLog.create(p, HEADER, fsync=False) as log:
        e = log.append("turn_capabilities_bound", bound)
    log = SessionLog.open_read_only(p)
    assert log.entries[1] == e and log.entries[1].payload == bound
    assert log.derive_messages() == []


def test_read_only_handle_refuses_appends(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    SessionLog.create(p, HEADER, fsync=False).close()
    log = SessionLog.open_read_only(p)
    with pytest.raises(LockedError):
        log.append("goal", {})
    assert not log.writable


def test_closed_handle_refuses_appends(tmp_path: Path) -> None:
    log = SessionLog.create(tmp_path / "s.jsonl", HEADER, fsync=False)
    log.close()
    log.close()  # idempotent
    with pytest.raises(LedgerError):
        log.append("goal", {})


def test_work_lines_survive_reopen(tmp_path: Path) -> None:
    """vak's own reader skips work lines (duplicate kind); vakaudit reads them and keeps the chain."""
    event = {"kind": "item_verified", "item_id": "one", "attempt": 1}
    p = tmp_path / "s.jsonl"
    with SessionLog.create(p, HEADER, fsync=False) as log:
        w = log.append("work", {"contract_id": "work-1", "revision": 2, "kind": event})
        log.append_message(_text("user", "next"))
    raw = p.read_bytes().split(b"\n")[1]
    assert b'"kind":"work","contract_id":"work-1","revision":2,"kind":{"kind":"item_verified"' in raw
    log = SessionLog.open_read_only(p)
    assert log.warnings == []
    assert log.entries[1].work_event == event and log.entries[1] == w


def test_unknown_kind_is_kept_with_a_warning(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    with SessionLog.create(p, HEADER, fsync=False) as log:
        log.append("call_effect", {"effect": {"a": 1}})
        log.append_message(_text("user", "x"))
    log = SessionLog.open_read_only(p)
    assert len(log.entries) == 3 and log.entries[1].kind == "call_effect"
    assert log.warnings == [f"entry of unknown kind 'call_effect' at line 2 of {p} kept as raw"]


def test_has_request_admission_whole_file(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    with SessionLog.create(p, HEADER, fsync=False) as log:
        a = log.append_message(_text("user", "a"))
        log.append_activity("adm-1", "run", "succeeded", "admitted", data={"request_id": "r-1"})
        log.branch_at(a.id)
        log.append_activity("adm-2", "diagnostic", "succeeded", "admitted", data={"request_id": "r-2"})
        assert log.has_request_admission("r-1") and log.has_request_admission("r-2")
        assert not log.has_request_admission("r-3")
    log = SessionLog.open_read_only(p)
    assert log.has_request_admission("r-1")  # on an abandoned branch: still counts (whole file)
    assert log.has_request_admission("r-2") and not log.has_request_admission("r-3")


def test_invalid_utf8_fails_open_like_vak_unless_lenient(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    with SessionLog.create(p, HEADER, fsync=False) as log:
        log.append_message(_text("user", "a"))
        log.append_message(_text("user", "b"))
    lines = p.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"a"', b'"\xff"')
    p.write_bytes(b"\n".join(lines))
    with pytest.raises(CorruptError) as info:
        SessionLog.open_read_only(p)
    assert info.value.line == 2
    with pytest.raises(CorruptError):
        SessionLog.open(p)
    with SessionLog.open(p, strict_utf8=False):  # the failed writable open released its lock
        pass
    log = SessionLog.open_read_only(p, strict_utf8=False)
    assert len(log.entries) == 2
    assert log.warnings == [f"skipped invalid UTF-8 at line 2 of {p}"]  # line 3 then unchecked, not broken


def test_blank_and_crlf_lines(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    with SessionLog.create(p, HEADER, fsync=False) as log:
        log.append_message(_text("user", "a"))
    a, b, _ = p.read_bytes().split(b"\n")
    p.write_bytes(a + b"\r\n\n   \n\xc2\xa0\n" + b + b"\r\n")
    log = SessionLog.open_read_only(p)
    assert log.warnings == [] and len(log.entries) == 2
    assert log.line_nos == [1, 5]


def test_generation_from_header_and_override(tmp_path: Path) -> None:
    for version, gen in [("3.4.9", "g1"), ("2.0.1", "g1"), ("3.5.0", "g2"), ("3.5.1", "g3"), ("4.0.0", "g3"),
                         ("oracle", "g3")]:  # fmt: skip
        p = tmp_path / f"{version}.jsonl"
        hdr = {**HEADER, "contract": {**HEADER["contract"], "app_version": version}}
        SessionLog.create(p, hdr, fsync=False).close()
        assert SessionLog.open_read_only(p).generation == gen
    assert SessionLog.open_read_only(p, generation="g1").generation == "g1"


def test_fsync_path_writes_durably(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    with SessionLog.create(p, HEADER) as log:  # fsync=True: fdatasync after each line
        log.append_message(_text("user", "a"))
    assert len(SessionLog.open_read_only(p).entries) == 2
    assert os.stat(p).st_size == len(p.read_bytes())


def test_repeated_id_maps_to_last_occurrence(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    with SessionLog.create(p, HEADER, fsync=False) as log:
        log.append("goal", {"n": 1}, entry_id="dup")
        log.append("goal", {"n": 2}, entry_id="dup", parent_id=None)
        assert log.get("dup").payload == {"n": 2}
    log = SessionLog.open_read_only(p)
    assert log.get("dup").payload == {"n": 2} and log.line_no_of("dup") == 3


def test_cycle_in_parents_does_not_hang(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    lines = [
        b'{"id":"a","parent_id":"b","ts":"2026-01-01T00:00:00Z","kind":"goal"}',
        b'{"id":"b","parent_id":"a","ts":"2026-01-01T00:00:00Z","kind":"goal"}',
    ]
    p.write_bytes(b"\n".join(lines) + b"\n")
    log = SessionLog.open_read_only(p)
    assert [e.id for e in log.chain_to_root()] == ["a", "b"]
    assert log.header is None


def test_projection_delegation_on_vak_sample(vak_samples: Path) -> None:
    from vakaudit.ledger import Fidelity, TurnIndex, WorkingSetPlan

    exp = json.loads((vak_samples / "basic" / "expected.json").read_text())
    log = SessionLog.open_read_only(vak_samples / "basic" / "ledger.jsonl")
    index = log.turn_index()
    assert isinstance(index, TurnIndex)
    assert len(index.turns) == 3  # the sample README: header + 3 turns
    assert [t.turn_id for t in index.turns] == [
        "01a22d2b-2691-75f2-bc21-abf3beca6ab8",
        "01a22d2b-2693-73e9-b8b5-81d10ffe8c19",
        "01a22d2b-2695-70a9-b144-3c26baf583a5",
    ]
    # No plan: every closed turn at Full, the same as the plan-free projection vak recorded (§7.5).
    assert log.derive_with_plan(None) == exp["derive_messages"]
    assert all(t.closed for t in index.turns)  # the last turn has its final answer
    full = WorkingSetPlan(per_turn=tuple((t.turn_id, Fidelity.FULL) for t in index.turns))
    assert log.derive_with_plan(full) == exp["derive_messages"]


def test_public_contract_names() -> None:
    import vakaudit.errors as errors
    import vakaudit.ledger as ledger
    from vakaudit.ledger import (  # noqa: F401 - the contract other parts import
        CorruptError,
        Entry,
        ExistsError,
        Fidelity,
        LockedError,
        SessionLog,
        TurnIndex,
        WorkingSetPlan,
        line_digest,
        workspace_key,
    )

    assert LockedError is errors.LockedError and ExistsError is errors.ExistsError
    assert CorruptError is errors.CorruptError
    assert all(hasattr(ledger, name) for name in ledger.__all__)
    assert callable(SessionLog.create) and callable(SessionLog.open) and callable(SessionLog.open_read_only)
    assert callable(Entry.from_line) and callable(Entry.to_line)
