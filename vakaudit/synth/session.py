"""Write one synthetic session ledger, turn by turn, in vak's write order.

Every line goes through :class:`vakaudit.ledger.SessionLog` (real appends, one fdatasync per entry
unless fsync is off). The side effects of a turn (checkpoint, intent-evidence row, cost row,
routing evidence, activity-log rows, sandbox events, memory notes) are typed events emitted to the
home (:class:`vakaudit.synth.events.SessionHost`, :mod:`vakaudit.synth.events`) in the order the
capacity report's "One turn, every write" lists them; the home hands each to its per-kind writers.

Order of one turn's ledger entries (report order; replay.md §1.3 puts the binding first, which
changes nothing a projection reads): admission activity, ``goal_update``, ``intent``,
``turn_capabilities_bound``, the directive; then per step (replay.md §1.3 item 6): [summarize
receipt + compaction], [retry / route-fallback activities], [``prefix-changed`` diagnostic],
execute ``receipt``, assistant ``message``, [tool activity + tool-result ``message``] or [control
nudge]; then ``presentation`` + ``turn_card`` (G2+, when the turn presented something).
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vakaudit.ledger import Entry, SessionLog
from vakaudit.ledger.jsonenc import dumps
from vakaudit.replay.prefix import estimate_tokens
from vakaudit.synth.content import TOOL_KINDS, CapabilitySurface
from vakaudit.synth.events import (
    ApprovalAsked,
    CheckpointTaken,
    IntentRead,
    Remembered,
    SessionEnded,
    ToolRan,
    TurnEnded,
    TurnSettled,
)
from vakaudit.synth.profiles import LOCAL_PROVIDERS, MODELS

if TYPE_CHECKING:
    from vakaudit.synth.events import SessionHost

__all__ = ["SessionSpec", "SessionResult", "write_session", "MODELS", "LOCAL_PROVIDERS"]


_ACTS_EFFECT = ("modify", "operate", "author")
_ACTS_OTHER = ("answer", "locate", "analyze", "converse", "verify", "orchestrate")
_CONTROL = (
    ("stop_hook", "[stop-hook]"),
    ("grounding_check", "[grounding-check]"),
    ("fence_check", "[fence-check]"),
    ("stop_guard", "[stop-guard]"),
    ("presentation_check", "[presentation-check]"),
)
_STANCES = ("operational", "exploratory", "careful", "evidential", "conversational")


@dataclass(slots=True)
class SessionSpec:
    """What to write for one session."""

    session_id: str
    cwd: str
    app_version: str
    generation: str
    turns: int
    surface: str = "cli"
    provider: str = "anthropic"
    checkpoint_turns: frozenset = frozenset()
    workspace_bytes: int = 0
    child_turns: frozenset = frozenset()  # turns whose first tool call spawns a worker session
    parent_session_id: str | None = None
    child_task: str = ""
    forced: frozenset = frozenset()  # kinds the tiny profile wants to see in this session


@dataclass(slots=True)
class SessionResult:
    session_id: str
    path: Any
    entries: int = 0
    turns: int = 0
    final_text: str = ""


@dataclass(slots=True)
class _Chain:
    """Chain-dependent state, snapshotted at turn boundaries so a branch can restore it."""

    tail_id: str
    last_digest: str = ""
    seen_digests: frozenset = frozenset()
    goal_revision: int = 0
    turn_no: int = 0
    directive_ids: tuple = ()
    msg_chars: int = 0
    last_intent_visible: str | None = None


@dataclass(slots=True)
class _Turn:
    number: int
    directive_id: str = ""
    directive_text: str = ""
    act: str = "answer"
    domains: list = field(default_factory=list)
    calls: list = field(default_factory=list)  # (tool, tool_use_id, input, result_len, result_head)
    presentations: list = field(default_factory=list)
    final_text: str = ""
    receipts: list = field(default_factory=list)  # (provider, model, usage, attempts)


class _SessionWriter:
    def __init__(self, home: SessionHost, spec: SessionSpec, rng: random.Random) -> None:
        self.home = home
        self.spec = spec
        self.rng = rng
        self.profile = home.profile
        self.pools = home.pools
        self.gen = spec.generation
        self.clock = home.clock
        self.ids = home.ids
        model = MODELS[spec.provider][0]
        self.provider = spec.provider
        self.model = model
        self.variant = home.next_variant(rng)
        self.epoch = rng.randint(1, 40)
        self.tool_seq = 0
        self.log: SessionLog | None = None
        self.request_builder: Any = None
        self.entries = 0
        self.checkpoint_seq = 0

    # -- helpers --------------------------------------------------------------------------------

    @property
    def surface(self) -> CapabilitySurface:
        return self.pools.surface(self.variant)

    def append(self, kind: str, payload: dict, **kw: Any):
        entry = self.log.append(kind, payload, **kw)
        self.entries += 1
        return entry

    def bind_capabilities(self) -> None:
        """Append the turn's capability binding; keep in memory the body it was written from.

        A binding is written whole every turn (72% of the measured ledger bytes). The ledger handle
        keeps every appended line, and the request builder decodes each binding and keeps it (for
        G4 reference resolution): a session held its bindings about three times over, ~150 KB per
        turn, and the longest session of a big home set its peak memory. The entry kept instead has
        the same envelope and the very payload that was serialized, whose lists and strings belong
        to the shared capability surface: a few hundred bytes per turn. The bytes on disk and every
        value the request builder derives from the entry are unchanged.
        """
        payload = self.surface.body(self.epoch, self.gen)
        written = self.append("turn_capabilities_bound", payload)
        entries = self.log.entries
        assert entries[-1] is written
        entries[-1] = Entry(
            written.id,
            written.parent_id,
            written.ts,
            written.kind,
            payload,
            prev_hash=written.prev_hash,
            at_turn=written.at_turn,
        )

    def activity(
        self,
        activity_kind: str,
        status: str,
        label: str,
        *,
        turn: int | None,
        detail=None,
        data=None,
        activity_id: str | None = None,
    ):
        if activity_id is None:
            activity_id = f"{activity_kind}-{self.ids.hex(8)}"
        entry = self.log.append_activity(
            activity_id,
            activity_kind,
            status,
            label,
            turn=turn,
            detail=detail,
            data={k: str(v) for k, v in (data or {}).items()},
        )
        self.entries += 1
        return entry

    def _lognormal(self, median: float, sigma: float, cap: float) -> int:
        return int(min(cap, median * math.exp(self.rng.gauss(0.0, sigma))))

    # -- session ----------------------------------------------------------------------------------

    def header(self) -> dict:
        spec = self.spec
        surface = self.surface
        header: dict[str, Any] = {
            "session_id": spec.session_id,
            "created_at": self.clock.ts(),
            "cwd": spec.cwd,
        }
        if spec.parent_session_id:
            header["parent_session_id"] = spec.parent_session_id
        if self.gen != "g1" or spec.surface != "cli":
            origin = {
                "surface": spec.surface,
                "address": "local" if spec.surface == "cli" else f"{self.ids.hex(9)}",
            }
            header["conversation"] = {
                "conversation_id": spec.session_id,
                "audience_id": "local" if spec.surface in ("cli", "desktop") else f"aud_{self.ids.hex(12)}",
                "origin": origin,
            }
        capabilities = [
            {
                "name": tool["name"],
                "kind": "tool",
                "invocation": "model-tool",
                "description": tool["description"],
                "source": "builtin",
                "configuration": tool["input_schema"],
            }
            for tool in surface.tool_schemas[1:]
        ]
        header["contract"] = {
            "app_version": spec.app_version,
            "provider": self.provider,
            "model": self.model,
            "route_ladder": [
                {"provider": self.provider, "model": self.model},
                {"provider": "openai", "model": MODELS["openai"][0]},
            ],
            "route_objective": "balanced",
            "route_annotations": [],
            "system_prompt": surface.system_prompt,
            "permission_mode": self.rng.choice(("workspace-write", "workspace-write", "read-only", "ask")),
            "capabilities": capabilities,
            "prompt_layers": [
                {
                    "block": "identity",
                    "layer": "core",
                    "source": "builtin",
                    "digest": self.ids.hex(64),
                    "bytes": 812,
                },
                {
                    "block": "rules",
                    "layer": "user",
                    "source": "~/.vak/config.toml",
                    "digest": self.ids.hex(64),
                    "bytes": 2311,
                },
            ],
        }
        return header

    def run(self) -> SessionResult:
        spec = self.spec
        home = self.home
        path = home.session_path(spec.cwd, spec.session_id)
        self.log = SessionLog.create(path, self.header(), clock=self.clock, new_id=self.ids, fsync=home.fsync)
        self.entries = 1
        result = SessionResult(spec.session_id, path)
        if spec.parent_session_id:
            result.final_text = self._run_child()
        else:
            chain = _Chain(tail_id=self.log.tail_id)
            history: list[_Chain] = [chain]
            for t in range(spec.turns):
                if (
                    t >= 2
                    and self.rng.random() < self.profile.branch_rate
                    or (t == 2 and "branch" in spec.forced)
                ):
                    # edit-and-retry: abandon the previous turn, continue from the one before it
                    chain = history[-2]
                    self.log.branch_at(chain.tail_id)
                chain = self._turn(chain, t)
                history.append(chain)
                if len(history) > 3:
                    history.pop(0)
                home.emit(TurnEnded(self, t))
            result.turns = spec.turns
        self.log.close()
        result.entries = self.entries
        home.emit(SessionEnded(self, result))
        return result

    # -- one turn -----------------------------------------------------------------------------

    def _turn(self, chain: _Chain, t: int) -> _Chain:
        rng = self.rng
        prof = self.profile
        spec = self.spec
        home = self.home
        gen = self.gen
        forced = spec.forced
        turn_no = chain.turn_no + 1
        turn = _Turn(number=turn_no)
        effect = t in spec.checkpoint_turns
        turn.act = rng.choice(_ACTS_EFFECT) if (effect or rng.random() < 0.3) else rng.choice(_ACTS_OTHER)
        stakes = (
            "reversible"
            if turn.act in _ACTS_EFFECT
            else rng.choice(("inert", "inert", "reversible", "costly"))
        )
        tier = rng.choice(("signals", "signals", "declared", "local-model", "cloud-model", "general"))
        # capability epoch: moves now and then, and the interface with it
        if t > 0 and (rng.random() < prof.epoch_change_rate or (t == 1 and "epoch" in forced)):
            self.epoch += 1
            self.variant = home.next_variant(rng)
        directive = self._directive_text(turn.act)
        turn.directive_text = directive
        home.clock.advance_ms(rng.uniform(20_000, 600_000) if t else 500)

        # workspace checkpoint (first turn of a checkpointing session, and turns expecting an effect)
        if effect:
            home.emit(CheckpointTaken(self, directive))
        request_id = f"req_{self.ids.hex(20)}"
        self.activity("run", "succeeded", "Request admitted", turn=turn_no, data={"request_id": request_id})
        # goal update
        revision = chain.goal_revision + 1
        relation = (
            "new" if revision == 1 else rng.choice(("adds_to", "adds_to", "corrects", "replaces", "status"))
        )
        goal = {"revision": revision, "relation": relation, "request": directive}
        if relation in ("replaces", "corrects"):
            goal["supersedes_revision"] = revision - 1
        if gen == "g3" and rng.random() < 0.2:
            goal["explicit"] = True
        self.append("goal_update", goal)
        if rng.random() < prof.goal_rate or (t == 0 and "goal" in forced):
            self.append(
                "goal",
                {
                    "goal_id": f"goal-{self.ids.hex(8)}",
                    "objective": directive[:200],
                    "criteria": [self.pools.sentence(rng) for _ in range(2)],
                    "status": rng.choice(
                        ("active", {"done": {"audited": True}}, {"unverified": {"reason": "no evidence"}})
                    ),
                },
            )
        # intent evidence row (side ledger), then the intent entry
        home.emit(IntentRead(self, turn.act, stakes, tier))
        domains = sorted(
            {
                rng.choice(("code", "ops", "research", "data", "docs", "general", "calendar"))
                for _ in range(rng.randint(1, 2))
            }
        )
        turn.domains = domains
        visible = self._model_visible(turn.act, stakes)
        self.append("intent", self._intent_payload(turn.act, stakes, tier, domains, visible))
        # capability binding, written whole every turn
        self.bind_capabilities()
        # the directive
        meta = None
        if gen == "g3":
            meta = {"author_id": "usr_local", "author_name": "Ana", "request_id": request_id}
        directive_entry = self.log.append_message(
            {"role": "user", "content": [{"type": "text", "text": directive}]}, meta
        )
        self.entries += 1
        turn.directive_id = directive_entry.id
        tail_text = f"<intent>\n{visible}\n</intent>" if visible else ""

        # steps
        n_tools = self._pick(prof.tool_steps, home.spread("tool_steps"))
        if t in spec.child_turns:
            n_tools = max(1, n_tools)
        if "work" in forced and t == 1 or rng.random() < prof.work_rate:
            self._work_entries(turn)
        due = turn_no % prof.compaction_every == 0 or ("compaction" in forced and t == 3)
        if due and len(chain.directive_ids) >= 2:
            self._compaction(chain)
        nudged = False
        step = 0
        pending_tools = n_tools
        present = gen != "g1" and (
            rng.random() < prof.presentation_rate or ("presentation" in forced and t == 0)
        )
        state = {
            "last_digest": chain.last_digest,
            "seen": set(chain.seen_digests),
            "msg_chars": chain.msg_chars + len(directive.encode()),
        }
        while True:
            step += 1
            final = pending_tools == 0
            self._dispatch(turn, state, tail_text, step)
            if not final:
                pending_tools -= 1
                tool = self._choose_tool(t in spec.child_turns and not turn.calls)
                self._tool_step(turn, state, tool)
                continue
            text = self._final_text(turn, present)
            entry = self.log.append_message(
                {"role": "assistant", "content": self._assistant_blocks(text)},
                self._assistant_meta(turn),
            )
            self.entries += 1
            state["msg_chars"] += len(text.encode())
            turn.final_text = text
            if (
                not nudged
                and home.spread("nudge") < prof.nudge_rate
                or ("nudge" in forced and t == 0 and not nudged)
            ):
                nudged = True
                control, marker = rng.choice(_CONTROL)
                self.log.append_message(
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": f"{marker}: {self.pools.sentence(rng)}"}],
                    },
                    {"control": control},
                )
                self.entries += 1
                continue
            break
        # presentation + turn card
        if present:
            self._present(turn, entry.id)
        if rng.random() < prof.run_summary_rate:
            self.activity(
                "run",
                "succeeded",
                "Run finished",
                turn=turn_no,
                data={"steps": step, "tool_calls": len(turn.calls)},
            )
        home.emit(TurnSettled(self, turn))
        return _Chain(
            tail_id=self.log.tail_id,
            last_digest=state["last_digest"],
            seen_digests=frozenset(state["seen"]),
            goal_revision=revision,
            turn_no=turn_no,
            directive_ids=(chain.directive_ids + (turn.directive_id,))[-400:],
            msg_chars=state["msg_chars"],
            last_intent_visible=visible,
        )

    # -- pieces of a turn -----------------------------------------------------------------------

    def _pick(self, probs: tuple[float, ...], r: float) -> int:
        acc = 0.0
        for i, p in enumerate(probs):
            acc += p
            if r < acc:
                return i
        return len(probs) - 1

    def _directive_text(self, act: str) -> str:
        rng = self.rng
        size = self._lognormal(self.profile.directive_mean * 0.6, 0.8, 4000)
        lead = {
            "modify": "Please fix",
            "operate": "Run",
            "author": "Draft",
            "answer": "What is",
            "locate": "Where is",
            "analyze": "Compare",
            "converse": "Thanks,",
            "verify": "Check whether",
            "orchestrate": "Plan and delegate",
        }[act]
        return f"{lead} {self.pools.prose(rng, max(10, size))}"

    def _model_visible(self, act: str, stakes: str) -> str | None:
        if self.rng.random() < 0.08:
            return None
        return (
            f"Reading: {act} ({stakes}). "
            + self.pools.sentence(self.rng)
            + " "
            + self.pools.sentence(self.rng)
        )

    def _intent_payload(self, act: str, stakes: str, tier: str, domains: list, visible: str | None) -> dict:
        rng = self.rng
        conf = round(rng.uniform(0.55, 0.98), 2)
        reading = {
            "act": act,
            "horizon": rng.choice(("turn", "session", "standing")),
            "stakes": stakes,
            "evidence": rng.choice(("none", "workspace", "web", "memory")),
            "clarity": rng.choice(("clear", "clear", "ambiguous")),
            "attendance": rng.choice(("attended", "unattended")),
            "alternate_acts": [rng.choice(_ACTS_OTHER)],
            "confidence": conf,
            "axis_confidence": {
                "act": conf,
                "stakes": round(rng.uniform(0.5, 0.99), 2),
                "domains": round(rng.uniform(0.4, 0.99), 2),
            },
            "domains": domains,
            "input_modalities": ["text"],
            "output_modalities": ["text"] if rng.random() < 0.8 else ["text", "card"],
        }
        payload: dict[str, Any] = {"reading": reading}
        if self.gen == "g3":
            payload["strands"] = []
        stance = rng.choice(_STANCES)
        payload["engagement"] = {
            "posture": rng.choice(("general", "focused", "delegating")),
            "stance": stance,
            "slice": {"keep_domains": domains, "defer_rest": True},
            "checkpoint": act in _ACTS_EFFECT,
            "notes": [self.pools.sentence(rng) for _ in range(rng.randint(2, 5))],
            "guidelines": [self.pools.sentence(rng) for _ in range(rng.randint(1, 3))],
        }
        provenance: dict[str, Any] = {
            "tier": tier,
            "resolver_version": 3,
            "signals": [
                {
                    "name": rng.choice(("verb", "path", "url", "question_mark", "imperative")),
                    "weight": round(rng.random(), 2),
                }
                for _ in range(rng.randint(1, 4))
            ],
        }
        if tier in ("local-model", "cloud-model"):
            provenance["model"] = "gemma4:e2b-mlx" if tier == "local-model" else "claude-haiku-4-5"
            provenance["prompt_digest"] = self.ids.hex(64)
        provenance["reproducible"] = tier in ("declared", "signals")
        payload["provenance"] = provenance
        if rng.random() < 0.1:
            payload["outcome"] = {"kind": rng.choice(("held", "restated")), "note": self.pools.sentence(rng)}
        if visible is not None:
            payload["model_visible"] = visible
        return payload

    def _dispatch(self, turn: _Turn, state: dict, tail_text: str, step: int) -> None:
        """Activities of one dispatch and its execute receipt (written before the response)."""
        rng = self.rng
        prof = self.profile
        home = self.home
        attempts = []
        provider, model = self.provider, self.model
        latency = int(self._lognormal(2400, 0.6, 60_000))
        ordinal = 0
        if rng.random() < prof.retry_rate:
            attempts.append(
                {
                    "ordinal": 0,
                    "reason": "initial",
                    "domain": "network",
                    "settlement": "unknown",
                    "latency_ms": int(rng.uniform(5000, 30_000)),
                    "error": "stream reset",
                }
            )
            ordinal = 1
            self.activity(
                "retry",
                "succeeded",
                "Retry attempt 1",
                turn=turn.number,
                detail="provider timeout",
                data={"attempt": 1, "delay_ms": 500},
            )
        if rng.random() < prof.fallback_rate:
            attempts.append(
                {
                    "ordinal": ordinal,
                    "reason": "initial" if ordinal == 0 else "retry",
                    "domain": "provider",
                    "settlement": "failed",
                    "latency_ms": int(rng.uniform(200, 4000)),
                    "error": "503 overloaded",
                }
            )
            ordinal += 1
            provider, model = "openai", MODELS["openai"][0]
            self.activity(
                "route_fallback",
                "succeeded",
                "Route fallback",
                turn=turn.number,
                detail=f"{provider}/{model}",
                data={"model": model, "provider": provider},
            )
        home.clock.advance_ms(latency)
        surface = self.surface
        digest = surface.digest if self.gen != "g1" else None
        prefix_tokens = None
        # usage: the prefix plus the messages, in tokens
        prefix_est = estimate_tokens(surface.prefix_chars)
        msg_tokens = estimate_tokens(state["msg_chars"] + len(tail_text.encode()))
        if digest is not None and digest not in state["seen"]:
            # the first receipt of a digest measures prefix_tokens = U - estimate(message chars),
            # with the message chars of the request as a replay rebuilds it (replay.md §11)
            prefix_tokens = max(0, prefix_est + rng.randint(-40, 40))
            input_tokens = prefix_tokens + estimate_tokens(home.request_message_chars(self))
        else:
            input_tokens = prefix_est + msg_tokens + rng.randint(0, 60)
        usage: dict[str, Any] = {
            "input_tokens": input_tokens,
            "output_tokens": self._lognormal(300, 0.8, 8000),
        }
        if provider == "anthropic" and self.gen != "g1" and rng.random() < 0.7:
            usage["cache_read_input_tokens"] = int(prefix_est * rng.uniform(0.6, 1.0))
        if self.gen == "g3" and provider == "ollama":
            usage["prefill_ms"] = int(rng.uniform(200, 3000))
        attempts.append(
            {
                "ordinal": ordinal,
                "reason": "initial" if ordinal == 0 else "retry",
                "domain": "unknown",
                "settlement": "ok",
                "latency_ms": latency,
                "usage": usage,
            }
        )
        if provider != self.provider:
            attempts[-1]["provider"] = provider
            attempts[-1]["model"] = model
        if digest is not None and state["last_digest"] and digest != state["last_digest"]:
            self.log.append_activity(
                f"activity-{self.clock.ns}",
                "diagnostic",
                "succeeded",
                "prefix-changed",
                data={"current": digest, "previous": state["last_digest"]},
            )
            self.entries += 1
        receipt: dict[str, Any] = {
            "purpose": "execute",
            "provider": provider,
            "model": model,
            "winning_attempt": ordinal,
            "attempts": attempts,
        }
        if digest is not None:
            receipt["prefix_digest"] = digest
            if prefix_tokens is not None:
                receipt["prefix_tokens"] = prefix_tokens
            state["seen"].add(digest)
            state["last_digest"] = digest
        self.append("receipt", receipt)
        turn.receipts.append((provider, model, usage, attempts))
        state["usage"] = usage
        state["model"] = model

    def _assistant_meta(self, turn: _Turn) -> dict:
        provider, model, usage, _ = turn.receipts[-1]
        return {"model": model, "stop_reason": "end_turn", "usage": usage}

    def _assistant_blocks(self, text: str) -> list:
        blocks: list[dict] = []
        if self.gen == "g3" and self.rng.random() < 0.15:
            blocks.append(
                {"type": "thinking", "text": self.pools.prose(self.rng, 300), "signature": self.ids.hex(48)}
            )
        blocks.append({"type": "text", "text": text})
        return blocks

    def _choose_tool(self, force_task: bool) -> str:
        if force_task:
            return "task"
        rng = self.rng
        names = (
            "read",
            "bash",
            "grep",
            "web_search",
            "web_fetch",
            "edit",
            "write",
            "glob",
            "recall",
            "sql_query",
            "python",
            "calendar_list",
            "weather",
            "mail_search",
            "remember",
        )
        weights = (25, 22, 10, 10, 6, 6, 4, 4, 3, 3, 3, 1, 1, 1, 0)
        if rng.random() < self.profile.remember_rate:
            return "remember"
        return rng.choices(names, weights=weights)[0]

    def _tool_input(self, tool: str) -> dict:
        rng = self.rng
        path = f"{rng.choice(('src', 'crates/vak-core/src', 'tests', 'docs'))}/{self.pools.words(rng, 1)}.rs"
        if tool in ("bash", "python"):
            cmd = rng.choice(
                (
                    "cargo test -p vak-session",
                    "ls -la",
                    "git status --short",
                    "pytest -q tests/",
                    "rg -n 'prefix_digest' crates",
                    "du -sh ~/.local/share/vak",
                    "make build",
                )
            )
            return {"command": cmd, "timeout": rng.choice((30, 120, 600))}
        if tool in ("read", "edit", "write"):
            out: dict[str, Any] = {"path": path}
            if tool == "edit":
                out = {
                    "new_text": self.pools.sentence(rng),
                    "old_text": self.pools.sentence(rng),
                    "path": path,
                }
            if tool == "write":
                out = {"content": self.pools.prose(rng, 200), "path": path}
            return out
        if tool in ("grep", "glob"):
            return {"path": ".", "pattern": self.pools.words(rng, 1)}
        if tool == "task":
            return {"instructions": self.pools.prose(rng, 240), "title": self.pools.words(rng, 4)}
        if tool == "remember":
            return {
                "kind": rng.choice(("fact", "decision", "preference")),
                "tag": self.pools.words(rng, 1),
                "text": self.pools.sentence(rng),
            }
        return {"query": self.pools.words(rng, rng.randint(2, 6))}

    def _tool_result(self, tool: str, inp: dict) -> tuple[str, bool]:
        rng = self.rng
        kind = TOOL_KINDS.get(tool, ("text", []))[0]
        if rng.random() < 0.04:
            return f"error: {self.pools.sentence(rng)}", True
        if kind in ("ack", "card"):
            return f"ok: wrote {rng.randint(10, 9000)} bytes to {inp.get('path', 'memory')}", False
        size = self.home.result_size(rng)
        if kind == "bash":
            body = self.pools.slice(rng, size)
            content = f"{body}\nexit code: {0 if rng.random() < 0.9 else 1}"
        elif kind in ("links", "table", "json"):
            items = []
            used = 0
            while used < size:
                item = {
                    "title": self.pools.sentence(rng)[:80],
                    "url": f"https://example.org/{self.ids.hex(10)}",
                    "snippet": self.pools.prose(rng, 220),
                }
                items.append(item)
                used += 370
            content = dumps(items).decode()
        else:
            content = self.pools.slice(rng, size)
        self.home.result_written(len(dumps(content)))
        return content, False

    def _tool_step(self, turn: _Turn, state: dict, tool: str) -> None:
        rng = self.rng
        home = self.home
        self.tool_seq += 1
        tool_use_id = f"call_{self.ids()}" if self.gen == "g3" else f"toolu_{self.ids.hex(24)}"
        inp = self._tool_input(tool)
        lead = self.pools.sentence(rng) if rng.random() < 0.6 else ""
        blocks: list[dict] = []
        if self.gen == "g3" and rng.random() < 0.1:
            blocks.append({"type": "thinking", "text": self.pools.prose(rng, 200)})
        if lead:
            blocks.append({"type": "text", "text": lead})
        blocks.append({"type": "tool_use", "id": tool_use_id, "name": tool, "input": inp})
        meta = self._assistant_meta(turn)
        meta["stop_reason"] = "tool_use"
        self.log.append_message({"role": "assistant", "content": blocks}, meta)
        self.entries += 1
        started = self.clock.ns
        if tool in ("bash", "python", "write", "edit") and rng.random() < self.profile.approval_rate:
            denied = rng.random() < 0.1
            self.activity(
                "approval",
                "denied" if denied else "succeeded",
                f"Approve {tool}",
                turn=turn.number,
                detail=inp.get("command") or inp.get("path"),
                data={"tool": tool, "tool_use_id": tool_use_id},
            )
            home.emit(ApprovalAsked(self, tool, denied))
        if tool == "task":
            content = home.spawn_child(self, inp["instructions"])
            is_error = False
            self.activity(
                "worker",
                "succeeded",
                "Worker finished",
                turn=turn.number,
                data={"tool": tool, "tool_use_id": tool_use_id},
            )
        else:
            content, is_error = self._tool_result(tool, inp)
            duration = self._lognormal(400, 1.0, 30_000)
            if tool in ("bash", "python"):
                duration = home.sandbox_execution(self, inp["command"], content, is_error)
            self.clock.advance_ms(duration)
            status = "failed" if is_error else "succeeded"
            self.activity(
                "run",
                status,
                tool,
                turn=turn.number,
                detail=None,
                data={"tool": tool, "tool_use_id": tool_use_id},
            )
            if tool == "remember" and not is_error:
                home.emit(Remembered(self, inp))
        self.log.append_message(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": tool_use_id,
                        "content": content,
                        "is_error": is_error,
                    }
                ],
            }
        )
        self.entries += 1
        home.emit(ToolRan(self, tool, tool_use_id, not is_error, (self.clock.ns - started) // 1_000_000))
        state["msg_chars"] += len(dumps(inp)) + min(len(content.encode()), 600)
        turn.calls.append((tool, tool_use_id, inp, len(content), content[:200]))

    def _final_text(self, turn: _Turn, present: bool) -> str:
        size = self._lognormal(self.profile.final_answer_mean * 0.75, 0.7, 20_000)
        return self.pools.prose(self.rng, size)

    def _present(self, turn: _Turn, final_id: str) -> None:
        rng = self.rng
        sem = rng.choice(("metric", "table", "list", "comparison"))
        title = self.pools.sentence(rng)[:60]
        payload = {
            "items": [
                {"label": self.pools.words(rng, 2), "value": rng.randint(1, 999)}
                for _ in range(rng.randint(2, 8))
            ],
            "note": self.pools.sentence(rng),
            "title": title,
        }
        payload = _canonical(payload)
        payload_digest = hashlib.sha256(dumps(payload)).hexdigest()
        derived = [c[1] for c in turn.calls[:2]]
        if turn.calls and rng.random() < 0.5:
            source = {"kind": "tool_call", "tool_use_id": turn.calls[-1][1]}
        else:
            source = {"kind": "fence", "message_entry_id": final_id}
        pres = self.append(
            "presentation",
            {
                "turn_id": turn.directive_id,
                "source": source,
                "semantic_type": sem,
                "skill_id": "core",
                "skill_version": "1.0.0",
                "schema_version": 1,
                "payload": payload,
                "payload_digest": payload_digest,
                "derived_from": derived,
                "title": title,
                "identity_digest": hashlib.sha256(f"{sem}\x00{title}".encode()).hexdigest(),
            },
        )
        self.activity(
            "presentation_selection",
            "succeeded",
            "Presentation selected",
            turn=turn.number,
            data={
                "fallback_used": "false",
                "mode": "card",
                "revision": 1,
                "semantic_type": sem,
                "spec_id": f"core/{sem}",
            },
        )
        did = [
            {"tool": c[0], "args_digest": c[2], "evidence_id": c[1], "shape": f"{c[3]} chars"}
            for c in turn.calls
        ]
        narration = turn.final_text.split(". ")[0][:300]
        full_chars = (
            len(turn.directive_text.encode()) + len(turn.final_text.encode()) + sum(c[3] for c in turn.calls)
        )
        card = {
            "turn_id": turn.directive_id,
            "asked": turn.directive_text[:400],
            "did": did,
            "answered": {
                "presentations": [
                    {
                        "id": pres.id,
                        "semantic_type": sem,
                        "title": title,
                        "digest": payload_digest,
                        "derived_from": derived,
                    }
                ],
                "narration": narration,
            },
            "outcome": "completed",
            "reading": {"act": turn.act, "domains": turn.domains, "modalities": ["text"]},
            "tokens_full": estimate_tokens(full_chars),
            "tokens_card": estimate_tokens(len(narration) + 120),
        }
        self.append("turn_card", {"turn_id": turn.directive_id, "card": card})
        turn.presentations.append(pres.id)

    def _compaction(self, chain: _Chain) -> None:
        rng = self.rng
        ids = chain.directive_ids
        receipt: dict[str, Any] = {
            "purpose": "summarize",
            "provider": self.provider,
            "model": self.model,
            "winning_attempt": 0,
            "attempts": [
                {
                    "ordinal": 0,
                    "reason": "initial",
                    "domain": "unknown",
                    "settlement": "ok",
                    "latency_ms": int(rng.uniform(800, 5000)),
                    "usage": {
                        "input_tokens": rng.randint(4000, 20000),
                        "output_tokens": rng.randint(200, 1024),
                    },
                }
            ],
        }
        if self.gen != "g1":
            receipt["prefix_digest"] = ""
        self.append("receipt", receipt)
        summary = self.pools.prose(rng, 900)
        tokens_before = rng.randint(40_000, 180_000)
        if self.gen == "g3":
            last = len(ids) - 2 if len(ids) >= 3 else len(ids) - 1
            self.append(
                "compaction",
                {
                    "summary": summary,
                    "first_turn_id": ids[0],
                    "last_turn_id": ids[max(0, last)],
                    "model": self.model,
                    "tokens_before": tokens_before,
                    "reset_all": False,
                },
            )
        else:
            kept = ids[-1]
            payload: dict[str, Any] = {
                "summary": summary,
                "first_kept_entry_id": kept,
                "tokens_before": tokens_before,
            }
            if rng.random() < 0.5:
                payload["partition"] = {
                    "selected_entry_ids": [kept],
                    "dropped_entry_ids": list(ids[:-1][-20:]),
                }
            payload["reset_all"] = False
            self.append("compaction", payload)
        self.home.compactions[self.gen == "g3"] += 1

    def _work_entries(self, turn: _Turn) -> None:
        cid = f"work-{self.ids.hex(8)}"
        items = [
            {
                "item_id": f"item-{i}",
                "title": self.pools.words(self.rng, 4),
                "instructions": self.pools.sentence(self.rng),
                "dependencies": [] if i == 0 else [f"item-{i - 1}"],
                "owner": "parent_agent" if i == 0 else "worker",
                "required": True,
                "readonly": False,
                "path_claims": [],
                "criterion_ids": ["c1"],
            }
            for i in range(2)
        ]
        contract = {
            "contract_id": cid,
            "revision": 0,
            "source_entry_id": turn.directive_id,
            "objective": turn.directive_text[:160],
            "constraints": [],
            "assumptions": [],
            "criteria": [
                {
                    "criterion_id": "c1",
                    "statement": "tests pass",
                    "kind": {"kind": "shell", "command": "cargo test"},
                    "required": True,
                }
            ],
            "items": items,
        }
        self.append(
            "work",
            {"contract_id": cid, "revision": 0, "kind": {"kind": "contract_created", "contract": contract}},
        )
        self.append(
            "work",
            {
                "contract_id": cid,
                "revision": 0,
                "kind": {
                    "kind": "contract_status_changed",
                    "from": "draft",
                    "to": "active",
                    "reason": "accepted",
                },
            },
        )
        self.append(
            "work",
            {
                "contract_id": cid,
                "revision": 0,
                "kind": {
                    "kind": "item_status_changed",
                    "item_id": "item-0",
                    "from": "proposed",
                    "to": "ready",
                    "attempt": 0,
                    "reason": "dependencies satisfied",
                },
            },
        )

    # -- worker sessions --------------------------------------------------------------------------

    def _run_child(self) -> str:
        rng = self.rng
        spec = self.spec
        self.log.append_message({"role": "user", "content": [{"type": "text", "text": spec.child_task}]})
        self.entries += 1
        turn = _Turn(number=1)
        state = {"last_digest": "", "seen": set(), "msg_chars": len(spec.child_task)}
        for _ in range(rng.randint(0, 2)):
            self._child_receipt(turn)
            self._tool_step(turn, state, rng.choice(("read", "grep", "bash", "web_search")))
        self._child_receipt(turn)
        text = self.pools.prose(rng, 500)
        self.log.append_message(
            {"role": "assistant", "content": [{"type": "text", "text": text}]}, self._assistant_meta(turn)
        )
        self.entries += 1
        self.append("child_run", {"status": "completed", "outcome": {"summary": text[:200], "turns": 1}})
        self.home.emit(TurnSettled(self, turn))
        return text

    def _child_receipt(self, turn: _Turn) -> None:
        # Worker ledgers carry no capability binding (unconfirmed in vak): their receipts say ""
        # for the prefix digest, so a replay has nothing to check them against.
        latency = self._lognormal(1800, 0.5, 30_000)
        self.clock.advance_ms(latency)
        usage = {
            "input_tokens": self.rng.randint(3000, 14000),
            "output_tokens": self._lognormal(200, 0.7, 4000),
        }
        attempts = [
            {
                "ordinal": 0,
                "reason": "initial",
                "domain": "unknown",
                "settlement": "ok",
                "latency_ms": latency,
                "usage": usage,
            }
        ]
        receipt = {
            "purpose": "execute",
            "provider": self.provider,
            "model": self.model,
            "winning_attempt": 0,
            "attempts": attempts,
        }
        if self.gen != "g1":
            receipt["prefix_digest"] = ""
        self.append("receipt", receipt)
        turn.receipts.append((self.provider, self.model, usage, attempts))


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _canonical(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def write_session(home: SessionHost, spec: SessionSpec, rng: random.Random) -> SessionResult:
    """Write one session ledger (and its share of the home's side artifacts) through ``home``."""
    return _SessionWriter(home, spec, rng).run()
