"""Replay on vak's own ledger, on G4 binding refs, deferred tools, the header fallback, and the
projection the replay reuses from step to step compared with the ledger's own derive_with_plan."""

from __future__ import annotations

import hashlib
import json

from replay_ledgers import BASH, FIND_TOOLS, READ, SYSTEM, WRITE, Plan

from vakaudit.ledger import SessionLog
from vakaudit.ledger.projection import derive_with_plan
from vakaudit.replay import (
    StepRequestBuilder,
    anthropic_body,
    iter_requests,
    openai_body,
    request_message_chars,
    step_request_message_chars,
)


def test_vak_sample_basic(vak_samples):
    steps = list(iter_requests(vak_samples / "basic" / "ledger.jsonl"))
    # one execute receipt per turn, each written after the turn's final answer
    assert [(s.turn, s.step) for s in steps] == [(1, 1), (2, 1), (3, 1)]
    expected = json.loads((vak_samples / "basic" / "expected.json").read_text())["derive_messages"]
    for s in steps:
        by = {str(c.name): c for c in s.checks}
        # these receipts carry no prefix_digest key: the digest checks say so
        for name in ("prefix_digest", "prefix_changed_activity", "prefix_tokens_window"):
            assert by[name].status == "not_checkable"
            assert "no prefix_digest" in by[name].reason
        assert by["usage_sanity"].status == "pass"
        assert by["model_visible_logged"].status == "pass"
        # the sample's bindings list core tools bash+search but store only the search schema
        assert by["binding_consistency"].status == "fail"
        # closed turns project exactly as vak's derive_messages did (4 messages per closed turn)
        closed = 4 * (s.turn - 1)
        assert s.request.messages[:closed] == expected[:closed]
    assert "prefix-changed activity" in steps[0].check("prefix_changed_activity").reason


