"""The 7.0 REGISTRY (baseline7.md §2.6, 69 entries) as artifact kinds.

The table below is copied by hand from the spec: per entry, its root and path, and one concrete
file vak writes under it in a ``VAK_HOME`` home (data root = the home, cache = ``cache/``, logs =
``logs/``, runtime = ``runtime/``, shared = ``vak-home/``, baseline7.md §2.1). Each such file must
classify to a kind that names that entry; every entry must be named by some kind; a home holding
one file per entry has no undeclared file, and its files' sizes add up to the home.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vakaudit.artifacts import UNCLASSIFIED, all_kinds, classify

T = "tenants/ten_00000000-0000-7602-9145-b8d712473797"
SID = "0199c3a0-7b00-7000-8000-0000000000aa"
SPC = "spc_0199c3a0-7b00-7000-8000-000000000001"
SCOPE_HEX = b"conversation:0199c3a0".hex()
OBJ = "8ec24da8588e7b272e46a0714497870fbfc1dffaf7beb542478e9697e4656814"

# (entry, example file vak writes under it)
ENTRIES: list[tuple[int, str]] = [
    (1, f"{T}/auth/passkeys.json"),
    (2, f"{T}/store/cas/objects/8e/{OBJ[2:]}"),
    (2, f"{T}/store/cas/grants/{OBJ}/{SCOPE_HEX}"),
    (2, f"{T}/store/cas/tmp/4242-1"),
    (2, f"{T}/store/refs.db"),
    (2, f"{T}/store/refs.db-wal"),
    (2, f"{T}/store/refs.db-shm"),
    (3, f"{T}/catalog/catalog.db"),
    (3, f"{T}/catalog/catalog.db-wal"),
    (4, f"{T}/keys/LOCK"),
    (4, f"{T}/keys/revoked"),
    (4, f"{T}/keys/scopes/keys/{SCOPE_HEX}"),
    (4, f"{T}/keys/scopes/tombstones/{SCOPE_HEX}"),
    (4, f"{T}/keys/scopes/holds/{SCOPE_HEX}"),
    (5, f"{T}/spaces.toml"),
    (6, f"{T}/spaces.lock"),
    (7, f"{T}/environments/run_1/src/main.rs"),
    (8, f"{T}/workspaces/{SPC}/helper/notes.log"),
    (9, f"agents/vak/sessions/{SPC}/{SID}/seg-00000001.log"),
    (9, f"agents/vak/sessions/{SPC}/{SID}/seg-00000001.sealed"),
    (9, f"agents/vak/sessions/{SPC}/{SID}/seg-00000002.sealing"),
    (9, f"agents/vak/sessions/{SPC}/{SID}/seals.log"),
    (9, f"agents/vak/sessions/{SPC}/{SID}/LOCK"),
    (9, f"agents/vak/sessions/{SPC}/{SID}/KEY"),
    (10, f"agents/vak/checkpoints/{SID}/0000.json"),
    (11, "agents/vak/skills/review/SKILL.md"),
    (12, "agents/vak/commitments/seg-00000001.log"),
    (13, "agents/vak/routing-evidence/seg-00000001.log"),
    (14, "agents/vak/intent-evidence/seals.log"),
    (15, "agents/vak/security-events/seg-00000001.log"),
    (16, "agents/vak/cost-log/seg-00000003.sealed"),
    (17, "agents/vak/activity-log/LOCK"),
    (18, "agents/vak/flow-runs/run.json"),
    (19, "agents/vak/agent-network/peers.json"),
    (20, "agents/vak/mail-calendar/ledger.enc"),
    (21, "agents/vak/sandbox/records/seg-00000001.log"),
    (21, f"agents/vak/sandbox/executions/{SID}/seg-00000001.log"),
    (21, f"agents/vak/sandbox/executions/{SID}/KEY"),
    (21, "agents/vak/sandbox/candidates/c1/file.txt"),
    (22, "agents/vak/coworking/state.json"),
    (23, f"agents/vak/canvas/{SID}.json"),
    (24, "security-events/seg-00000001.log"),
    (25, "activity-log/seg-00000001.log"),
    (26, "credential_index.json"),
    (27, "budget-alerts/seg-00000001.log"),
    (28, "runs/seg-00000001.log"),
    (29, "effects/seg-00000001.log"),
    (30, "grants/seg-00000001.log"),
    (31, "erased/receipt.json"),
    (32, "sync/state.json"),
    (33, "key-rotations/seg-00000001.log"),
    (34, "erasures/seals.log"),
    (35, "lifecycle/seg-00000001.log"),
    (36, "artifacts/seg-00000001.log"),
    (37, "intake/seg-00000001.log"),
    (38, "cursors/seg-00000001.log"),
    (39, "cost-log/seg-00000001.log"),
    (40, "routing-evidence/seg-00000001.log"),
    (41, "social-x-usage.json"),
    (42, "inbox/seg-00000001.log"),
    (43, "operations/incidents/seg-00000001.log"),
    (43, "operations/actions/seg-00000001.log"),
    (44, f"checkpoints/{SID}/0001.json"),
    (45, "learning/notes.md"),
    (46, "gateway/bots.json"),
    (46, "gateway/deliveries/seg-00000001.log"),
    (47, "agent-network/config.json"),
    (48, "desktop.json"),
    (49, "tray.json"),
    (50, f"trusted/{SPC}"),
    (51, "output.toml"),
    (52, "flows/daily.toml"),
    (53, "flow-runs/r1.json"),
    (54, "skills/triage/SKILL.md"),
    (55, "credentials.enc"),
    (56, ".credential_key"),
    (57, ".credential_key.lock"),
    (58, "vak-home/.env"),
    (59, "vak-home/.vak/config.toml"),
    (60, "vak-home/.vak/skills/mine/SKILL.md"),
    (61, "vak-home/.vak/.seed-manifest.json"),
    (62, "vak-home/.vak/plugins/p/plugin.toml"),
    (63, "locks/server.lock"),
    (64, "broker.sock"),
    (65, "release/current.json"),
    (66, "vak-home/notes.txt"),
    (67, "runtime/executions/spc_x/vak/exe_1/cache/t.bin"),
    (68, "logs/vak-server.jsonl"),
    (69, "cache/models.json"),
]


def test_the_table_holds_all_69_entries() -> None:
    assert sorted({n for n, _ in ENTRIES}) == list(range(1, 70))


@pytest.mark.parametrize(("entry", "rel"), ENTRIES, ids=[f"{n}:{r}" for n, r in ENTRIES])
def test_each_registry_entry_file_classifies_to_a_kind_naming_the_entry(entry: int, rel: str) -> None:
    kind = classify(rel)
    assert kind.name != UNCLASSIFIED, rel
    assert kind.v7 is not None and entry in kind.v7.entries, (rel, kind.name)
    assert "g3" in kind.layouts


def test_every_registry_entry_is_named_by_a_kind_and_only_existing_entries_are() -> None:
    named = {n for k in all_kinds() if k.v7 is not None for n in k.v7.entries}
    assert named == set(range(1, 70))


def test_secret_entries_are_never_opened() -> None:
    for rel in ("credentials.enc", ".credential_key", "vak-home/.env", "credentials.enc.tmp"):
        assert classify(rel).secret, rel


def test_a_jsonl_era_home_keeps_its_kinds() -> None:
    # the JSONL forms of the kinds that became record chains still land where they did
    assert classify("agents/vak/cost-log.jsonl").name == "cost_log"
    assert classify("agents/vak/sessions/2599eb06cf360587/s1.jsonl").name == "session_ledger"
    assert classify("agents/vak/sessions/2599eb06cf360587/s1.jsonl").session_id_of(
        "agents/vak/sessions/2599eb06cf360587/s1.jsonl"
    ) == "s1"
    # a 7.0 ledger's segment is the ledger kind, not the *.log catch-all, and names its session
    seg = f"agents/vak/sessions/{SPC}/{SID}/seg-00000001.log"
    kind = classify(seg)
    assert kind.name == "session_ledger" and kind.session_id_of is not None
    assert kind.session_id_of(seg) == SID


def test_layouts_say_which_generation_a_kind_belongs_to() -> None:
    by_name = {k.name: k for k in all_kinds()}
    assert by_name["cost_log"].layouts == ("g1", "g2", "g3")
    assert by_name["objects"].layouts == ("g3",)
    assert by_name["store_db"].layouts == ("g1", "g2")
    assert by_name["feeds_store"].layouts == ("g1", "g2")


def build_v7_tree(home: Path) -> int:
    """One file per REGISTRY example, each of a distinct size; returns the total bytes written."""
    total = 0
    for i, (_, rel) in enumerate(ENTRIES):
        p = home / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"x" * (i + 1))
        total += i + 1
    return total


def test_a_home_with_a_file_per_entry_has_no_undeclared_file_and_sums_to_the_home(tmp_path: Path) -> None:
    from vakaudit.scan import scan_home

    home = tmp_path / "home"
    total = build_v7_tree(home)
    on_disk = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(home) for f in fs)
    assert on_disk == total
    res = scan_home(home, out=tmp_path / "out", jobs=1)
    assert res.layout == "g3"
    files = res.table("files").to_pylist()
    assert len(files) == len(ENTRIES)
    assert sum(r["size_bytes"] for r in files) == total
    assert UNCLASSIFIED not in {r["kind"] for r in files}
    assert "undeclared_file" not in res.findings_by_code()
    shares = res.duckdb().execute(
        "SELECT sum(b) / (SELECT sum(size_bytes) FROM files) FROM "
        "(SELECT kind, sum(size_bytes) AS b FROM files GROUP BY kind)"
    ).fetchone()[0]
    assert shares == pytest.approx(1.0)


def test_kinds_json_adds_the_layouts_and_the_7_0_registry_place() -> None:
    import json

    from typer.testing import CliRunner

    from vakaudit.cli import app

    res = CliRunner().invoke(app, ["kinds", "--json"])
    assert res.exit_code == 0
    rows = {r["name"]: r for r in json.loads(res.stdout)["kinds"]}
    # the JSONL-era fields are unchanged; layouts and v7 are added
    assert rows["cost_log"]["patterns"] == ["**/cost-log.jsonl", "**/cost-log.jsonl.compact.tmp"]
    assert rows["cost_log"]["layouts"] == ["g1", "g2", "g3"]
    assert rows["cost_log"]["v7"]["patterns"] == ["**/cost-log/*"]
    assert rows["cost_log"]["v7"]["registry_entries"] == [16, 39]
    assert rows["cost_log"]["v7"]["card"]["barriers_per_write"] == 1
    assert rows["refs"]["layouts"] == ["g3"] and rows["refs"]["patterns"] == []
    assert rows["store_db"]["v7"] is None
    text = CliRunner().invoke(app, ["kinds"]).stdout
    line = next(x for x in text.splitlines() if x.startswith("objects "))
    assert " g3 " in line and "tenants/*/store/cas/objects/**" in line
