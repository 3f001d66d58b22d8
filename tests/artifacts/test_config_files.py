"""config_files: one structural summary row per configuration file; values are never stored."""

from __future__ import annotations

import pytest
from artifact_kind_helpers import FIXTURES, run_reader

HOME = FIXTURES / "config_files"
KEYS = (
    "config_name",
    "format",
    "size_bytes",
    "parsed",
    "top_level_type",
    "entry_count",
    "top_level_keys",
    "schema_version",
)

CASES = {
    "tasks.json": ("tasks.json", "json", None, True, "array", 1, None, None),
    "trusted/9c1d3e5f7a2b4c6d": ("trusted", "text", 17, None, None, None, None, None),
    "gateway/bindings.json": ("gateway", "json", 96, True, "object", 2, '["version","bindings"]', 1),
    "gateway/default-workspace": ("gateway", "text", 22, None, None, None, None, None),
    "feeds.toml": ("feeds.toml", "toml", 96, True, "table", 1, '["general","sources"]', None),
    "vak-home/.vak/config.toml": (".vak", "toml", 36, True, "table", 1, '["model"]', None),
    "auth/passkeys.json": ("auth", "opaque", 15, None, None, None, None, None),  # key material: sized only
    "agents/vak/presentations.json": (
        "presentations.json",
        "json",
        54,
        True,
        "object",
        0,
        '["schema_version","definitions","activations"]',
        1,
    ),
}


@pytest.mark.parametrize("rel", sorted(CASES))
def test_config_summary_rows(rel: str) -> None:
    rows, findings = run_reader("config_files", HOME, rel)
    assert findings == []
    assert len(rows) == 1
    want = CASES[rel]
    if want[2] is None:  # pretty-printed: size as the file system reports it
        want = (*want[:2], (HOME / rel).stat().st_size, *want[3:])
    assert tuple(rows[0][k] for k in KEYS) == want


def test_config_that_does_not_parse_is_flagged() -> None:
    rows, findings = run_reader("config_files", HOME, "workspaces.json")
    assert [(r["config_name"], r["parsed"], r["entry_count"]) for r in rows] == [
        ("workspaces.json", False, None)
    ]
    assert [(f.code, f.rel_path) for f in findings] == [("sidecar_unparseable_row", "workspaces.json")]
