"""Text and payload pools for synthetic homes: prompts, tool surfaces, tool results, prose.

Large bodies are built once per home from the seed and then reused by reference (a capability
binding body is shared by every turn of its epoch; tool results are slices of one corpus), so a
home of any size costs little more than the bytes it writes. No I/O here.
"""

from __future__ import annotations

import bisect
import random
from dataclasses import dataclass

from vakaudit.replay.prefix import prefix_chars, prefix_digest

__all__ = ["CapabilitySurface", "ContentPools", "WORKSPACES", "TOOL_KINDS"]

_WORDS = (
    "the a of to and in is for on with that this it as be by are from at or an was not can we you "
    "which will if has have but all one more also when there use used using file files test tests "
    "build run parser config session ledger turn request model provider route budget cost token "
    "tokens cache index search query result results error errors value values update change "
    "changes branch commit merge review check checks fix fixed failing passes write read open close "
    "path paths directory workspace project server client network timeout retry latency response "
    "stream chunk output input schema field fields record records entry entries table column row "
    "rows data report summary note notes memory user users agent tool tools call calls step steps "
    "plan plans packet card cards prefix digest hash chain line lines byte bytes size limit window "
    "policy rule rules approve approval deny denied grant scope owner task tasks schedule daily "
    "weekly invoice customer order orders price prices market weather forecast city trip flight "
    "hotel meeting calendar email draft reply thread message messages doc docs section chapter "
    "figure chart graph trend growth rate percent average median total count first last next "
    "previous new old small large fast slow stable careful simple clear exact short long quick "
    "because after before while until since during between across through over under into onto"
).split()

_ACCENTED = ("café", "naïve", "résumé", "Zürich", "São Paulo", "日本語", "déjà vu", "—", "→", "✓")

_CODE_LINES = (
    "fn parse_line(raw: &[u8]) -> Result<Entry, Error> {{",
    "    let value: serde_json::Value = serde_json::from_slice(raw)?;",
    '    if value.get("kind").is_none() {{ return Err(Error::MissingKind({n})); }}',
    "}}",
    "def load_{w}(path: Path) -> dict[str, Any]:",
    '    """Load the {w} table from ``path``."""',
    '    with path.open("rb") as fh:',
    "        return json.load(fh)  # {w} {w2}",
    "export function {w}Handler(req: Request): Promise<Response> {{",
    "  const limit = Number(req.query.limit ?? {n});",
    "  return db.select('{w}').where({{ id: req.params.id }}).limit(limit);",
    "SELECT {w}, count(*) AS n FROM {w2} WHERE ts >= '2026-08-{d:02d}' GROUP BY 1 ORDER BY n DESC;",
    "#[test] fn {w}_{w2}_roundtrips() {{ assert_eq!(roundtrip({n}), {n}); }}",
    "    // {w} {w2}: keep the {w3} stable across retries",
    "    for item in items.iter().filter(|i| i.{w}) {{ total += item.{w2}_bytes; }}",
    '[{w}]\nenabled = true\ninterval = "{n}m"',
)


@dataclass(frozen=True, slots=True)
class CapabilitySurface:
    """One capability epoch's interface: everything a ``turn_capabilities_bound`` body carries."""

    variant: int
    system_prompt: str
    tool_schemas: list
    capability_ids: list
    excluded_ids: list
    core_tool_names: list
    deferred_tool_names: list
    tool_index: str
    tool_domains: dict
    digest: str
    prefix_chars: int

    def body(self, epoch: int, generation: str) -> dict:
        """The binding payload in field order; G1 bindings lack the G2 fields."""
        payload = {
            "epoch": epoch,
            "capability_ids": self.capability_ids,
            "excluded_ids": self.excluded_ids,
            "system_prompt": self.system_prompt,
            "tool_schemas": self.tool_schemas,
        }
        if generation != "g1":
            payload["core_tool_names"] = self.core_tool_names
            payload["deferred_tool_names"] = self.deferred_tool_names
            payload["tool_index"] = self.tool_index
            payload["tool_domains"] = self.tool_domains
        return payload


