"""Where each file of a vak home goes: flat (G1), per-agent (G2) and nested-home paths, and overlaps."""

from __future__ import annotations

import pytest

from vakaudit.artifacts import classify

SID = "01920d6e-8f1a-7c3b-9a55-2f0e6b7d4c10"

EXPECTED = {
    # evidence and accounting ledgers, at the root, in an agent home and in the nested-home defect
    "routing-evidence.jsonl": "routing_evidence",
    "agents/vak/routing-evidence.jsonl": "routing_evidence",
    "agents/vak/agents/vak/routing-evidence.jsonl": "routing_evidence",
    "cost-log.jsonl": "cost_log",
    "agents/vak/cost-log.jsonl.compact.tmp": "cost_log",
    "budget-alerts.jsonl.compact.tmp": "budget_alerts",
    "agents/ops/activity-log.jsonl": "activity_log",
    "agents/vak/intent-evidence.jsonl": "intent_evidence",
    "security-events.jsonl": "security_events",
    "inbox.jsonl": "inbox",
    "inbox.dedupe.lock": "inbox",
    "agents/vak/commitments.jsonl": "commitments",
    "agents/vak/commitments.lock": "commitments",
    "commitments.jsonl.lock": "commitments",
    "operations/incidents.jsonl": "operations_incidents",
    "agents/vak/operations/actions.jsonl": "operations_actions",
    "gateway/deliveries.jsonl": "gateway_deliveries",
    # per-file records and documents
    f"agents/vak/checkpoints/{SID}/0003.json": "checkpoints",
    f"agents/vak/checkpoints/{SID}/.0004.tmp": "checkpoints",
    "agents/vak/checkpoints/blobs/ab/cdef": "checkpoints",
    f"agents/vak/agents/vak/checkpoints/{SID}/0001.json": "checkpoints",
    f"agents/vak/sandbox/executions/{SID}.jsonl": "sandbox_executions",
    "agents/vak/sandbox/records.jsonl": "sandbox_records",
    "agents/vak/sandbox/staging/proj/cost-log.jsonl": "sandbox_files",  # a copy, not a ledger
    "sandbox/promotions/p1/src/main.rs": "sandbox_files",
    "delivery/jobs/7461736b.json": "delivery_jobs",
    "agents/vak/flow-runs/nightly/1787554800000000000.json": "flow_runs",
    "agents/vak/flow-runs/plan-1-1.json": "flow_runs",
    "agents/vak/memory/9c1d3e5f7a2b4c6d/MEMORY.md": "memory",
    "agents/vak/memory/9c1d3e5f7a2b4c6d/MEMORY.lock": "memory",
    "agents/vak/memory/9c1d3e5f7a2b4c6d/MEMORY.tmp.4242": "memory",
    "agents/vak/memory/user/USER.md": "memory",
    "learning/notes.jsonl": "memory",
    "agents/vak/entities/global/ENTITIES.jsonl": "entities",
    "agents/vak/entities/9c1d3e5f7a2b4c6d/ENTITIES.tmp": "entities",
    "agents/vak/skill-proposals/9c1d3e5f7a2b4c6d/0192a1b03c4d7e5f8a9b0c1d2e3f4a5b.md": "skill_proposals",
    "agents/vak/skills/release-notes/SKILL.md": "skills",
    "vak-home/.vak/skills/review/SKILL.md": "skills",
    "agents/vak/coworking/grants.jsonl": "coworking_grants",
    # derived, feeds
    "cache/store.db": "store_db",
    "cache/store.db-wal": "store_db",
    "cache/store.db-shm": "store_db",
    "agents/vak/store.db": "store_db",
    "cache/recall/x.bin": "cache_dir",
    "feeds/feeds.duckdb": "feeds_store",
    "feeds/feeds.duckdb.wal": "feeds_store",
    "feeds/security.log": "feeds_security_log",
    # configuration
    "tasks.json": "config_files",
    "tasks.json.tmp": "config_files",
    "trusted/9c1d3e5f7a2b4c6d": "config_files",
    "gateway/bindings.json": "config_files",
    "gateway/.default-workspace.4242.tmp": "config_files",
    "agents/vak/presentations.json": "config_files",
    "agents/vak/presentations.tmp-4242-17": "config_files",
    "agents/vak/workspace-names.json": "config_files",
    "agents/vak/output.toml": "config_files",
    "feeds.toml": "config_files",
    "auth/passkeys.json": "config_files",
    "release/manifest.json": "config_files",
    "flows/nightly.toml": "config_files",
    "agents/vak/agent-network/peers.json": "config_files",
    "agents/vak/office-workspaces/s1/main.json": "config_files",
    "agents/vak/mail-calendar/accounts.json": "config_files",
    "vak-home/.vak/config.toml": "config_files",
    "vak-home/.vak/.seed-manifest.json": "config_files",
    "vak-home/.vak/plugins/demo/plugin.toml": "config_files",
    "vak-home": "config_files",
    # secrets, locks, logs, default workspace
    "vak-home/credentials.enc": "secrets",
    "vak-home/.credential_key": "secrets",
    "vak-home/.credential_key.lock": "secrets",
    "locks/server.pid": "locks",
    "locks/a.lock": "locks",
    "broker.sock": "locks",
    "agents/vak/agent-network/broker.sock": "locks",
    "agents/vak/some.lock": "locks",
    "logs/desktop.log": "logs",
    "logs/server.log.1": "logs",
    "vak-home/notes/todo.md": "default_workspace",
}


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_path_lands_in_its_kind(rel: str) -> None:
    assert classify(rel).name == EXPECTED[rel]
