"""The JSON contract: every `--json` output carries `schema_version` and validates against its JSON Schema
under docs/schemas/ on the tiny sample home and on every broken one; a schema changed without a version
bump fails here (docs/json.md states the rule)."""

from __future__ import annotations

import functools
import hashlib
import json
import re
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

import vakaudit.cli
from vakaudit.schemas import SCHEMA_VERSIONS

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "docs" / "schemas"
HOMES = ["tiny", *sorted(p.parent.name for p in (REPO / "sample_homes" / "broken").glob("*/home"))]

runner = CliRunner()


def schema(command: str) -> dict:
    return json.loads((SCHEMAS / f"{command}.json").read_text(encoding="utf-8"))


def canonical_digest(doc: dict) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()


def home_path(name: str) -> Path:
    return REPO / "sample_homes" / ("tiny" if name == "tiny" else f"broken/{name}/home")


def run_json(*args: object) -> dict:
    r = runner.invoke(vakaudit.cli.app, [str(a) for a in args])
    assert r.exit_code in (0, 1), (args, r.exit_code, r.output[-2000:])
    return json.loads(r.stdout)


@functools.cache
def validator(command: str) -> jsonschema.Draft202012Validator:
    """The command's schema, itself checked against the 2020-12 meta-schema (once per process)."""
    s = schema(command)
    jsonschema.Draft202012Validator.check_schema(s)
    return jsonschema.Draft202012Validator(s)


def validate(command: str, doc: dict) -> None:
    validator(command).validate(doc)
    assert doc["schema_version"] == SCHEMA_VERSIONS[command]


def test_every_command_has_a_schema_and_a_recorded_digest_for_its_version() -> None:
    versions = json.loads((SCHEMAS / "VERSIONS.json").read_text(encoding="utf-8"))
    assert set(versions) == set(SCHEMA_VERSIONS) == {p.stem for p in SCHEMAS.glob("*.json")} - {"VERSIONS"}
    for command, version in SCHEMA_VERSIONS.items():
        s = schema(command)
        assert s["properties"]["schema_version"] == {"const": version}, command
        assert version in versions[command], f"{command}: version {version} has no digest in VERSIONS.json"
        digest = canonical_digest(s)
        assert versions[command][version] == digest, (
            f"docs/schemas/{command}.json changed without a version bump: bump {command} in "
            f"vakaudit/schemas.py and the schema's schema_version const (minor: a field added; major: a field "
            f"renamed or removed), and record the new version with digest {digest} in VERSIONS.json"
        )
        # one digest per version: an old version's schema is never edited in place
        assert len(set(versions[command].values())) == len(versions[command]), command


def test_a_renamed_key_fails_validation() -> None:
    doc = run_json("kinds", "--json")
    validate("kinds", doc)
    renamed = dict(doc["kinds"][0])
    renamed["patterns_list"] = renamed.pop("patterns")
    with pytest.raises(jsonschema.ValidationError):
        validate("kinds", {**doc, "kinds": [renamed]})
    bad = {k: v for k, v in doc.items() if k != "schema_version"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema("kinds"))


@pytest.mark.parametrize("name", HOMES)
def test_every_json_output_validates_on_the_sample_home(name: str, tmp_path: Path) -> None:
    home = home_path(name)
    scan_dir = tmp_path / "scan"
    validate("scan", run_json("scan", home, "--out", scan_dir, "--json", "--quiet"))
    validate("analyze", run_json("analyze", scan_dir, "--json"))
    validate("verify", run_json("verify", home, "--json"))
    validate("replay", run_json("replay", home, "--json", "--diff"))
    validate("seal", run_json("seal", home, "-o", tmp_path / "seal.json", "--json"))
    validate("timeline", run_json("timeline", home, "-o", tmp_path / "timeline.jsonl", "--json"))
    baseline = run_json("baseline", home, "-o", tmp_path / "baseline.json", "--scan-out", scan_dir, "--json")
    validate("baseline", baseline)
    assert json.loads((tmp_path / "baseline.json").read_text(encoding="utf-8")) == baseline
    validate("check", run_json("check", home, "--baseline", tmp_path / "baseline.json", "--scan-out", scan_dir,
                               "--json"))  # fmt: skip


def test_kinds_json_validates() -> None:
    validate("kinds", run_json("kinds", "--json"))


def test_every_example_in_docs_json_md_validates_against_its_schema() -> None:
    text = (REPO / "docs" / "json.md").read_text(encoding="utf-8")
    examples = dict(re.findall(r"\n### `(\w+)`\n.*?```json\n(.*?)\n```", text, flags=re.S))
    assert set(examples) == set(SCHEMA_VERSIONS)
    for command, body in examples.items():
        validate(command, json.loads(body))
