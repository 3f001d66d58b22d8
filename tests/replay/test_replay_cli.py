"""`vakaudit replay` through typer's CliRunner: exit codes, --json, --export, --diff, home discovery."""

from __future__ import annotations

import json

from replay_ledgers import BASH, FIND_TOOLS, READ, WRITE, Plan, write_ledger
from typer.testing import CliRunner

import vakaudit.cli

runner = CliRunner()


def invoke(*args):
    return runner.invoke(vakaudit.cli.app, ["replay", *map(str, args)])


def test_clean_ledger_exits_0_with_summary(make_ledger):
    path, _ = make_ledger()
    r = invoke(path)
    assert r.exit_code == 0, r.output
    assert "steps replayed: 8" in r.output
    assert "prefix_digest" in r.output


def test_failed_check_exits_1(make_ledger):
    path, _ = make_ledger(Plan(logged_tools={2: [FIND_TOOLS, BASH, READ]}))
    r = invoke(path)
    assert r.exit_code == 1
    assert "prefix_digest × 2: fail" in r.output


def test_usage_errors_exit_2(make_ledger, tmp_path):
    path, _ = make_ledger()
    assert invoke(tmp_path / "missing").exit_code == 2
    assert invoke(path, "--provider", "google").exit_code == 2
    assert invoke(path, "--regime", "C").exit_code == 2


def test_json_lists_every_step_with_ids_and_statuses(make_ledger):
    path, facts = make_ledger(Plan(tools_by_turn={3: [FIND_TOOLS, READ, BASH, WRITE]}, skip_activity={3}))
    r = invoke(path, "--json")
    assert r.exit_code == 1
    doc = json.loads(r.output)
    steps = doc["steps"]
    assert [(s["turn"], s["step"]) for s in steps] == [(k, j) for k in range(1, 5) for j in (1, 2)]
    for s in steps:
        assert s["session_id"] == "s1"
        assert s["receipt_id"] == facts["receipts"][(s["turn"], s["step"])]
        for c in s["checks"]:
            assert c["status"] in ("pass", "fail", "not_checkable")
            assert isinstance(c["reason"], str)
    failed = [(s["turn"], s["step"], c["name"]) for s in steps for c in s["checks"] if c["status"] == "fail"]
    assert failed == [(3, 1, "prefix_changed_activity")]
    assert steps[4]["prefix_break"]["tools_added"] == ["write"]


def test_filters_and_export(make_ledger, tmp_path):
    path, facts = make_ledger()
    out = tmp_path / "requests.jsonl"
    r = invoke(path, "--turn", 2, "--step", 2, "--provider", "openai", "--export", out)
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 1
    row = rows[0]
    assert (row["turn"], row["step"], row["receipt_id"]) == (2, 2, facts["receipts"][(2, 2)])
    assert row["body"]["messages"][0]["role"] == "system"
    assert row["neutral"]["cache"]["session_key"] == "s1"


def test_diff_shows_what_the_next_step_added(make_ledger):
    path, _ = make_ledger()
    r = invoke(path, "--turn", 1, "--diff")
    assert r.exit_code == 0, r.output
    assert "--- s1 turn 1 step 2" in r.output
    assert '"common_prefix_messages": 0' in r.output  # the tail moved off the directive


def test_home_with_root_and_agent_sessions(tmp_path):
    home = tmp_path / "home"
    write_ledger(home / "sessions" / "aaaa" / "one.jsonl", Plan(turns=1))
    write_ledger(home / "agents" / "vak" / "sessions" / "bbbb" / "two.jsonl", Plan(turns=2))
    (home / "sessions" / "aaaa" / "agent-admission.lock").write_text("")
    r = invoke(home, "--json")
    assert r.exit_code == 0, r.output
    sessions = [s["session_id"] for s in json.loads(r.output)["steps"]]
    assert sorted(set(sessions)) == ["one", "two"]
    assert len(sessions) == 2 + 4
    r = invoke(home, "--session", "two", "--json")
    assert {s["session_id"] for s in json.loads(r.output)["steps"]} == {"two"}
