"""Configuration and state files: settings, schedules, bindings, allowlist, trust markers, preferences.

Where: at the data root and in agent homes — ``tasks.json``, ``trusted/<16-hex>``, ``gateway/*``
(except ``deliveries.jsonl``), ``deleted.json``, ``archive.json``, ``workspaces.json``,
``workspace-names.json``, ``presentations.json``, ``output.toml``, ``desktop.json``, ``tray.json``,
``credential_index.json``, ``update-check.json``, ``install.json``, ``feeds.toml``, a ``vak-home``
file, and the trees ``auth/``, ``release/``, ``flows/``, ``agent-network/``, ``coworking/`` (except
``grants.jsonl``), ``office-workspaces/``, ``mail-calendar/`` and the shared ``.vak/`` layer
(``config.toml``, ``plugins/``, ``.seed-manifest.json``; its ``skills/`` are the skills kind). Their
temp files (``tasks.json.tmp``, ``presentations.tmp-<pid>-<nanos>``, ``.default-workspace.<pid>.tmp``)
belong here too. Writers: vak-core, vak-server, vak-config, vak-delivery, vak-desktop, vak-tray on
operator action, never per turn; almost always tmp + rename (``tasks.json`` also ``sync_all``s the file
and the directory). Reads are fingerprinted: re-read only when a file changes (home.md §10).

Rows: one per file — ``config_name`` (the file or tree it belongs to), its format and a structural
summary: top-level type, entry count, top-level keys and a schema version. Values are never stored
(bots.json holds env-var names, allowlists hold chat keys; ``auth/`` holds passkey keys and
recovery-code digests and is only sized). JSON/TOML files over 16 MiB are sized, not parsed.

In a 7.0 home (baseline7.md §2.6) the same files and trees are the REGISTRY's Desired entries
(``tenants/<t>/auth``, ``credential_index.json``, ``gateway``, ``desktop.json``, ``tray.json``,
``trusted``, ``output.toml``, ``flows``, ``agent-network``, ``release``, the shared ``.vak/``, the
legacy ``coworking/`` and ``mail-calendar/``), plus ``social-x-usage.json``.
"""

from __future__ import annotations

import stat
from typing import Any

import orjson

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import (
    ArtifactKind,
    Baseline7,
    Discipline,
    ReadContext,
    RegistryClass,
    WriteCard,
    WriteGroup,
    glob_matches,
    one_row_reader,
)
from vakaudit.artifacts._columns import to_json
from vakaudit.artifacts._files import read_small, too_large
from vakaudit.findings import Finding, FindingCode, Severity

CAP_BYTES = 16 * 1024 * 1024

# (pattern, config_name), most specific first: a path's config_name is its first match.
CONFIGS: tuple[tuple[str, str], ...] = (
    ("**/tasks.json", "tasks.json"),
    ("**/tasks.json.tmp", "tasks.json"),
    ("**/trusted/*", "trusted"),
    ("**/gateway/**", "gateway"),
    ("**/deleted.json", "deleted.json"),
    ("**/archive.json", "archive.json"),
    ("**/workspaces.json", "workspaces.json"),
    ("**/workspace-names.json", "workspace-names.json"),
    ("**/presentations.json", "presentations.json"),
    ("**/presentations.tmp-*", "presentations.json"),
    ("**/output.toml", "output.toml"),
    ("**/desktop.json", "desktop.json"),
    ("**/tray.json", "tray.json"),
    ("**/credential_index.json", "credential_index.json"),
    ("**/update-check.json", "update-check.json"),
    ("**/install.json", "install.json"),
    ("**/feeds.toml", "feeds.toml"),
    ("vak-home", "vak-home"),
    ("**/auth/**", "auth"),
    ("**/release/**", "release"),
    ("**/flows/**", "flows"),
    ("**/agent-network/**", "agent-network"),
    ("**/coworking/**", "coworking"),
    ("**/office-workspaces/**", "office-workspaces"),
    ("**/mail-calendar/**", "mail-calendar"),
    ("**/.vak/**", ".vak"),
    ("**/social-x-usage.json", "social-x-usage.json"),
)
OPAQUE = frozenset({"auth"})  # sized only: key material and digests

# top-level keys whose value is "the" collection of a config document
_COLLECTIONS = ("bindings", "entries", "bots", "definitions", "sources", "workspaces", "sessions", "tasks")

