"""`vakaudit synth --layout v7`: the seeded workload in vak's 7.0 layout, read back by vakaudit's
verify and scan and compared with the G2 home of the same seed (baseline7.md §3-§10)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import jsonschema
import pytest
from typer.testing import CliRunner

import vakaudit.cli
from vakaudit.storage import KeyRing, TenantKeys, read_segments
from vakaudit.storage.keys import LOCAL_TENANT

SEED = 3
#: the entries the 7.0 layout adds before a tool-result message (a G2 ledger has none)
ADDED = ("evidence_body", "call_effect")
TENANT = f"tenants/{LOCAL_TENANT}"


def _run(*args: str):
    return CliRunner().invoke(vakaudit.cli.app, list(args))


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("synth7")
    v7, g2, keys, record = root / "v7", root / "g2", root / "keys.json", root / "record.json"
    r = _run("synth", str(v7), "--layout", "v7", "--keys-out", str(keys), "--record", str(record),
             "--seed", str(SEED), "--no-fsync", "-q")
    assert r.exit_code == 0, r.output
    r = _run("synth", str(g2), "--layout", "g2", "--seed", str(SEED), "--no-fsync", "-q")
    assert r.exit_code == 0, r.output
    return {"root": root, "v7": v7, "g2": g2, "keys": keys, "record": record}


def _snapshot(home: Path) -> dict[str, tuple[bytes, int]]:
    out = {}
    for dirpath, _dirs, files in os.walk(home):
        for name in files:
            p = Path(dirpath, name)
            out[p.relative_to(home).as_posix()] = (p.read_bytes(), p.stat().st_mtime_ns)
    return out


def test_v7_needs_keys_out_outside_the_home(tmp_path: Path) -> None:
    r = _run("synth", str(tmp_path / "h"), "--layout", "v7", "--no-fsync")
    assert r.exit_code == 2 and "needs --keys-out" in r.output
    r = _run("synth", str(tmp_path / "h"), "--layout", "v7", "--keys-out", str(tmp_path / "h" / "k.json"))
    assert r.exit_code == 2 and "inside the home" in r.output
    r = _run("synth", str(tmp_path / "h"), "--layout", "v7", "--keys-out", "-")
    assert r.exit_code == 2 and "never printed" in r.output
    r = _run("synth", str(tmp_path / "h"), "--layout", "g2", "--keys-out", str(tmp_path / "k.json"))
    assert r.exit_code == 2 and "v7 only" in r.output
    assert not (tmp_path / "h").exists() and not (tmp_path / "k.json").exists()


def test_the_key_file_opens_the_home_and_no_key_is_inside_it(homes: dict[str, Path]) -> None:
    doc = json.loads(homes["keys"].read_text(encoding="utf-8"))
    assert set(doc) == {"keks", "object_id_key"} and set(doc["keks"]) == {"0"}
    ring = KeyRing.from_file(homes["keys"])
    secrets = [bytes.fromhex(doc["keks"]["0"]), bytes.fromhex(doc["object_id_key"])]
    for data, _ in _snapshot(homes["v7"]).values():
        for s in secrets:
            assert s not in data and s.hex().encode() not in data
    # every conversation's scope key unwraps with the KEK of the key file
    tk = TenantKeys(homes["v7"] / TENANT / "keys", ring)
    ledgers = sorted(p for p in (homes["v7"] / "agents/vak/sessions").glob("*/*") if p.is_dir())
    assert ledgers
    for d in ledgers:
        assert (d / "KEY").read_text(encoding="utf-8") == f"conversation:{d.name}"
        assert tk.chain_key(d).key is not None


def _verify(home: Path, *extra: str) -> tuple[int, list[dict]]:
    r = _run("verify", str(home), "--json", *extra)
    return r.exit_code, json.loads(r.stdout)["findings"]


@pytest.mark.parametrize("unlock", [True, False])
def test_verify_is_clean(homes: dict[str, Path], unlock: bool) -> None:
    extra = ("--keys", str(homes["keys"])) if unlock else ()
    before = _snapshot(homes["v7"])
    for threshold in ("critical", "error", "warning"):
        code, findings = _verify(homes["v7"], "--fail-on", threshold, *extra)
        assert code == 0, findings
    code, findings = _verify(homes["v7"], "--fail-on", "info", *extra)
    # what every 7.0 home gets (the layout note) and the secret file of the default workspace,
    # both info; nothing else, keyless or not
    assert {f["code"] for f in findings} == {"tenant_store_home", "secret_file"}
    assert all(f["severity"] == "info" for f in findings)
    assert _snapshot(homes["v7"]) == before


def _g2_ledgers(g2: Path) -> dict[str, list[dict]]:
    out = {}
    for p in sorted(g2.glob("agents/vak/sessions/*/*.jsonl")):
        out[p.stem] = [json.loads(line) for line in p.read_bytes().splitlines()]
    return out


def _v7_entries(v7: Path, keys: Path) -> dict[str, list[dict]]:
    tk = TenantKeys(v7 / TENANT / "keys", KeyRing.from_file(keys))
    out = {}
    for d in sorted(p for p in (v7 / "agents/vak/sessions").glob("*/*") if p.is_dir()):
        s = read_segments(d, tk.chain_key(d).key)
        assert not s.findings
        out[d.name] = [json.loads(fr.entry) for seg in s.segments for fr in seg.chain.frames]
    return out


def _texts(entries: list[dict]) -> list[tuple[str, str]]:
    got = []
    for e in entries:
        if e.get("kind") != "message":
            continue
        msg = e["message"]
        content = msg.get("content")
        text = content if isinstance(content, str) else "".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
        got.append((msg["role"], text))
    return got


def test_frames_hold_the_g2_conversation(homes: dict[str, Path]) -> None:
    g2 = _g2_ledgers(homes["g2"])
    v7 = _v7_entries(homes["v7"], homes["keys"])
    assert set(v7) == set(g2) and len(g2) >= 5
    for sid, lines in g2.items():
        entries = v7[sid]
        assert _texts(entries) == _texts(lines)
        # the 7.0 envelope: no prev_hash anywhere; activities without the 2.x turn field
        assert not any("prev_hash" in e for e in entries)
        assert not any("turn" in e for e in entries if e["kind"] == "activity")
        # per tool result, before the message that carries it: its evidence_body (and a call_effect
        # when the call read or wrote a file)
        for i, e in enumerate(entries):
            if e["kind"] == "call_effect":
                assert e["effect"]["kind"] in ("file_read", "file_write") and e["effect"]["path"]
                assert entries[i + 1]["kind"] == "evidence_body"
                assert entries[i + 1]["tool_use_id"] == e["tool_use_id"]
            if e["kind"] == "evidence_body":
                nxt = next(x for x in entries[i + 1 :] if x["kind"] not in ADDED)
                assert e["tool_use_id"] in {b.get("tool_use_id") for b in nxt["message"]["content"]}
                assert set(e["body"]) == {"id", "len"}
        # a binding whose digest equals the previous one is a ref to it
        bound = {e["id"] for e in entries if e["kind"] == "turn_capabilities_bound"}
        for e in entries:
            if e["kind"] == "turn_capabilities_bound":
                assert set(e["interface"]) == {"id", "len"} and "system_prompt" not in e
            if e["kind"] == "turn_capabilities_ref":
                assert e["entry"] in bound


def _mapped_kinds(kinds: list[str | None]) -> list[str | None]:
    return [("turn_capabilities_bound" if k == "turn_capabilities_ref" else k) for k in kinds if k not in ADDED]


def test_scan_gives_the_g2_conversation(homes: dict[str, Path]) -> None:
    root = homes["root"]
    for name, home, extra in (("g2s", homes["g2"], ()), ("v7k", homes["v7"], ("--keys", str(homes["keys"]))),
                              ("v7s", homes["v7"], ())):
        r = _run("scan", str(home), "--out", str(root / name), "-q", "-j", "1", *extra)
        assert r.exit_code == 0, r.output
    con = duckdb.connect()

    def rows(name: str) -> dict[str, list[tuple]]:
        q = (f"select session_id, kind, role, turn_no, sealed, stored_bytes from "
             f"read_parquet('{root / name}/entries/**/*.parquet') order by rel_path, segment, frame_index, line_no")
        out: dict[str, list[tuple]] = {}
        for sid, *rest in con.execute(q).fetchall():
            out.setdefault(sid, []).append(tuple(rest))
        return out

    g2, v7k, v7s = rows("g2s"), rows("v7k"), rows("v7s")
    assert set(g2) == set(v7k) == set(v7s)
    for sid in g2:
        assert _mapped_kinds([r[0] for r in v7k[sid]]) == [r[0] for r in g2[sid]]
        keep = [r for r in v7k[sid] if r[0] not in ADDED]
        assert [(r[1], r[2]) for r in keep] == [(r[1], r[2]) for r in g2[sid]]
        # keyless: the same frames, sealed, with their stored sizes and no plaintext column
        assert [(r[3], r[4]) for r in v7s[sid]] == [(True, r[4]) for r in v7k[sid]]
        assert all(r[0] is None for r in v7s[sid])
    # the record counts what the scan reads from the disk: frames and stored bytes per entry kind
    record = json.loads(homes["record"].read_text(encoding="utf-8"))
    by_kind = dict(con.execute(
        f"select kind, sum(stored_bytes) from read_parquet('{root / 'v7k'}/entries/**/*.parquet') group by 1"
    ).fetchall())
    assert {k: v["stored_bytes"] for k, v in record["entry_kinds"].items()} == by_kind
    assert record["ledger_entries"] == sum(len(v) for v in v7k.values())


def test_the_record_counts_syncs_at_the_commit_points(homes: dict[str, Path]) -> None:
    record = json.loads(homes["record"].read_text(encoding="utf-8"))
    commit_points = effects = 0
    for entries in _v7_entries(homes["v7"], homes["keys"]).values():
        for e in entries:  # §8.3, counted on the entries read back from the frames
            k = e["kind"]
            effects += k == "call_effect"
            if k in ("header", "turn_card", "call_effect") or (
                k == "activity" and "request_id" in e.get("data", {})
            ) or (k == "message" and e["message"]["role"] == "user" and not (e.get("meta") or {}).get("control")):
                commit_points += 1
    sessions = record["sessions"]
    sealed = record["sealed_segments"]
    assert effects > 0
    # a sync per commit point, at most one more per session (the close) and per sealing (4 + 1)
    assert commit_points <= record["syncs"]["ledger"] <= commit_points + sessions + 5 * sealed
    assert record["turns"] == 24 and record["layout"] == "v7" and record["seed"] == SEED
    assert record["ledger_syncs_per_turn"] == round(record["syncs"]["ledger"] / 24, 2)


def test_same_seed_same_bytes_other_seed_other_bytes(homes: dict[str, Path], tmp_path: Path) -> None:
    again, keys = tmp_path / "again", tmp_path / "k.json"
    r = _run("synth", str(again), "--layout", "v7", "--keys-out", str(keys), "--seed", str(SEED), "--no-fsync", "-q")
    assert r.exit_code == 0, r.output
    a = {k: v[0] for k, v in _snapshot(homes["v7"]).items()}
    b = {k: v[0] for k, v in _snapshot(again).items()}
    assert a == b
    assert keys.read_bytes() == homes["keys"].read_bytes()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".again.g2-")]  # staging removed
    other = tmp_path / "other"
    r = _run("synth", str(other), "--layout", "v7", "--keys-out", str(tmp_path / "k2.json"), "--seed",
             str(SEED + 1), "--no-fsync", "-q")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "k2.json").read_bytes() != keys.read_bytes()


def test_the_tenant_store_holds_refs_documents_and_the_catalog(homes: dict[str, Path]) -> None:
    import sqlite3

    t = homes["v7"] / TENANT
    con = sqlite3.connect(f"file:{t / 'store/refs.db'}?mode=ro", uri=True)
    names = [n for (n,) in con.execute("select name from refs")]
    con.close()
    g2 = _g2_ledgers(homes["g2"])
    admissions = sum(1 for lines in g2.values() for e in lines
                     if e["kind"] == "activity" and "request_id" in e.get("data", {}))
    assert sum(n.startswith("req/") for n in names) == admissions > 0
    assert any(n.startswith("doc/agents/vak/memory/spc_") for n in names) and "_store/commit" in names
    con = sqlite3.connect(f"file:{t / 'catalog/catalog.db'}?mode=ro", uri=True)
    assert con.execute("select value from meta where key='schema'").fetchone() == ("2",)
    assert con.execute("select count(*) from nodes where kind='session'").fetchone() == (len(g2),)
    con.close()
    assert not (homes["v7"] / "cache/store.db").exists()
    assert (t / "spaces.toml").read_text(encoding="utf-8").startswith('[spaces."spc_')


def test_record_to_standard_output(tmp_path: Path) -> None:
    r = _run("synth", str(tmp_path / "h"), "--layout", "v7", "--keys-out", str(tmp_path / "k.json"),
             "--record", "-", "--turns", "4", "--sessions", "1", "--no-fsync", "-q")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    schema = json.loads((Path(__file__).resolve().parents[2] / "docs/schemas/synth.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert doc["schema_version"] == "1.0" and doc["turns"] == 4 and doc["sessions"] == 1
    assert "wrote" in r.stderr and not (tmp_path / "-").exists()