def _canonical(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _g4_ledger(path, ref_digest_ok=True, ref_target_known=True):
    log = SessionLog.create(
        path,
        {
            "session_id": "g4",
            "created_at": "2026-01-01T00:00:00Z",
            "cwd": "/w",
            "contract": {"app_version": "4.0.0"},
        },
        fsync=False,
    )
    tools = [FIND_TOOLS, READ, BASH]
    binding = {
        "epoch": 1,
        "capability_ids": ["Tool:bash", "Tool:read"],
        "excluded_ids": [],
        "system_prompt": SYSTEM,
        "tool_schemas": tools,
        "core_tool_names": ["read", "bash"],
        "deferred_tool_names": [],
        "tool_index": "",
        "tool_domains": {},
    }
    digest_input = _canonical({k: v for k, v in binding.items() if k != "epoch"})
    b = log.append("turn_capabilities_bound", binding)
    usage = {"input_tokens": 10, "output_tokens": 1}
    attempt = {
        "ordinal": 0,
        "reason": "initial",
        "domain": "unknown",
        "settlement": "ok",
        "latency_ms": 1,
        "usage": usage,
    }
    digest = hashlib.sha256(
        b"".join(
            [SYSTEM.encode()]
            + [t["name"].encode() + t["description"].encode() + _canonical(t["input_schema"]) for t in tools]
        )
    ).hexdigest()
    for k in (1, 2):
        if k == 2:
            ref = {
                "entry": b.id if ref_target_known else "no-such-entry",
                "digest": hashlib.sha256(digest_input).hexdigest() if ref_digest_ok else "0" * 64,
                "epoch": 2,
            }
            log.append("turn_capabilities_ref", ref)
        log.append_message({"role": "user", "content": [{"type": "text", "text": f"question {k}"}]})
        log.append(
            "receipt",
            {"purpose": "execute", "provider": "p", "model": "m", "winning_attempt": 0, "attempts": [attempt],
             "prefix_digest": digest},
        )  # fmt: skip
        log.append_message(
            {"role": "assistant", "content": [{"type": "text", "text": f"answer {k}"}]}, {"usage": usage}
        )
    log.close()


def test_g4_binding_ref_resolves_with_recorded_digest(tmp_path):
    path = tmp_path / "g4.jsonl"
    _g4_ledger(path)
    steps = list(iter_requests(path, generation="g4"))
    assert [s.check("binding_ref").status for s in steps] == ["pass", "pass"]
    assert all(s.check("prefix_digest").status == "pass" for s in steps)


def test_g4_binding_ref_with_wrong_digest_or_unknown_entry_fails_that_turn(tmp_path):
    bad_digest, unknown = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _g4_ledger(bad_digest, ref_digest_ok=False)
    _g4_ledger(unknown, ref_target_known=False)
    for path in (bad_digest, unknown):
        steps = list(iter_requests(path, generation="g4"))
        assert [str(s.check("binding_ref").status) for s in steps] == ["pass", "fail"]


def test_deferred_tools_binding_and_wire_bodies(make_ledger, tmp_path):
    deferred_write = dict(WRITE, defer=True)
    path = tmp_path / "d.jsonl"
    log = SessionLog.create(
        path,
        {
            "session_id": "d",
            "created_at": "2026-01-01T00:00:00Z",
            "cwd": "/w",
            "contract": {"app_version": "3.5.1"},
        },
        fsync=False,
    )
    log.append(
        "turn_capabilities_bound",
        {
            "epoch": 1,
            "capability_ids": [],
            "excluded_ids": [],
            "system_prompt": SYSTEM,
            "tool_schemas": [FIND_TOOLS, READ, deferred_write],
            "core_tool_names": ["read"],
            "deferred_tool_names": ["write"],
            "tool_index": "- write — Write a file.",
            "tool_domains": {},
        },
    )
    log.append_message({"role": "user", "content": [{"type": "text", "text": "go"}]})
    log.append(
        "receipt",
        {"purpose": "execute", "provider": "anthropic", "model": "m", "attempts": [], "prefix_digest": ""},
    )
    log.close()
    (step,) = list(iter_requests(path))
    assert step.check("binding_consistency").status == "pass"
    assert [t.get("defer", False) for t in step.request.tools] == [False, False, True]
    body = anthropic_body(step.request)
    assert body["tools"][0] == {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}
    assert body["tools"][3] == {
        "name": "write",
        "description": "Write a file.",
        "input_schema": WRITE["input_schema"],
        "defer_loading": True,
    }
    assert [t["function"]["name"] for t in openai_body(step.request)["tools"]] == ["find_tools", "read"]


def test_header_fallback_without_binding(tmp_path):
    path = tmp_path / "h.jsonl"
    log = SessionLog.create(
        path,
        {
            "session_id": "h",
            "created_at": "2026-01-01T00:00:00Z",
            "cwd": "/w",
            "contract": {
                "app_version": "3.5.1",
                "system_prompt": "You are Vak.",
                "capabilities": [
                    {
                        "name": "read",
                        "kind": "tool",
                        "invocation": "model-tool",
                        "description": "Read a file.",
                        "configuration": READ["input_schema"],
                    },  # fmt: skip
                ],
            },
        },
        fsync=False,
    )
    log.append_message({"role": "user", "content": [{"type": "text", "text": "hi"}]})
    digest = hashlib.sha256(b"You are Vak.readRead a file." + _canonical(READ["input_schema"])).hexdigest()
    log.append(
        "receipt",
        {"purpose": "execute", "provider": "p", "model": "m", "attempts": [], "prefix_digest": digest},
    )
    log.close()
    (step,) = list(iter_requests(path))
    assert step.check("prefix_digest").status == "pass"
    assert "header" in step.check("prefix_digest").reason
    assert step.check("binding_consistency").status == "not_checkable"


def test_reused_projection_equals_the_ledgers_projection_at_every_cut(make_ledger):
    path, _ = make_ledger(Plan(tools_by_turn={3: [FIND_TOOLS, READ, BASH, WRITE]}))
    with SessionLog.open_read_only(path) as log:
        chain = log.chain_to_root()
        pos = {e.id: i for i, e in enumerate(chain)}
        for s in iter_requests(log):
            cut = chain[: pos[s.receipt_id]]
            expected = derive_with_plan(cut, s.plan, generation=log.generation)
            got = [dict(m) for m in s.request.messages]
            i = s.request.tail_index
            got[i] = {**got[i], "content": [b for b in got[i]["content"] if b.get("text") != s.request.tail]}
            assert got == expected, (s.turn, s.step)


def test_step_request_builder_matches_replay(make_ledger, tmp_path):
    path, facts = make_ledger()
    replayed = {s.receipt_id: s.message_chars for s in iter_requests(path)}
    # rewrite the same session entry by entry, asking the builder before each execute receipt
    with SessionLog.open_read_only(path) as src:
        entries = src.chain_to_root()
    out = tmp_path / "copy.jsonl"
    log = SessionLog.create(out, entries[0].payload, fsync=False)
    builder = StepRequestBuilder(log)
    chars = {}
    for e in entries[1:]:
        if e.kind == "receipt":
            chars[e.id] = builder.message_chars()
            assert step_request_message_chars(log) == chars[e.id]  # the cached per-log builder agrees
        log.append(e.kind, e.payload, entry_id=e.id)
    log.close()
    assert chars == replayed
    assert chars[facts["receipts"][(1, 1)]] == request_message_chars(
        [
            {
                "content": [
                    {"type": "text", "text": "<intent>\nNote 1: check before acting.\n</intent>"},
                    {"type": "text", "text": "Turn 1: list the files in folder 1"},
                ]
            }
        ]  # fmt: skip
    )
