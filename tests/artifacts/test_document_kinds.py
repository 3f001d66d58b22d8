"""Document-like kinds: memory notes, delivery job history, flow runs, skill proposals, skills."""

from __future__ import annotations

from artifact_kind_helpers import FIXTURES, run_reader, utc

from vakaudit.ledger.keys import fnv1a64

SID = "01920d6e-8f1a-7c3b-9a55-2f0e6b7d4c10"
HEADER1 = f"## 2026-08-23T12:00:00.123456789+00:00 [decision] tag=deploy session={SID}"


def test_fnv1a_vectors_used_for_note_ids() -> None:
    # published FNV-1a 64 test vectors
    assert f"{fnv1a64(b''):016x}" == "cbf29ce484222325"
    assert f"{fnv1a64(b'a'):016x}" == "af63dc4c8601ec8c"


def test_memory_notes_are_parsed_like_vak() -> None:
    rel = "agents/vak/memory/9c1d3e5f7a2b4c6d/MEMORY.md"
    rows, findings = run_reader("memory", FIXTURES / "memory", rel)
    assert findings == []
    keys = (
        "line_no",
        "offset_bytes",
        "size_bytes",
        "note_id",
        "ts",
        "kind",
        "tag",
        "session",
        "text_bytes",
        "body_lines",
    )
    assert [tuple(r[k] for k in keys) for r in rows] == [
        (1, 0, 16, None, None, None, None, None, None, 1),  # preamble before the first header
        # header 106 + body 44 + blank 1 + "## not a timestamp line" 24 (a body line, not a header)
        (
            2,
            16,
            175,
            f"{fnv1a64(HEADER1.encode()):016x}",
            "2026-08-23T12:00:00.123456789+00:00",
            "decision",
            "deploy",
            SID,
            43 + 2 + 23,
            3,
        ),
        # no tag=: the leftover tokens become the tag; kind defaults to note
        (
            6,
            191,
            61,
            f"{fnv1a64(b'## 2026-08-24T08:00:00Z old-style free tag'):016x}",
            "2026-08-24T08:00:00Z",
            "note",
            "old-style free tag",
            None,
            17,
            1,
        ),
        (
            8,
            252,
            53,
            f"{fnv1a64(b'## 2026-08-24T09:00:00Z [fact] tag=empty session=s2'):016x}",
            "2026-08-24T09:00:00Z",
            "fact",
            "empty",
            "s2",
            0,
            1,
        ),  # empty body: vak drops this note
    ]
    assert sum(r["size_bytes"] for r in rows) == 305
    assert rows[1]["ts_at"] == utc(2026, 8, 23, 12, 0, 0, 123456)
    assert {(r["memory_scope"], r["tier"]) for r in rows} == {("9c1d3e5f7a2b4c6d", "workspace")}


def test_user_memory_and_lock_file() -> None:
    home = FIXTURES / "memory"
    rows, _ = run_reader("memory", home, "agents/vak/memory/user/USER.md")
    assert [
        (r["memory_scope"], r["tier"], r["kind"], r["tag"], r["session"], r["text_bytes"]) for r in rows
    ] == [("user", "profile", "preference", "style", "s0", 22)]
    assert run_reader("memory", home, "agents/vak/memory/9c1d3e5f7a2b4c6d/MEMORY.lock") == ([], [])


def test_delivery_job_history_rows() -> None:
    name = "7461736b2f742d6d6f726e696e672f323032362d30382d3234.json"  # hex of the job id
    rows, findings = run_reader("delivery_jobs", FIXTURES / "delivery_jobs", f"delivery/jobs/{name}")
    assert findings == []
    keys = (
        "line_no",
        "file_job_id",
        "job_id",
        "target",
        "kind",
        "content_type",
        "markup",
        "text",
        "state",
        "attempts",
        "created_at_ms",
        "updated_at_ms",
        "packet_surface",
        "last_error",
    )
    common = (
        "task/t-morning/2026-08-24",
        "task/t-morning/2026-08-24",
        "telegram:123456",
        "task_summary",
        "text",
        "telegram_html",
        "Digest ready",
    )
    assert [tuple(r[k] for k in keys) for r in rows] == [
        (1, *common, "pending", 0, 1787554803120, 1787554803120, None, None),
        (2, *common, "delivered", 1, 1787554803120, 1787554804500, "telegram", None),
    ]


def test_flow_run_documents() -> None:
    home = FIXTURES / "flow_runs"
    rows, findings = run_reader("flow_runs", home, "agents/vak/flow-runs/nightly/1787554800000000000.json")
    assert findings == []
    assert rows == [
        {
            "rel_path": "agents/vak/flow-runs/nightly/1787554800000000000.json",
            "home_scope": "agents/vak/flow-runs/nightly",
            "run_kind": "cli",
            "run_id": "run-1",
            "flow_name": "nightly",
            "started_at": utc(2026, 8, 24, 2, 0, 0),
            "definition_bytes": 24,  # '[flow]\nname = "nightly"\n'
            "node_count": 3,
            "nodes_pending": 1,
            "nodes_running": 0,
            "nodes_completed": 1,
            "nodes_failed": 1,
            "nodes_skipped": 0,
            "node_status": '{"a":"completed","b":"failed","c":"pending"}',
            "output_bytes": 4 + 4 + 4,  # "ok", null, null as JSON
        }
    ]
    rows, _ = run_reader("flow_runs", home, "agents/vak/flow-runs/plan-1787554800000000000-1.json")
    assert [(r["run_kind"], r["run_id"], r["node_count"], r["definition_bytes"]) for r in rows] == [
        ("plan", "plan-1", 0, 0)
    ]


def test_broken_flow_run_is_a_null_row_and_a_finding(tmp_path) -> None:
    (tmp_path / "flow-runs").mkdir()
    (tmp_path / "flow-runs" / "plan-1-1.json").write_bytes(b'{"run_id": "x", ')
    rows, findings = run_reader("flow_runs", tmp_path, "flow-runs/plan-1-1.json")
    assert [(r["run_kind"], r["run_id"]) for r in rows] == [("plan", None)]
    assert [f.code for f in findings] == ["sidecar_unparseable_row"]


def test_skill_proposal_front_matter_and_trailer() -> None:
    home = FIXTURES / "skill_proposals"
    rel = "agents/vak/skill-proposals/9c1d3e5f7a2b4c6d/0192a1b03c4d7e5f8a9b0c1d2e3f4a5b.md"
    rows, _ = run_reader("skill_proposals", home, rel)
    assert rows == [
        {
            "rel_path": rel,
            "home_scope": "agents/vak/skill-proposals/9c1d3e5f7a2b4c6d",
            "proposals_scope": "9c1d3e5f7a2b4c6d",
            "proposal_id": "0192a1b03c4d7e5f8a9b0c1d2e3f4a5b",
            "name": "release-notes",
            "description": "Draft release notes from merged PRs",
            "duplicate_of": "changelog",
            "proposed_by": SID,
            "proposed_at": utc(2026, 8, 24, 10, 0, 0),
            "size_bytes": (home / rel).stat().st_size,
            "line_count": 9,
        }
    ]


def test_skill_rows_only_for_skill_md() -> None:
    home = FIXTURES / "skills"
    rows, _ = run_reader("skills", home, "skills/release-notes/SKILL.md")
    assert [(r["skill_dir"], r["name"], r["description"], r["line_count"]) for r in rows] == [
        ("release-notes", "release-notes", "Draft release notes from merged PRs", 5)
    ]
    assert run_reader("skills", home, "skills/release-notes/run.sh") == ([], [])
