"""Each JSONL sidecar reader on its fixture gives the rows typed by hand from the spec examples."""

from __future__ import annotations

import pytest
from artifact_kind_helpers import FIXTURES, line_spans, run_reader, utc

SID = "01920d6e-8f1a-7c3b-9a55-2f0e6b7d4c10"

# kind -> (rel_path in its fixture home, [expected subset of each row])
CASES = {
    "routing_evidence": (
        "agents/vak/routing-evidence.jsonl",
        [
            {
                "ts": "2026-08-24T09:15:02.481220Z",
                "ts_at": utc(2026, 8, 24, 9, 15, 2, 481220),
                "provider": "anthropic",
                "model": "claude-sonnet-4",
                "outcome": "success",
                "latency_ms": 1840,
                "trace": None,
                "trace_run": None,
                "actor": None,
            },
            {
                "ts_at": utc(2026, 8, 24, 9, 15, 9, 100000),
                "provider": "openai",
                "outcome": "failure",
                "latency_ms": 30012,
                "trace_run": "run_01",
                "trace_session": SID,
                "actor": "usr_01",
            },
        ],
    ),
    "cost_log": (
        "cost-log.jsonl",
        [
            {
                "model": "claude-sonnet-4",
                "provider": "anthropic",
                "input_tokens": 18234,
                "output_tokens": 912,
                "cache_read_input_tokens": 15010,
                "usd": 0.068382,
                "source": "estimated",
                "session_id": SID,
            },
            # no price: usd missing means unknown (null), never zero; legacy row without provider
            {
                "model": "local-llama",
                "provider": None,
                "input_tokens": 100,
                "output_tokens": 5,
                "cache_read_input_tokens": None,
                "usd": None,
            },
        ],
    ),
    "budget_alerts": (
        "budget-alerts.jsonl",
        [
            {
                "kind": "budget_alert",
                "ts_at": utc(2026, 8, 24, 16, 40, 11, 500000),
                "level": "eighty",
                "day_total_usd": 8.12,
                "session_id": SID,
            }
        ],
    ),
    "activity_log": (
        "agents/vak/activity-log.jsonl",
        [
            {
                "kind": "mcp",
                "name": "plugin.demo/search",
                "success": True,
                "duration_ms": 19,
                "session_id": SID,
                "plugin": "demo",
                "tool_use_id": None,
                "ts_at": utc(2026, 8, 24, 9, 15, 4, 120000),
            },
            {"kind": "provider", "success": False, "duration_ms": None, "session_id": None, "plugin": None},
        ],
    ),
    "intent_evidence": (
        "agents/vak/intent-evidence.jsonl",
        [
            {
                "act": "modify",
                "stakes": "reversible",
                "tier": "signals",
                "resolver_version": 3,
                "outcome": "escalated",
                "wanted": "bash",
                "sliced": True,
            },
            {"act": "answer", "outcome": "held", "wanted": None, "sliced": None},
        ],
    ),
    "security_events": (
        "agents/vak/security-events.jsonl",
        [
            {
                "kind": "permission_capped",
                "label": "permission_capped",
                "detail": "workspace=/Users/alice/proj requested=full-access capped_to=ask",
                "ip": None,
            },
            {"kind": "auth_failure", "label": "login_failed", "ip": "192.0.2.7"},
        ],
    ),
    "inbox": (
        "inbox.jsonl",
        [
            {
                "row_type": "entry",
                "id": "3f9c0a7b5d21e864",
                "ack_of": None,
                "kind": "task_summary",
                "title": "Morning digest ready",
                "body": "3 new items in tech feeds",
                "task_id": "t-morning",
                "result_id": None,
                "dedupe_key": None,
                "ts_at": utc(2026, 8, 24, 7, 0, 3, 120455),
            },
            {"row_type": "ack", "id": None, "ack_of": "3f9c0a7b5d21e864", "ts": "2026-08-24T08:12:00Z"},
        ],
    ),
    "commitments": (
        "agents/vak/commitments.jsonl",
        [
            {
                "kind": "opened",
                "objective": "Keep the parser green",
                "cwd": "/Users/alice/proj",
                "episode_id": None,
            },
            {
                "kind": "episode-started",
                "episode_id": "ep-3",
                "session_id": SID,
                "spec": None,
                "event_id": "0192a1b0-3c4d-7e5f-8a9b-0c1d2e3f4a5b",
            },
            {
                "kind": "episode-ended",
                "advancement_kind": "learned",
                "spend_usd": 0.42,
                "advancement": '{"kind":"learned","fact":"tests need a db"}',
            },
            {"kind": "closed", "verdict": "fulfilled", "strength": "observed", "evidence": "[]"},
        ],
    ),
    "operations_incidents": (
        "operations/incidents.jsonl",
        [
            {
                "event": "opened",
                "incident_id": "INC-0192a3f1c2d34e5f8a9b0c1d2e3f4a5b",
                "fingerprint": "outbox:dead_letter",
                "severity": "critical",
                "status": "investigating",
                "source": "outbox",
                "occurrences": 1,
                "workspace": None,
                "evidence": '["job:6a6f62"]',
                "resolution": None,
                "first_seen_at": utc(2026, 8, 24, 12, 0, 0),
            }
        ],
    ),
    "operations_actions": (
        "operations/actions.jsonl",
        [
            {
                "receipt_id": "rcpt-1",
                "service": "outbox",
                "action": "retry",
                "succeeded": True,
                "persisted": True,
                "requested_at": utc(2026, 8, 24, 12, 5, 0),
                "completed_at": utc(2026, 8, 24, 12, 5, 1, 250000),
                "verification_status": "verified",
            }
        ],
    ),
    "sandbox_executions": (
        f"agents/vak/sandbox/executions/{SID}.jsonl",
        [
            {
                "session_id": SID,
                "kind": "ExecutionStarted",
                "tool": "bash",
                "language": "bash",
                "code_preview_bytes": 11,
                "scratch_dir": "/tmp/vak-scratch",
            },  # "echo héllo": é is 2 bytes
            {"kind": "Stdout", "chunk_bytes": 7},
            {"kind": "ProcessTelemetry", "elapsed_ms": 1500, "cpu_percent": 12.5, "memory_bytes": 45000000},
            {
                "kind": "ArtifactGenerated",
                "path": "out.png",
                "mime_type": "image/png",
                "artifact_size_bytes": 2048,
            },
            {"kind": "ExecutionFinished", "exit_code": 0, "duration_ms": 1620, "artifact_count": 1},
        ],
    ),
    "sandbox_records": (
        "agents/vak/sandbox/records.jsonl",
        [
            {"record_type": "environment", "record_id": "rec-1", "state": "ready"},
            {"record_type": "candidate", "verified": True, "turn_id": "turn-1", "execution_id": "ex-1"},
            {"record_type": "preview_preparation", "candidate_id": "cand-1", "state": "prepared"},
            {"record_type": "promotion", "updated_at": utc(2026, 8, 24, 12, 3, 0)},
        ],
    ),
    "coworking_grants": (
        "agents/vak/coworking/grants.jsonl",
        [
            {
                "grant_id": "grt-1",
                "principal_id": "usr_02",
                "capability_count": 2,
                "capabilities": '["read","comment"]',
                "expires_at": utc(2026, 8, 25, 9, 0, 0),
            }
        ],
    ),
    "feeds_security_log": (
        "feeds/security.log",
        [
            {
                "timestamp": "2026-08-24T06:00:00.123456+00:00",
                "timestamp_at": utc(2026, 8, 24, 6, 0, 0, 123456),
                "event": "invalid_item_url",
                "context": '{"url":"javascript:alert(1)","feed_id":"hn"}',
            }
        ],
    ),
    "gateway_deliveries": (
        "gateway/deliveries.jsonl",
        [
            {
                "target": "telegram:123456",
                "kind": "task_summary",
                "ok": True,
                "keys": '["kind","ok","target","ts"]',
            }
        ],
    ),
    "entities": (
        "agents/vak/entities/global/ENTITIES.jsonl",
        [
            {
                "entities_scope": "global",
                "id": "ent-postgres-1",
                "entity_type": "database",
                "attribute_count": 2,
                "attributes": '{"engine":"postgresql","role":"primary_db"}',
                "relation_count": 1,
                "updated_at": utc(2026, 8, 24, 9, 20, 0, 500000),
            }
        ],
    ),
}


