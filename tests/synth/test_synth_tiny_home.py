"""The tiny synthetic home: every artifact kind present, in the row formats of home.md/ledger.md.

Everything is read back from the written files (plain json / sqlite3 / the ledger reader), and
compared with what the specs say, not with the generator's own counters.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from vakaudit.ledger import SessionLog, workspace_key
from vakaudit.ledger.keys import fnv1a64
from vakaudit.replay import iter_requests, prefix_digest
from vakaudit.synth import build_home


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tiny") / "home"
    build_home(out, profile="tiny", seed=3, layout="g2")  # default fsync: one fdatasync per entry
    return out


@pytest.fixture(scope="module")
def home_g1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tiny_g1") / "home"
    build_home(out, profile="tiny", seed=3, layout="g1", fsync=False)
    return out


def _ledgers(home: Path) -> list[Path]:
    return sorted(home.glob("agents/vak/sessions/*/*.jsonl"))


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


EXPECTED_FILES = [
    # home.md §2 directory map, G1/G2 plain-file layout
    "agents/vak/sessions/*/*.jsonl",
    "agents/vak/checkpoints/*/[0-9][0-9][0-9][0-9].json",
    "agents/vak/memory/*/MEMORY.md",
    "agents/vak/memory/user/USER.md",
    "agents/vak/entities/*/ENTITIES.jsonl",
    "agents/vak/entities/global/ENTITIES.jsonl",
    "agents/vak/skill-proposals/*/*.md",
    "agents/vak/skills/*/SKILL.md",
    "agents/vak/routing-evidence.jsonl",
    "agents/vak/intent-evidence.jsonl",
    "agents/vak/security-events.jsonl",
    "agents/vak/activity-log.jsonl",
    "agents/vak/cost-log.jsonl",
    "agents/vak/commitments.jsonl",
    "agents/vak/commitments.lock",
    "agents/vak/presentations.json",
    "agents/vak/workspace-names.json",
    "agents/vak/flow-runs/*/*.json",
    "agents/vak/flow-runs/plan-*-*.json",
    "agents/vak/sandbox/executions/*.jsonl",
    "cost-log.jsonl",
    "budget-alerts.jsonl",
    "activity-log.jsonl",
    "inbox.jsonl",
    "security-events.jsonl",
    "operations/incidents.jsonl",
    "operations/actions.jsonl",
    "delivery/jobs/*.json",
    "gateway/bindings.json",
    "gateway/allowlist.json",
    "gateway/bots.json",
    "gateway/deliveries.jsonl",
    "gateway/default-workspace",
    "tasks.json",
    "trusted/*",
    "deleted.json",
    "archive.json",
    "workspaces.json",
    "feeds.toml",
    "feeds/security.log",
    "output.toml",
    "flows/*.toml",
    "cache/store.db",
    "logs/*.log",
    "vak-home/.vak/config.toml",
]


@pytest.mark.parametrize("pattern", EXPECTED_FILES)
def test_every_artifact_kind_is_present(home: Path, pattern: str) -> None:
    assert [p for p in home.glob(pattern) if p.is_file()], pattern


def test_g2_only_artifacts(home: Path, home_g1: Path) -> None:
    for rel in (
        "auth/passkeys.json",
        "agents/vak/coworking/grants.jsonl",
        "agents/vak/sandbox/records.jsonl",
    ):
        assert (home / rel).is_file()
        assert not (home_g1 / rel).exists()


def test_ledgers_verify_clean_and_carry_every_entry_kind(home: Path) -> None:
    kinds: Counter[str] = Counter()
    versions: set[str] = set()
    shapes = set()
    branched = nudges = children = 0
    for path in _ledgers(home):
        log = SessionLog.open_read_only(path)
        assert log.warnings == [], (path, log.warnings)
        header = log.header
        assert header is not None and header.payload["session_id"] == path.stem
        assert path.parent.name == workspace_key(header.payload["cwd"])
        versions.add(header.payload["contract"]["app_version"])
        children += "parent_session_id" in header.payload
        for e in log.entries:
            kinds[e.kind] += 1
            if e.kind == "compaction":
                shapes.add("B" if "first_turn_id" in e.payload else "A")
            if e.kind == "message" and (e.payload.get("meta") or {}).get("control"):
                nudges += 1
        branched += len(log.chain_to_root()) < len(log.entries)
    for kind in (
        "header", "message", "compaction", "receipt", "goal", "goal_update", "activity", "work", "intent",
        "child_run", "turn_capabilities_bound", "presentation", "turn_card",
    ):  # fmt: skip
        assert kinds[kind] > 0, kind
    assert shapes == {"A", "B"}
    assert {"3.4.9", "3.5.0", "3.5.1", "4.0.0"} <= versions
    assert branched >= 1 and nudges >= 1 and children >= 1


def test_compaction_shape_follows_generation(home: Path) -> None:
    # ledger.md §4.3: shape A in G1/G2 (< 3.5.1 here), shape B in G3
    for path in _ledgers(home):
        log = SessionLog.open_read_only(path)
        version = log.header.payload["contract"]["app_version"]
        for e in log.entries:
            if e.kind == "compaction":
                expected = "first_kept_entry_id" if version in ("3.4.9", "3.5.0") else "first_turn_id"
                assert expected in e.payload, (version, list(e.payload))


def test_work_lines_have_the_duplicate_kind_key(home: Path) -> None:
    raw = [line for p in _ledgers(home) for line in p.read_bytes().splitlines() if b'"kind":"work"' in line]
    assert raw
    for line in raw:
        assert line.count(b'"kind":') >= 2  # envelope tag, then the event object (ledger.md §2.4)
        assert b',"kind":{"kind":' in line


def test_receipts_follow_the_prefix_rules(home: Path) -> None:
    # replay.md §11/§12, checked directly on the active chains
    for path in _ledgers(home):
        log = SessionLog.open_read_only(path)
        version = log.header.payload["contract"]["app_version"]
        chain = log.chain_to_root()
        binding = None
        seen: set[str] = set()
        last = ""
        for i, e in enumerate(chain):
            if e.kind == "turn_capabilities_bound":
                binding = e.payload
            if e.kind != "receipt" or e.payload["purpose"] != "execute":
                continue
            digest = e.payload.get("prefix_digest", "")
            if version == "3.4.9":
                assert "prefix_digest" not in e.payload  # receipts carry the digest from 3.5.0 on
                continue
            if binding is None:  # worker ledger: nothing bound, nothing to hash
                assert digest == ""
                continue
            assert digest == prefix_digest(binding["system_prompt"], binding["tool_schemas"])
            assert ("prefix_tokens" in e.payload) == (digest not in seen)
            before = chain[i - 1]
            changed = bool(last) and digest != last
            is_diag = before.kind == "activity" and before.payload["label"] == "prefix-changed"
            assert is_diag == changed
            if changed:
                assert before.payload["data"] == {"current": digest, "previous": last}
                assert before.payload["activity_id"].startswith("activity-") and "turn" not in before.payload
            seen.add(digest)
            last = digest


def test_replay_prefix_checks_pass(home: Path) -> None:
    statuses: Counter[tuple[str, str]] = Counter()
    for step in iter_requests(home):
        for check in step.checks:
            if str(check.name) in (
                "prefix_digest",
                "prefix_changed_activity",
                "prefix_tokens_window",
                "usage_sanity",
            ):
                statuses[(str(check.name), str(check.status))] += 1
                assert str(check.status) != "fail", (step.ledger_path, step.turn, step.step, check)
    assert statuses[("prefix_tokens_window", "pass")] > 0
    assert statuses[("prefix_digest", "pass")] > 0


def test_binding_tool_list_is_consistent(home: Path) -> None:
    # replay.md §5: names(tool_schemas) == ["find_tools"] + core + deferred; tool_index one line per deferred
    for path in _ledgers(home):
        for e in SessionLog.open_read_only(path).entries:
            if e.kind == "turn_capabilities_bound" and "core_tool_names" in e.payload:
                p = e.payload
                names = [t["name"] for t in p["tool_schemas"]]
                assert names == ["find_tools", *p["core_tool_names"], *p["deferred_tool_names"]]
                lines = p["tool_index"].split("\n") if p["tool_index"] else []
                assert [ln.split(" — ")[0][2:] for ln in lines] == p["deferred_tool_names"]


ROW_KEYS = {
    # home.md §4: required keys of each side ledger row (G2 rows may add trace/actor)
    "agents/vak/routing-evidence.jsonl": {"ts", "provider", "model", "outcome", "latency_ms"},
    "agents/vak/cost-log.jsonl": {"ts", "model", "provider", "input_tokens", "output_tokens", "source", "session_id"},
    "agents/vak/activity-log.jsonl": {"ts", "kind", "name", "success"},
    "agents/vak/intent-evidence.jsonl": {"ts", "act", "stakes", "tier", "resolver_version", "outcome"},
    "agents/vak/security-events.jsonl": {"ts", "kind", "label", "detail"},
    "budget-alerts.jsonl": {"kind", "ts", "level", "day_total_usd", "session_id"},
    "operations/incidents.jsonl": {"ts", "event", "incident"},
    "operations/actions.jsonl": {"receipt_id", "service", "action", "requested_at", "completed_at", "succeeded",
                                 "persisted", "verification"},
    "agents/vak/commitments.jsonl": {"event_id", "commitment_id", "ts", "kind"},
}  # fmt: skip


@pytest.mark.parametrize("rel", sorted(ROW_KEYS))
def test_side_ledger_rows_have_their_fields(home: Path, home_g1: Path, rel: str) -> None:
    for h, layout in ((home, "g2"), (home_g1, "g1")):
        rows = _rows(h / rel)
        assert rows
        for row in rows:
            assert ROW_KEYS[rel] <= row.keys(), row
            if rel.startswith("agents/vak/") and rel != "agents/vak/security-events.jsonl":
                assert ("trace" in row) == (layout == "g2"), (layout, row)
                if "trace" in row:
                    assert {"tenant", "space", "agent", "run", "span", "cause"} <= row["trace"].keys()
                    assert len(row["trace"]["span"]) == 16 and row["trace"]["span"].strip("0")


def test_routing_outcomes_and_cost_rows(home: Path) -> None:
    for row in _rows(home / "agents/vak/routing-evidence.jsonl"):
        assert row["outcome"] in ("success", "failure", "unknown")
    for row in _rows(home / "agents/vak/cost-log.jsonl"):
        assert row["source"] == "estimated"
        assert row["provider"] != "ollama"  # a local model is not a paid dispatch: no cost row
        if row["provider"] == "openrouter":
            assert "usd" not in row  # no price known: omitted, not zero


@pytest.mark.parametrize("layout", ["g2", "g1"])
def test_one_cost_row_per_paid_dispatch(home: Path, home_g1: Path, layout: str) -> None:
    # home.md §4.2: one row per settled paid dispatch, i.e. per execute receipt of a remote provider
    # (a compaction's summarize receipt is not a dispatch of the run: no row)
    h = home if layout == "g2" else home_g1
    paid = []
    for path in _ledgers(h):
        for row in _rows(path):
            if row.get("kind") == "receipt" and row["purpose"] == "execute":
                assert len(row["attempts"]) >= 1
                if row["provider"] != "ollama":
                    paid.append((row["provider"], row["model"]))
    rows = [
        r
        for rel in ("agents/vak/cost-log.jsonl", "cost-log.jsonl")
        if (h / rel).exists()
        for r in _rows(h / rel)
    ]
    assert sorted((r["provider"], r["model"]) for r in rows) == sorted(paid)


def test_inbox_ids_are_fnv_of_ts_kind_title(home: Path) -> None:
    entries = [r for r in _rows(home / "inbox.jsonl") if "id" in r]
    assert entries
    ids = {r["id"] for r in entries}
    for r in entries:
        ts = r["ts"][:-1]
        whole, _, frac = ts.partition(".")
        plus = f"{whole}.{frac.ljust(9, '0')}+00:00"
        key = "|".join((plus, r["kind"], r["title"])).encode()
        assert r["id"] == f"{fnv1a64(key):016x}"
        assert list(r) == [
            "id",
            "ts",
            "kind",
            "title",
            "body",
            "session_id",
            "task_id",
            "result_id",
            "dedupe_key",
        ]
    for ack in (r for r in _rows(home / "inbox.jsonl") if "ack_of" in r):
        assert ack["ack_of"] in ids


def test_checkpoints_are_g1_base64_documents(home: Path) -> None:
    files = sorted(home.glob("agents/vak/checkpoints/*/*.json"))
    assert files
    for f in files:
        doc = json.loads(f.read_bytes())
        assert list(doc) == ["seq", "session_id", "created_at", "label", "files", "observed"]
        assert f.name == f"{doc['seq']:04d}.json" and f.parent.name == doc["session_id"]
        rels = [x["rel_path"] for x in doc["files"]]
        assert rels == sorted(rels)
        assert set(rels) <= set(doc["observed"]) and ".env" in doc["observed"] and ".env" not in rels
        for x in doc["files"]:
            base64.b64decode(x["content"], validate=True)
    for d in home.glob("agents/vak/checkpoints/*"):
        assert len(list(d.glob("*.json"))) <= 20


def test_delivery_job_files_are_named_by_hex_job_id(home: Path) -> None:
    for f in home.glob("delivery/jobs/*.json"):
        lines = [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines()]
        assert f.stem == lines[0]["job"]["job_id"].encode().hex()
        assert all(x["schema_version"] == 1 for x in lines)
        assert lines[0]["state"] == "pending" and lines[-1]["state"] in ("delivered", "dead_letter")


def test_sandbox_executions_are_bracketed(home: Path) -> None:
    for f in home.glob("agents/vak/sandbox/executions/*.jsonl"):
        kinds = [r["kind"] for r in _rows(f)]
        assert kinds[0] == "ExecutionStarted" and kinds[-1] == "ExecutionFinished"
        assert kinds.count("ExecutionStarted") == kinds.count("ExecutionFinished")
        for r in _rows(f):
            if r["kind"] in ("Stdout", "Stderr"):
                assert r["chunk"] and len(r["chunk"]) <= 8192


def test_memory_notes_parse(home: Path) -> None:
    for f in home.glob("agents/vak/memory/*/*.md"):
        headers = [ln for ln in f.read_text(encoding="utf-8").splitlines() if ln.startswith("## ")]
        assert headers
        for h in headers:
            ts, kind, tag, session = h[3:].split(" ", 3)
            assert ts.endswith("+00:00") and kind.startswith("[") and tag.startswith("tag=")
            assert session.startswith("session=")


def test_store_db_is_schema_v1_and_indexes_ledger_entries(home: Path) -> None:
    db = sqlite3.connect(f"file:{home / 'cache/store.db'}?mode=ro&immutable=1", uri=True)
    header = (home / "cache/store.db").read_bytes()[:100]
    assert header[:16] == b"SQLite format 3\x00"
    assert header[18:20] == b"\x02\x02"  # file format write/read versions 2: WAL journal mode
    assert db.execute("SELECT value FROM meta WHERE key='version'").fetchone() == ("1",)
    cols = [r[1] for r in db.execute("PRAGMA table_info(entries)")]
    assert cols == ["entry_id", "session_id", "project_hash", "parent_id", "ts", "kind", "role", "provider", "model",
                    "tool_name", "content_text", "is_error"]  # fmt: skip
    ledger_ids: dict[str, tuple[str, str, str]] = {}
    for path in _ledgers(home):
        for e in SessionLog.open_read_only(path).entries:
            ledger_ids[e.id] = (path.stem, path.parent.name, e.kind)
    rows = db.execute("SELECT entry_id, session_id, project_hash, kind, ts FROM entries").fetchall()
    assert rows
    for entry_id, session_id, project_hash, kind, ts in rows:
        assert ledger_ids[entry_id] == (session_id, project_hash, kind)
        assert ts.endswith("+00:00")
        assert kind in ("header", "message", "compaction", "receipt", "goal", "activity", "work")
    fts = db.execute("SELECT count(*) FROM entries_fts WHERE entries_fts MATCH 'the'").fetchone()[0]
    assert fts > 0


def test_config_files_follow_their_shapes(home: Path) -> None:
    tasks = json.loads((home / "tasks.json").read_text(encoding="utf-8"))
    assert isinstance(tasks, list) and tasks
    assert [t["created_at"] for t in tasks] == sorted(t["created_at"] for t in tasks)
    for t in tasks:
        assert {"id", "name", "prompt", "interval_secs", "enabled", "cwd", "created_at", "last_wt", "schedule",
                "script", "model_pin"} <= t.keys()  # fmt: skip
    for marker in (home / "trusted").iterdir():
        assert marker.name == workspace_key(marker.read_text(encoding="utf-8"))
    assert (home / "gateway/default-workspace").read_text(encoding="utf-8").endswith("\n")
    pres = json.loads((home / "agents/vak/presentations.json").read_text(encoding="utf-8"))
    assert pres["schema_version"] == 1 and pres["definitions"]
