"""docs/ci-gates.md lists every storage finding code with the severity vakaudit.storage gives it;
docs/keys.md's JSON key file is the form KeyRing.from_file reads."""

from __future__ import annotations

import re
from pathlib import Path

from vakaudit.storage import KeyRing
from vakaudit.storage.policy import SEVERITY

REPO = Path(__file__).resolve().parents[2]


def test_storage_codes_table_is_the_severity_table() -> None:
    doc = (REPO / "docs" / "ci-gates.md").read_text(encoding="utf-8")
    block = doc.split("<!-- storage-codes -->", 1)[1].split("<!-- /storage-codes -->", 1)[0]
    listed = dict(re.findall(r"^\| `([a-z0-9_]+)` \| (\w+) \|", block, re.M))
    assert listed == {str(c): str(s) for c, s in SEVERITY.items()}


def test_documented_json_key_file_reads(tmp_path: Path) -> None:
    doc = (REPO / "docs" / "keys.md").read_text(encoding="utf-8")
    example = doc.split("```json", 1)[1].split("```", 1)[0]
    p = tmp_path / "keys.json"
    p.write_text(example.replace("<64 hex>", "ab" * 32), encoding="utf-8")
    ring = KeyRing.from_file(p)
    assert ring.versions == [0, 1] and ring.object_id_key == bytes([0xAB]) * 32