_SCHEMA = decl.schema(
    [
        decl.field("rel_path", decl.string(), nullable=False),
        decl.field("home_scope", decl.string(), nullable=False),
        decl.field("config_name", decl.string(), nullable=False),
        decl.field("format", decl.string(), nullable=False),  # json | toml | text | opaque
        decl.field("size_bytes", decl.int64(), nullable=False),
        decl.field("parsed", decl.bool_()),  # null when the format is not parsed
        decl.field("top_level_type", decl.string()),  # object | array | table
        decl.field("entry_count", decl.int64()),  # array length, or size of the main collection
        decl.field("top_level_keys", decl.string()),  # JSON array of key names (no values)
        decl.field("schema_version", decl.int64()),  # schema_version / schema / version when an integer
    ]
)


def config_name(rel_path: str) -> str:
    for pattern, name in CONFIGS:
        if glob_matches(pattern, rel_path):
            return name
    return rel_path.rsplit("/", 1)[-1]


def _format(rel_path: str, name: str) -> str:
    if name in OPAQUE:
        return "opaque"
    base = rel_path.rsplit("/", 1)[-1]
    if base.endswith(".json") or base.endswith(".json.tmp") or base.startswith("presentations.tmp-"):
        return "json"
    if base.endswith(".toml"):
        return "toml"
    if name in ("trusted", "vak-home") or base in ("default-workspace",) or base.endswith(".tmp"):
        return "text"
    return "opaque"


def _summary(doc: Any) -> dict[str, Any]:
    if isinstance(doc, list):
        return {"top_level_type": "array", "entry_count": len(doc)}
    if not isinstance(doc, dict):
        return {"top_level_type": type(doc).__name__}
    count = len(doc)
    for key in _COLLECTIONS:
        if isinstance(doc.get(key), list | dict):
            count = len(doc[key])
            break
    version = next(
        (doc[k] for k in ("schema_version", "schema", "version") if isinstance(doc.get(k), int)), None
    )
    if isinstance(version, bool):
        version = None
    return {
        "top_level_type": "object",
        "entry_count": count,
        "top_level_keys": to_json(list(doc)),
        "schema_version": version,
    }


def _row_of(ctx: ReadContext) -> dict[str, Any] | None:
    """The summary row of one configuration file (None: not a regular file), its findings emitted."""
    st = ctx.path.lstat()
    if not stat.S_ISREG(st.st_mode):
        return None
    name = config_name(ctx.rel_path)
    fmt = _format(ctx.rel_path, name)
    row: dict[str, Any] = dict.fromkeys(_SCHEMA.names)
    row.update(
        rel_path=ctx.rel_path, home_scope=ctx.home_scope, config_name=name, format=fmt, size_bytes=st.st_size
    )
    if fmt in ("json", "toml"):
        data = read_small(ctx, CAP_BYTES)
        if data is None:
            ctx.emit(too_large(ctx, CAP_BYTES))
        else:
            import tomllib

            try:
                doc = orjson.loads(data) if fmt == "json" else tomllib.loads(data.decode("utf-8"))
            except (orjson.JSONDecodeError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                row["parsed"] = False
                ctx.emit(
                    Finding(
                        FindingCode.SIDECAR_UNPARSEABLE_ROW,
                        Severity.WARNING,
                        ctx.rel_path,
                        f"{fmt} config does not parse ({str(exc).splitlines()[0][:120]})",
                    )
                )
            else:
                row["parsed"] = True
                row.update(_summary(doc))
                if fmt == "toml":
                    row["top_level_type"] = "table"
    return row


reader = one_row_reader(_row_of, _SCHEMA, "One summary row per configuration file.")


KIND = ArtifactKind(
    name="config_files",
    title="Configuration and state files",
    patterns=tuple(p for p, _ in CONFIGS),
    card=WriteCard(
        writer="vak-core / vak-server / vak-config / vak-delivery / vak-desktop / vak-tray, on operator action",
        trigger="settings, schedules, bindings, allowlist, trust markers, presentation prefs change",
        discipline="tmp + rename; tasks.json also sync_alls the file and directory",
        barriers_per_write=0,
        read="fingerprinted — effective_route() re-reads only when the config files' fingerprint changes",
        bound="size follows configuration, not usage",
        group=WriteGroup.CONFIG,
        read_class="flat",
        style=Discipline.REPLACE,
    ),
    v7=Baseline7(
        # the same trees as in the JSONL era, as the 7.0 REGISTRY declares them
        tuple(p for p, _ in CONFIGS),
        (1, 19, 20, 22, 26, 41, 46, 47, 48, 49, 50, 51, 52, 59, 61, 62, 65),
        vak_class="Desired",
        owner="vak-server, vak-config, vak-core, vak-flow, vak-delivery, vak-desktop, vak-tray, vak-plugin",
    ),
    registry_class=RegistryClass.CONFIG,
    description=__doc__,
    declared_schema=_SCHEMA,
    reader=reader,
    priority=4,  # its trees keep their own *.lock / *.log files
)

__getattr__ = decl.exports(__name__, SCHEMA=_SCHEMA)
