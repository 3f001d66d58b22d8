"""The JSON contract: the ``schema_version`` every ``--json`` output carries, one entry per command.

Each version is ``MAJOR.MINOR`` and names the JSON Schema ``docs/schemas/<command>.json`` that
describes the output. Adding a field is a minor change; renaming or removing one (or changing its
type) is a major one. ``docs/schemas/VERSIONS.json`` keeps a digest of every schema beside its
version, and a test fails when a schema changes without a bump here and there. No I/O here.
"""

from __future__ import annotations

SCHEMA_VERSIONS: dict[str, str] = {
    "analyze": "1.1",
    "baseline": "1.0",
    "check": "1.0",
    "kinds": "1.1",
    "replay": "1.1",
    "scan": "1.1",
    "seal": "1.0",
    "synth": "1.0",
    "timeline": "1.0",
    "verify": "1.1",
}


def schema_version(command: str) -> str:
    """The ``schema_version`` of ``command``'s JSON output."""
    return SCHEMA_VERSIONS[command]


__all__ = ["SCHEMA_VERSIONS", "schema_version"]