@pytest.mark.parametrize("kind_name", sorted(CASES))
def test_sidecar_rows_match_the_fixture(kind_name: str) -> None:
    rel_path, expected = CASES[kind_name]
    home = FIXTURES / kind_name
    rows, findings = run_reader(kind_name, home, rel_path)
    assert findings == []
    spans = line_spans((home / rel_path).read_bytes())
    assert len(rows) == len(expected) == len(spans)
    for i, (row, want, (offset, size)) in enumerate(zip(rows, expected, spans, strict=True)):
        assert row["rel_path"] == rel_path
        assert row["home_scope"] == (rel_path.rsplit("/", 1)[0] if "/" in rel_path else "")
        assert (row["line_no"], row["offset_bytes"], row["size_bytes"]) == (i + 1, offset, size)
        assert {k: row[k] for k in want} == want


def test_entities_scope_is_the_workspace_key_directory() -> None:
    rows, _ = run_reader(
        "entities", FIXTURES / "entities", "agents/vak/entities/9c1d3e5f7a2b4c6d/ENTITIES.jsonl"
    )
    assert [(r["entities_scope"], r["id"], r["attributes"], r["relation_count"]) for r in rows] == [
        ("9c1d3e5f7a2b4c6d", "srv-aws-us-east-1", None, None)
    ]


def test_lock_files_of_a_ledger_kind_give_no_rows() -> None:
    rows, findings = run_reader("commitments", FIXTURES / "commitments", "agents/vak/commitments.lock")
    assert (rows, findings) == ([], [])
