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

This module holds the session and the turn (what a session is asked to write, the chain state a
branch restores, the order of a turn); the entries of one step are written by
:mod:`vakaudit.synth.steps`, the payloads of the turn's other entries built by
:mod:`vakaudit.synth.payloads`, both parts of :class:`_SessionWriter`.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vakaudit.ledger import Entry, SessionLog
from vakaudit.synth.content import CapabilitySurface
from vakaudit.synth.events import CheckpointTaken, IntentRead, SessionEnded, TurnEnded, TurnSettled
from vakaudit.synth.payloads import _ACTS_EFFECT, _ACTS_OTHER, _TurnPayloads
from vakaudit.synth.profiles import LOCAL_PROVIDERS, MODELS
from vakaudit.synth.steps import _StepWriter
from vakaudit.synth.turnstate import ChainState, TurnState

if TYPE_CHECKING:
    from vakaudit.synth.events import SessionHost

__all__ = ["SessionSpec", "SessionResult", "write_session", "MODELS", "LOCAL_PROVIDERS"]


_CONTROL = (
    ("stop_hook", "[stop-hook]"),
    ("grounding_check", "[grounding-check]"),
    ("fence_check", "[fence-check]"),
    ("stop_guard", "[stop-guard]"),
    ("presentation_check", "[presentation-check]"),
)


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


class _SessionWriter(_TurnPayloads, _StepWriter):
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
            chain = ChainState(tail_id=self.log.tail_id)
            history: list[ChainState] = [chain]
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

    def _turn(self, chain: ChainState, t: int) -> ChainState:
        rng = self.rng
        prof = self.profile
        spec = self.spec
        home = self.home
        gen = self.gen
        forced = spec.forced
        turn_no = chain.turn_no + 1
        turn = TurnState(number=turn_no)
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
        return ChainState(
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

    # -- worker sessions --------------------------------------------------------------------------

    def _run_child(self) -> str:
        rng = self.rng
        spec = self.spec
        self.log.append_message({"role": "user", "content": [{"type": "text", "text": spec.child_task}]})
        self.entries += 1
        turn = TurnState(number=1)
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


def write_session(home: SessionHost, spec: SessionSpec, rng: random.Random) -> SessionResult:
    """Write one session ledger (and its share of the home's side artifacts) through ``home``."""
    return _SessionWriter(home, spec, rng).run()
