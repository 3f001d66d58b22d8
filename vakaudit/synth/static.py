"""Documents and configuration of a synthetic home: written once, after the sessions.

Their size follows configuration, not usage (home.md §7, §9, §10). Shapes marked unconfirmed in the
spec (``deleted.json``, ``archive.json``, ``workspaces.json``, ``workspace-names.json``,
``gateway/deliveries.jsonl``) use one plausible form each; readers must accept others.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Protocol

from vakaudit.ledger.ids import format_ts
from vakaudit.ledger.jsonenc import dumps
from vakaudit.ledger.keys import workspace_key
from vakaudit.synth.clock import ts_plus00
from vakaudit.synth.content import WORKSPACES
from vakaudit.synth.sinks import pretty_json, write_file

if TYPE_CHECKING:
    from vakaudit.synth.events import HomeFacts

__all__ = ["write_static"]


class SessionsSeen(Protocol):
    """What the static files need of the sessions written (the side writer keeps it)."""

    sessions_seen: list[tuple[str, str]]  # (session_id, cwd)
    scheduled: list[tuple[str, str, str]]  # (task id, session id, cwd)
    telegram_chat: str


def write_static(home: HomeFacts, side: SessionsSeen) -> None:
    rng = random.Random(f"static:{home.seed}")
    d, a = home.data, home.agent
    pools = home.pools
    now_ns = home.clock.ns
    now = format_ts(now_ns)
    used = sorted({cwd for _, cwd in side.sessions_seen}) or [WORKSPACES[0]]

    # tasks.json: pretty array of TaskDef, sorted by created_at
    tasks = []
    for i, (task_id, session_id, cwd) in enumerate(side.scheduled or [("t-morning", None, used[0])]):
        created = format_ts(now_ns - (40 - i) * 86_400_000_000_000)
        tasks.append(
            {
                "id": task_id,
                "name": f"{pools.words(rng, 2)} digest",
                "prompt": pools.sentence(rng),
                "interval_secs": 3600,
                "enabled": True,
                "cwd": cwd,
                "created_at": created,
                "last_run_at": now if session_id else None,
                "last_session_id": session_id,
                "last_summary": pools.sentence(rng) if session_id else None,
                "last_wt": None,
                "deliver_to": side.telegram_chat,
                "schedule": "0 7 * * *",
                "script": None,
                "model_pin": None,
            }
        )
    tasks.sort(key=lambda t: t["created_at"])
    write_file(d / "tasks.json", pretty_json(tasks))

    # trust markers: name = FNV-1a of the canonical path, contents = the path
    for cwd in used:
        write_file(d / "trusted" / workspace_key(cwd), cwd)

    # gateway
    write_file(
        d / "gateway" / "bindings.json",
        pretty_json(
            {
                "version": 2,
                "bindings": {
                    f"{side.telegram_chat}": {
                        "session_id": side.sessions_seen[-1][0] if side.sessions_seen else None,
                        "provider": "anthropic",
                        "model": "claude-sonnet-4-5",
                        "workspace": used[0],
                        "route_revision": 3,
                    }
                },
            }
        ),
    )
    write_file(
        d / "gateway" / "allowlist.json",
        pretty_json(
            {
                "schema": 1,
                "entries": [
                    {
                        "key": side.telegram_chat,
                        "status": "allowed",
                        "workspace": used[0],
                        "route": {"provider": "anthropic", "model": "claude-sonnet-4-5"},
                        "permission_mode": "ask",
                        "bot_id": "bot-main",
                        "inherit_bot_policy": True,
                        "added_at": now,
                        "added_by": "owner",
                    },
                    {
                        "key": "telegram:99120044",
                        "status": "pending",
                        "inherit_bot_policy": True,
                        "added_at": now,
                        "added_by": "gateway",
                        "first_seen_text": "hi, is this the vak bot?",
                    },
                ],
            }
        ),
    )
    write_file(
        d / "gateway" / "bots.json",
        pretty_json(
            {
                "schema": 1,
                "bots": [
                    {
                        "id": "bot-main",
                        "surface": "telegram",
                        "label": "Ana's vak",
                        "token_env": "VAK_TELEGRAM_TOKEN",
                        "permission_mode": "ask",
                        "workspace": used[0],
                    }
                ],
            }
        ),
    )
    write_file(d / "gateway" / "default-workspace", used[0] + "\n")
    if not (d / "gateway" / "deliveries.jsonl").exists():
        write_file(d / "gateway" / "deliveries.jsonl", b"")

    # presentations.json (agent home): definitions with their specs
    definitions = []
    for i in range(4 if home.profile.force_every_kind else 40):
        spec = {
            "semantic_type": rng.choice(("metric", "table", "list", "comparison")),
            "template": pools.prose(rng, 3200),
            "version": f"1.{i}.0",
        }
        definitions.append(
            {
                "digest": home.ids.hex(64),
                "spec": spec,
                "origin": {"scope": "builtin", "owner": "core"},
                "enabled": True,
            }
        )
    write_file(
        a / "presentations.json",
        pretty_json(
            {
                "schema_version": 1,
                "definitions": definitions,
                "activations": [{"digest": definitions[0]["digest"], "scope": "global"}],
            }
        ),
    )

    # workspace bookkeeping (shapes unconfirmed)
    write_file(a / "workspace-names.json", pretty_json({workspace_key(c): c.rsplit("/", 1)[-1] for c in used}))
    write_file(
        d / "workspaces.json",
        pretty_json([{"path": c, "key": workspace_key(c), "added_at": now} for c in used]),
    )
    ids = [s for s, _ in side.sessions_seen]
    write_file(d / "deleted.json", pretty_json(ids[:1]))
    write_file(d / "archive.json", pretty_json(ids[1:3]))

    # memory: workspace notes come from `remember` calls; make sure each workspace used has one
    for cwd in used[:3]:
        path = a / "memory" / workspace_key(cwd) / "MEMORY.md"
        if not path.exists():
            write_file(
                path,
                f"## {ts_plus00(now_ns)} [decision] tag=conventions session={ids[0] if ids else 'cli'}\n"
                f"{pools.sentence(rng)}\n\n",
            )
    user_md = "".join(
        f"## {ts_plus00(now_ns - i * 3_600_000_000_000)} [preference] tag=style session={ids[0] if ids else 'cli'}\n"
        f"{pools.sentence(rng)}\n\n"
        for i in range(3, 0, -1)
    )
    write_file(a / "memory" / "user" / "USER.md", user_md)

    # entities: per workspace and global, one whole-file rewrite
    for scope in [workspace_key(c) for c in used[:3]] + ["global"]:
        rows = []
        for j in range(rng.randint(2, 6)):
            rows.append(
                {
                    "id": f"ent-{scope[:6]}-{j}",
                    "name": pools.words(rng, 3).title(),
                    "entity_type": rng.choice(("database", "service", "person", "project", "server")),
                    "summary": pools.sentence(rng),
                    "attributes": {"owner": "ana", "tier": str(j)},
                    "relations": [{"relation": "depends_on", "target_entity_id": f"ent-{scope[:6]}-{j - 1}"}]
                    if j
                    else [],
                    "updated_at": now,
                }
            )
        write_file(a / "entities" / scope / "ENTITIES.jsonl", b"".join(dumps(r) + b"\n" for r in rows))

    # skills and proposals
    write_file(
        a / "skills" / "release-notes" / "SKILL.md",
        '---\nname: "release-notes"\ndescription: "Draft release notes from merged changes."\n---\n\n'
        + pools.prose(rng, 600)
        + "\n",
    )
    for cwd in used[:2]:
        pid = home.ids().replace("-", "")
        sess = ids[0] if ids else "cli"
        write_file(
            a / "skill-proposals" / workspace_key(cwd) / f"{pid}.md",
            f'---\nname: "{pools.words(rng, 1)}-checklist"\ndescription: "{pools.sentence(rng)}"\n---\n\n'
            f"{pools.prose(rng, 400)}\n\n<!-- proposed-by: {sess} at {ts_plus00(now_ns)}; proposal id {pid} -->\n",
        )

    # flows and flow runs
    flow_toml = (
        '[flow]\nname = "nightly-check"\n\n[[nodes]]\nid = "test"\ntype = "bash"\ncommand = "cargo test"\n'
        'required = true\n\n[[nodes]]\nid = "summary"\ntype = "agent"\ndeps = ["test"]\n'
        'prompt = "Summarise the test run."\nreadonly = true\n'
    )
    write_file(d / "flows" / "nightly-check.toml", flow_toml)
    for k in range(2):
        nanos = now_ns - k * 86_400_000_000_000
        state = {
            "run_id": home.ids(),
            "flow_name": "nightly-check",
            "definition_toml": flow_toml,
            "started_at": format_ts(nanos),
            "nodes": {
                "test": {"status": "completed", "output": "test result: ok. 212 passed"},
                "summary": {"status": "completed" if k else "failed", "output": pools.sentence(rng)},
            },
        }
        write_file(a / "flow-runs" / "nightly-check" / f"{nanos}.json", pretty_json(state))
    write_file(
        a / "flow-runs" / f"plan-{now_ns}-1.json",
        pretty_json(
            {
                "run_id": home.ids(),
                "flow_name": "plan",
                "definition_toml": flow_toml,
                "started_at": now,
                "nodes": {"draft": {"status": "completed", "output": pools.sentence(rng)}},
            }
        ),
    )

    # feeds (config and the JSONL security log; feeds.duckdb is not synthesised: DuckDB writes
    # different bytes for the same statements, which would break byte-identical homes)
    write_file(
        d / "feeds.toml",
        '[general]\ndefault_check_interval = "30m"\nmax_items_per_feed = 500\n'
        'dedup_window_days = 90\n\n[[sources]]\nname = "Hacker News"\ntype = "hacker_news"\n'
        'url = "https://news.ycombinator.com/rss"\ntrust = "medium"\ninterval = "1h"\n\n'
        '[[alerts]]\nname = "vak mentions"\nmatch = { keywords = ["vak"] }\naction = "deliver"\n'
        f'deliver_to = "{side.telegram_chat}"\ncooldown_minutes = 30\n',
    )
    write_file(
        d / "feeds" / "security.log",
        b"".join(
            dumps(
                {
                    "timestamp": ts_plus00(now_ns - i * 7_200_000_000_000),
                    "event": ev,
                    "url": f"http://10.0.0.{i}/feed",
                }
            )
            + b"\n"
            for i, ev in enumerate(("invalid_item_url", "dns_rebind_detected"))
        ),
    )

    # small configuration and bookkeeping files
    write_file(d / "output.toml", '[presentation]\ncards = true\nmarkup = "markdown"\n')
    write_file(
        d / "desktop.json",
        pretty_json({"recent_projects": used[:5], "window": {"width": 1280, "height": 820}}),
    )
    write_file(d / "tray.json", pretty_json({"show_in_menu_bar": True}))
    write_file(
        d / "credential_index.json",
        pretty_json({"global": ["anthropic_api_key", "openai_api_key"], "workspace": {}}),
    )
    write_file(d / "update-check.json", pretty_json({"last_checked_at": now, "latest": "3.5.1"}))
    write_file(
        d / "install.json",
        pretty_json({"installed_at": format_ts(now_ns - 60 * 86_400_000_000_000), "channel": "stable"}),
    )
    write_file(d / "release" / "manifest.json", pretty_json({"schema": 2, "version": "3.5.1"}))
    (d / "locks").mkdir(parents=True, exist_ok=True)
    write_file(d / "logs" / "desktop.log", "window opened\nsession list refreshed\nwindow closed\n")
    write_file(
        d / "vak-home" / ".vak" / "config.toml",
        '[model]\nprovider = "anthropic"\nmodel = "claude-sonnet-4-5"\n',
    )
    write_file(d / "vak-home" / ".vak" / ".seed-manifest.json", pretty_json({"schema": 1, "seeded": ["skills"]}))
    # the shared workspace's secret files exist in a real home; these hold random bytes, no secret
    write_file(d / "vak-home" / "credentials.enc", rng.randbytes(256))

    if home.layout == "g2":
        write_file(
            d / "auth" / "passkeys.json",
            pretty_json(
                {
                    "schema": 1,
                    "passkeys": [{"id": home.ids.hex(32), "public_key": home.ids.hex(130), "added_at": now}],
                    "recovery_digests": [home.ids.hex(64)],
                }
            ),
        )
        write_file(
            a / "coworking" / "grants.jsonl",
            dumps(
                {
                    "grant_id": home.ids(),
                    "principal_id": "usr_guest",
                    "display_name": "Guest",
                    "conversation_id": ids[0] if ids else "",
                    "audience_id": "aud_guest",
                    "capabilities": ["read"],
                    "token_hash": home.ids.hex(64),
                    "created_at": now,
                    "expires_at": format_ts(now_ns + 86_400_000_000_000),
                }
            )
            + b"\n",
        )
        record: dict[str, Any] = {
            "record_id": home.ids(),
            "environment_id": "env-local",
            "state": "ready",
            "plan": {"image": "vak-sandbox:3"},
            "updated_at": now,
        }
        write_file(a / "sandbox" / "records.jsonl", dumps(record) + b"\n")
        (a / "agent-network").mkdir(parents=True, exist_ok=True)
        if ids:
            write_file(
                a / "office-workspaces" / ids[0] / "main.json",
                pretty_json({"room": "main", "members": ["vak"]}),
            )