WORKSPACES = (
    "/Users/ana/code/vak",
    "/Users/ana/code/ledger-tools",
    "/Users/ana/notes",
    "/Users/ana/code/site",
    "/Users/ana/work/invoices",
    "/Users/ana/vak-home",
    "/Users/ana/code/data-pipeline",
    "/Users/ana/travel",
)

# (name, kind of result it produces, domains)
TOOL_KINDS = {
    "read": ("file", ["code", "docs"]),
    "bash": ("bash", ["code", "ops"]),
    "grep": ("grep", ["code"]),
    "glob": ("list", ["code"]),
    "write": ("ack", ["code", "docs"]),
    "edit": ("ack", ["code"]),
    "web_search": ("links", ["research"]),
    "web_fetch": ("page", ["research"]),
    "recall": ("text", ["memory"]),
    "remember": ("ack", ["memory"]),
    "task": ("child", ["orchestration"]),
    "emit_metric_card": ("card", ["presentation"]),
    "emit_table_card": ("card", ["presentation"]),
    "calendar_list": ("json", ["calendar"]),
    "mail_search": ("links", ["mail"]),
    "weather": ("json", ["weather"]),
    "sql_query": ("table", ["data"]),
    "python": ("bash", ["data", "code"]),
}


class ContentPools:
    """Seeded text pools; build once per home, then slice and reuse."""

    def __init__(self, seed: int, corpus_bytes: int = 2_400_000) -> None:
        self.seed = seed
        rng = random.Random(f"content:{seed}")
        self._rng = rng
        self.corpus, self._line_starts = self._build_corpus(rng, corpus_bytes)
        self.prose_pool = [self._sentence(rng) for _ in range(4000)]
        self._surfaces: dict[int, CapabilitySurface] = {}
        self._tool_pool = self._build_tool_pool(random.Random(f"tools:{seed}"))
        self._base_sections = self._build_prompt_sections(random.Random(f"prompt:{seed}"))

    # -- prose -------------------------------------------------------------------------------

    @staticmethod
    def _sentence(rng: random.Random, lo: int = 6, hi: int = 22) -> str:
        n = rng.randint(lo, hi)
        words = [rng.choice(_WORDS) for _ in range(n)]
        if rng.random() < 0.08:
            words[rng.randrange(n)] = rng.choice(_ACCENTED)
        words[0] = words[0].capitalize()
        return " ".join(words) + rng.choice((".", ".", ".", "?", "!"))

    def sentence(self, rng: random.Random) -> str:
        return self.prose_pool[rng.randrange(len(self.prose_pool))]

    def prose(self, rng: random.Random, target_bytes: int) -> str:
        """Sentences from the pool until about ``target_bytes`` bytes."""
        parts: list[str] = []
        size = 0
        pool = self.prose_pool
        while size < target_bytes:
            s = pool[rng.randrange(len(pool))]
            parts.append(s)
            size += len(s) + 1
            if rng.random() < 0.12:
                parts.append("\n\n")
        return " ".join(parts).replace(" \n\n ", "\n\n").strip()

    def words(self, rng: random.Random, n: int) -> str:
        return " ".join(rng.choice(_WORDS) for _ in range(n))

    # -- corpus of mixed lines (tool output, file contents) -----------------------------------

    def _build_corpus(self, rng: random.Random, target: int) -> tuple[str, list[int]]:
        lines: list[str] = []
        size = 0
        while size < target:
            r = rng.random()
            if r < 0.45:
                tpl = rng.choice(_CODE_LINES)
                line = tpl.format(
                    w=rng.choice(_WORDS),
                    w2=rng.choice(_WORDS),
                    w3=rng.choice(_WORDS),
                    n=rng.randrange(1, 5000),
                    d=rng.randrange(1, 29),
                )
            elif r < 0.75:
                line = self._sentence(rng, 5, 18)
            elif r < 0.88:
                line = (
                    f"{rng.choice(('src', 'crates/vak-core/src', 'tests', 'docs', 'scripts'))}/"
                    f"{rng.choice(_WORDS)}_{rng.choice(_WORDS)}.{rng.choice(('rs', 'py', 'ts', 'md', 'toml'))}"
                    f":{rng.randrange(1, 900)}: {self._sentence(rng, 3, 9)}"
                )
            else:
                line = (
                    f"{rng.randrange(0, 24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d} "
                    f"{rng.choice(('INFO', 'WARN', 'DEBUG'))} {rng.choice(_WORDS)}: "
                    f"{rng.choice(_WORDS)}={rng.randrange(10000)} {rng.choice(_WORDS)}={rng.random():.3f}"
                )
            lines.append(line)
            size += len(line) + 1
        starts = []
        pos = 0
        for line in lines:
            starts.append(pos)
            pos += len(line) + 1
        return "\n".join(lines) + "\n", starts

    def slice(self, rng: random.Random, target_chars: int) -> str:
        """About ``target_chars`` characters of whole corpus lines, from a random place."""
        start, end = self.slice_bounds(rng, target_chars)
        return self.corpus[start:end]

    def slice_bounds(self, rng: random.Random, target_chars: int) -> tuple[int, int]:
        """``(start, end)`` in :attr:`corpus` of the :meth:`slice` drawn with the same ``rng`` state."""
        corpus = self.corpus
        target_chars = max(1, min(target_chars, len(corpus) // 2))
        start = self._line_starts[rng.randrange(len(self._line_starts))]
        if start + target_chars >= len(corpus):
            start = self._line_starts[
                bisect.bisect_right(self._line_starts, len(corpus) - target_chars - 1) - 1
            ]
            start = max(0, start)
        end = corpus.find("\n", start + target_chars)
        if end < 0:
            end = len(corpus) - 1
        return start, end

    # -- capability surfaces ------------------------------------------------------------------

    def _build_tool_pool(self, rng: random.Random) -> list[dict]:
        names = list(TOOL_KINDS) + [
            "find_tools",
            "skill",
            "mcp",
            "notebook_edit",
            "todo_write",
            "image_describe",
            "pdf_extract",
            "spreadsheet_read",
            "git_status",
            "git_diff",
            "git_log",
            "http_request",
            "kv_get",
            "kv_set",
            "schedule_task",
            "deliver",
            "propose_skill",
            "forget",
            "entity_upsert",
            "entity_search",
            "flow_run",
            "flow_status",
            "sandbox_exec",
            "preview_open",
            "translate",
            "summarize_url",
            "contacts_lookup",
            "maps_route",
            "currency_convert",
            "stock_quote",
            "news_search",
            "rss_items",
            "feeds_search",
            "voice_say",
            "clipboard_read",
            "screenshot",
            "ocr",
            "diff_apply",
            "lint_run",
            "test_run",
            "format_code",
            "dependency_audit",
            "secret_scan",
            "jira_search",
            "github_issue",
            "slack_post",
            "mcp__notion__search",
            "mcp__linear__issues",
        ]
        pool = []
        for name in names:
            props = {}
            for _ in range(rng.randint(2, 5)):
                pname = f"{rng.choice(_WORDS)}_{rng.choice(_WORDS)}"
                ptype = rng.choice(("string", "string", "integer", "boolean", "array", "number"))
                spec: dict = {"description": self._sentence(rng, 6, 18), "type": ptype}
                if ptype == "array":
                    spec = {"description": spec["description"], "items": {"type": "string"}, "type": "array"}
                props[pname] = spec
            props = dict(sorted(props.items()))
            required = sorted(rng.sample(list(props), k=min(len(props), rng.randint(1, 2))))
            schema = {
                "additionalProperties": False,
                "properties": props,
                "required": required,
                "type": "object",
            }
            description = " ".join(self._sentence(rng, 10, 24) for _ in range(rng.randint(1, 3)))
            pool.append({"name": name, "description": description, "input_schema": schema})
        return pool

    def _build_prompt_sections(self, rng: random.Random) -> list[tuple[str, str]]:
        titles = (
            "Identity",
            "Operating contract",
            "Rules",
            "Evidence and citations",
            "Tool use",
            "Presentation cards",
            "Memory",
            "Safety and approvals",
            "Guardrails",
            "Standing instructions",
            "Workspace conventions",
            "Delegation",
        )
        sections = []
        for title in titles:
            paragraphs = []
            for _ in range(rng.randint(2, 3)):
                paragraphs.append(" ".join(self._sentence(rng, 10, 26) for _ in range(rng.randint(3, 5))))
            sections.append((title, "\n\n".join(paragraphs)))
        return sections

    def surface(self, variant: int) -> CapabilitySurface:
        """The capability surface of one variant (built once, then shared)."""
        cached = self._surfaces.get(variant)
        if cached is not None:
            return cached
        rng = random.Random(f"surface:{self.seed}:{variant}")
        pool = self._tool_pool
        always_core = [
            t for t in pool if t["name"] in ("skill", "mcp", "recall", "emit_metric_card", "emit_table_card")
        ]
        others = [
            t
            for t in pool
            if t["name"] not in ("find_tools", "skill", "mcp", "recall") and t not in always_core
        ]
        chosen = rng.sample(others, k=min(len(others), rng.randint(30, 34)))
        chosen.sort(key=lambda t: pool.index(t))
        core_extra = [t for t in chosen if t["name"] in TOOL_KINDS and rng.random() < 0.85]
        core = [t for t in pool if t in always_core or t in core_extra]
        deferred = [t for t in chosen if t not in core]
        find_tools = next(t for t in pool if t["name"] == "find_tools")
        tool_schemas = [find_tools] + core + [dict(t, defer=True) for t in deferred]
        core_names = [t["name"] for t in core]
        deferred_names = [t["name"] for t in deferred]
        tool_index = "\n".join(f"- {t['name']} — {self._first_sentence(t['description'])}" for t in deferred)
        domains = {}
        for t in core + deferred:
            kind = TOOL_KINDS.get(t["name"])
            domains[t["name"]] = (
                list(kind[1]) if kind else [rng.choice(("general", "ops", "data", "research"))]
            )
        domains = dict(sorted(domains.items()))
        selected_ids = sorted(f"Tool:{n}" for n in core_names + deferred_names) + sorted(
            f"Skill:{w}" for w in rng.sample(_WORDS, 6)
        )
        all_tool_ids = sorted(f"Tool:{t['name']}" for t in pool if t["name"] != "find_tools")
        excluded = sorted(set(all_tool_ids) - set(selected_ids))
        surface_line = rng.choice(("Surface: cli", "Surface: desktop", "Surface: telegram", "Surface: web"))
        sections = list(self._base_sections)
        middle = sections[3:9]
        rng.shuffle(middle)
        sections[3:9] = middle
        prompt_parts = ["You are vak, a general-purpose agent that works in the user's workspace."]
        for title, body in sections[: 8 + rng.randint(0, 2)]:
            prompt_parts.append(f"## {title}\n{body}")
        prompt_parts.append(surface_line)
        prompt_parts.append(
            "Skills: " + ", ".join(s.split(":", 1)[1] for s in selected_ids if s.startswith("Skill:"))
        )
        prompt_parts.append("MCP servers: notion, linear")
        system_prompt = "\n\n".join(prompt_parts)
        surface = CapabilitySurface(
            variant=variant,
            system_prompt=system_prompt,
            tool_schemas=tool_schemas,
            capability_ids=selected_ids,
            excluded_ids=excluded,
            core_tool_names=core_names,
            deferred_tool_names=deferred_names,
            tool_index=tool_index,
            tool_domains=domains,
            digest=prefix_digest(system_prompt, tool_schemas),
            prefix_chars=prefix_chars(system_prompt, tool_schemas),
        )
        self._surfaces[variant] = surface
        if len(self._surfaces) > 16:  # bounded: an evicted surface is rebuilt identically on demand
            del self._surfaces[min(self._surfaces)]
        return surface

    @staticmethod
    def _first_sentence(text: str) -> str:
        cut = text.find(". ")
        if cut >= 0:
            return text[: cut + 1]
        return text.split("\n", 1)[0]
