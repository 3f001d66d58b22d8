"""Replay of 7.0 homes: conversation directories of sealed frames, interfaces and evidence as objects.

Expectations come from outside the 7.0 path: the sample home's writer (``sample_homes/make_v7.py``:
one interface object ``{"system_prompt": "You are vak.", ...}``), the receipts' own recorded digests,
and the same seed written as a JSONL (g2) home, replayed through the JSONL path.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vakaudit.cli import app
from vakaudit.replay import conversation_dirs, iter_requests, open_v7_ledger, serialize
from vakaudit.replay.checks import CHECK_NAMES
from vakaudit.storage import KeyRing
from vakaudit.storage.objects import object_rel_path
from vakaudit.storage.tenant_writer import json_key_file_text
from vakaudit.synth import build_home

SEED = 3


@pytest.fixture(scope="module")
def homes(tmp_path_factory) -> tuple[Path, Path, Path]:
    """``(g2 home, v7 home, v7 key file)`` of the same seed."""
    base = tmp_path_factory.mktemp("v7replay")
    g2 = base / "g2"
    build_home(g2, profile="tiny", seed=SEED, fsync=False)
    v7 = base / "v7"
    result = build_home(v7, profile="tiny", seed=SEED, layout="v7", fsync=False)
    keys = base / "keys.json"
    keys.write_text(json_key_file_text({0: result.keys.kek}, result.keys.id_key), encoding="utf-8")
    return g2, v7, keys


def _steps(home: Path, keys: Path | None = None) -> dict[tuple, object]:
    ring = KeyRing.from_file(keys) if keys is not None else None
    return {(s.session_id, s.turn, s.step, s.receipt_id): s for s in iter_requests(home, keys=ring)}


def _cli(*args: str):
    return CliRunner().invoke(app, ["replay", *args, "-q"])


def test_v7_synth_home_replays_to_the_same_requests_as_its_g2_twin(homes) -> None:
    g2, v7, keys = homes
    jsonl, frames = _steps(g2), _steps(v7, keys)
    assert jsonl and set(frames) == set(jsonl)
    for k, s in jsonl.items():
        t = frames[k]
        assert t.computed_digest == s.computed_digest, k
        assert serialize(t.request, "anthropic") == serialize(s.request, "anthropic"), k
        assert serialize(t.request, "openai") == serialize(s.request, "openai"), k
        assert t.message_chars == s.message_chars, k
    # the receipts' own record: every recorded prefix digest is what the 7.0 replay computes
    recorded = [(t.recorded_digest, t.computed_digest) for t in frames.values() if t.recorded_digest]
    assert recorded and all(r == c for r, c in recorded)


def test_v7_synth_home_replays_clean_through_the_cli(homes) -> None:
    _g2, v7, keys = homes
    r = _cli(str(v7), "--keys", str(keys), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["steps"] and all(s["status"] != "fail" for s in doc["steps"])
    assert doc["summary"]["prefix_digest"]["pass"] > 0
    assert doc["summary"]["binding_ref"]["pass"] > 0  # 7.0 writes turn_capabilities_ref for an unchanged binding
    assert not any(led.get("objects") for led in doc["ledgers"])


def test_sample_v7_home_replays_clean_and_reads_the_interface_its_writer_put(sample_homes) -> None:
    home = sample_homes / "v7"
    ring = KeyRing.from_file(sample_homes / "v7-keys.json")
    dirs = list(conversation_dirs(home))
    assert len(dirs) == 2  # make_v7.py writes two sessions
    for d in dirs:
        led = open_v7_ledger(home, d, ring)
        assert led.readable == led.frames > 0
        assert led.interfaces and all(i == {"system_prompt": "You are vak.", "tool_index": [], "tool_schemas": []}
                                      for i in led.interfaces.values())
        assert led.evidence and all(why is None for _e, _t, why in led.evidence)
    r = _cli(str(home), "--keys", str(sample_homes / "v7-keys.json"))
    assert r.exit_code == 0, r.output
    assert "fail" not in r.output.split("prefix-cache breaks")[0].replace("pass   fail", "")


def test_without_keys_each_check_says_it_needs_them(homes) -> None:
    _g2, v7, _keys = homes
    r = _cli(str(v7))
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.stdout.splitlines() if ": needs keys: " in ln]
    assert [ln.split(":", 1)[0] for ln in lines] == [str(n) for n in CHECK_NAMES]
    doc = json.loads(_cli(str(v7), "--json").stdout)
    assert set(doc["needs_keys"]) == {str(n) for n in CHECK_NAMES}
    assert doc["steps"] == [] and len(doc["ledgers"]) == len(list(conversation_dirs(v7)))


def _copy_with_object(homes, tmp_path: Path, role: str) -> tuple[Path, Path, str]:
    """A copy of the v7 home and the path of one object of ``role`` (interface / evidence) in it."""
    _g2, v7, keys = homes
    home = tmp_path / "v7"
    shutil.copytree(v7, home, symlinks=True)
    ring = KeyRing.from_file(keys)
    d = next(d for d in conversation_dirs(home) if not d.name.startswith("child-"))
    led = open_v7_ledger(home, d, ring)
    kind, field = ("turn_capabilities_bound", "interface") if role == "interface" else ("evidence_body", "body")
    oid = next(e.payload[field]["id"] for e in led.log.entries if e.kind == kind)
    path = next(home.glob("tenants/*/store")) / object_rel_path(oid)
    assert path.is_file()
    return home, path, oid


def test_a_tampered_interface_object_fails_binding_consistency(homes, tmp_path) -> None:
    home, path, oid = _copy_with_object(homes, tmp_path, "interface")
    body = bytearray(path.read_bytes())
    body[len(body) // 2] ^= 0x01
    path.write_bytes(bytes(body))
    r = _cli(str(home), "--keys", str(homes[2]), "--json")
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    bad = [c for s in doc["steps"] for c in s["checks"] if c["name"] == "binding_consistency" and c["status"] == "fail"]
    assert bad and all(oid in c["reason"] and "undecryptable" in c["reason"] for c in bad)
    assert any(oid in p for led in doc["ledgers"] for p in led.get("objects", ()))


def test_a_missing_interface_object_fails_binding_consistency(homes, tmp_path) -> None:
    home, path, oid = _copy_with_object(homes, tmp_path, "interface")
    path.unlink()
    r = _cli(str(home), "--keys", str(homes[2]))
    assert r.exit_code == 1, r.output
    assert f"object {oid} has no body in the store (missing)" in r.stdout
    assert "binding_consistency × " in r.stdout


def test_a_tampered_evidence_body_is_an_object_problem(homes, tmp_path) -> None:
    home, path, oid = _copy_with_object(homes, tmp_path, "evidence")
    body = bytearray(path.read_bytes())
    body[-1] ^= 0x01
    path.write_bytes(bytes(body))
    r = _cli(str(home), "--keys", str(homes[2]))
    assert r.exit_code == 1, r.output
    assert "object problems: 1" in r.stdout
    assert oid in r.stdout.split("object problems: 1", 1)[1]
