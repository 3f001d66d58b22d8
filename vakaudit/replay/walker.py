"""The forward walk over one active chain that builds the request of each execute step (§15).

:class:`ReplayContext` holds what one ledger's replay reads once (header, generation, regime, the
active chain, the entries the hash chain does not vouch for); :class:`StepWalker` is fed the chain
entry by entry, keeps the turn index and the plan inputs from step to step, and builds the request
of a step at its cut (:meth:`StepWalker.request_now`); :func:`vakaudit.replay.step.replay_step`
checks it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import vakaudit.replay.project as project
from vakaudit.ledger import SessionLog
from vakaudit.ledger.projection import Fidelity, WorkingSetPlan
from vakaudit.ledger.turns import Generation, TurnIndexBuilder, generation_for
from vakaudit.ledger.vocab import is_directive
from vakaudit.names import shown
from vakaudit.replay.bindings import binding_from_header, bound_binding, resolve_ref
from vakaudit.replay.planner import (
    CapacityProfile,
    PlanCandidate,
    RelevanceIndex,
    greedy_admission,
    plan_from_admission,
    profile_from_activity,
    rank_candidates,
    update_profile,
)
from vakaudit.replay.prefix import (
    estimate_tokens,
    prefix_chars,
    prefix_digest,
    request_message_chars,
)
from vakaudit.replay.request import (
    HostParams,
    NeutralRequest,
    Regime,
    cache_breakpoints,
    neutral_tools,
    place_tail,
    regime_for,
)
from vakaudit.replay.step_checks import Binding, prompt_tokens

__all__ = ["BuiltRequest", "ReplayContext", "StepWalker"]


def _open_turn_member(entry: Any) -> bool:
    """A message that joins the open turn's verbatim block (control, tool results, assistant)."""
    msg = entry.payload.get("message")
    if not isinstance(msg, dict):
        return False
    if msg.get("role") == "assistant":
        return True
    meta = entry.payload.get("meta")
    if isinstance(meta, dict) and meta.get("control") is not None:
        return True
    return any(isinstance(b, dict) and b.get("type") == "tool_result" for b in msg.get("content") or ())


def _winning_attempt(receipt: Mapping[str, Any]) -> Mapping[str, Any] | None:
    attempts = [a for a in receipt.get("attempts") or () if isinstance(a, Mapping)]
    win = receipt.get("winning_attempt")
    if isinstance(win, int):
        for a in attempts:
            if a.get("ordinal") == win:
                return a
    ok = [a for a in attempts if a.get("settlement") == "ok"]
    return ok[-1] if ok else None


class ReplayContext:
    """State of one ledger's replay walk."""

    def __init__(
        self, log: SessionLog, host: HostParams, generation: str | None, chain: list[Any] | None = None,
        interfaces: Mapping[str, Mapping[str, Any] | str] | None = None,
    ) -> None:
        self.log = log
        self.host = host
        self.interfaces = interfaces or {}
        header = log.header
        self.header = header.payload if header is not None else {}
        contract = self.header.get("contract") if isinstance(self.header.get("contract"), Mapping) else {}
        self.contract: Mapping[str, Any] = contract
        app_version = contract.get("app_version") if isinstance(contract.get("app_version"), str) else ""
        self.app_version = app_version
        self.generation = generation or log.generation or generation_for(app_version)
        self.regime = host.regime or regime_for(app_version)
        sid = self.header.get("session_id")
        self.session_id = sid if isinstance(sid, str) else shown(log.path.stem)
        self.chain = chain if chain is not None else log.chain_to_root()
        self.unsealed = self._unsealed_entries()

    def _unsealed_entries(self) -> dict[str, str]:
        """Entries whose bytes the next line's `prev_hash` contradicts (edited or replaced): the entry
        before each line the ledger's chain found broken."""
        log = self.log
        out: dict[str, str] = {}
        if log.broken_links:
            at = {ln: i for i, ln in enumerate(log.line_nos)}
            for ln in log.broken_links:
                i = at.get(ln)
                if i:
                    out[log.entries[i - 1].id] = f"line {ln} prev_hash does not match"
        return out


class StepWalker:
    """Walks one active chain forward and builds the request of a step at the current point.

    `add(entry)` feeds the next chain entry; `request_now(receipt)` builds the request of an
    execute step dispatched at this point (before `entry` of the step's output is added);
    :func:`vakaudit.replay.step.replay_step` also runs the checks. State is kept from step to step
    (turn index, plan inputs, profile, digests), so a whole chain costs time linear in its entries.
    """

    def __init__(self, rp: ReplayContext) -> None:
        self.rp = rp
        self.host = rp.host
        self.chain: list[Any] = []
        self.gen = rp.generation
        self.builder = TurnIndexBuilder(generation=self.gen)
        self.index = self.builder.index
        self.base_profile = CapacityProfile(
            horizon_tokens=self.host.horizon_tokens, output_reserve=self.host.output_reserve
        )
        self.profile = self.base_profile
        self.bindings: dict[str, Binding] = {}
        self.latest_binding: Binding | None = None
        self.turn_binding: Binding | None = None
        self.turn_no = 0
        self.turn_dir_pos = -1
        self.open_members: list[int] = []  # chain positions of the open turn's verbatim messages
        self.turn_work = False
        self.step_in_turn = 0
        self.frozen_tail: tuple[str, list[str]] | None = None
        self.frozen_plan: WorkingSetPlan | None = None
        self.seen_digests: set[str] = set()
        self.last_digest = ""  # newest non-empty recorded digest among earlier receipts
        self.prev_prefix: tuple[str, list[dict], str] | None = None
        self.prev_request: NeutralRequest | None = None
        self.card_entries: dict[str, str] = {}  # turn id -> turn_card entry id
        self._prefix_cache: dict[int, tuple[Any, str, list[dict], list[dict], str, int]] = {}
        self._rel = RelevanceIndex()
        self._rel_docs: dict[tuple[str, int], int] = {}  # (turn id, version) -> doc
        self._ranking: tuple[tuple, list[PlanCandidate], list[int]] | None = None
        self._cands: tuple[tuple, list[tuple]] | None = None
        self._last_plan: tuple[list[PlanCandidate], Any, WorkingSetPlan] | None = None
        self._all_full: tuple[list[PlanCandidate], int, Any] | None = None
        self._sig: tuple = ()
        self._closed: tuple[tuple, list, list[dict], int] | None = None  # cached closed-turn part

    # -- feeding -----------------------------------------------------------------------------------

    def add(self, e: Any) -> None:
        pos = len(self.chain)
        self.chain.append(e)
        kind = e.kind
        if kind == "turn_capabilities_bound":
            self.latest_binding = bound_binding(e, self.rp.interfaces)
            self.bindings[e.id] = self.latest_binding
        elif kind == "turn_capabilities_ref":
            self.latest_binding = resolve_ref(e, self.bindings, self.latest_binding)
        elif kind == "message":
            if is_directive(e):
                self.turn_no += 1
                self.turn_dir_pos = pos
                self.open_members = []
                self.turn_binding = self.latest_binding
                self.turn_work = False
                self.step_in_turn = 0
                self.frozen_tail = None
                self.frozen_plan = None
            elif self.turn_no > 0 and _open_turn_member(e):
                self.open_members.append(pos)
        elif kind == "work":
            self.turn_work = True
        elif kind == "turn_card":
            tid = e.payload.get("turn_id")
            if isinstance(tid, str):
                self.card_entries[tid] = e.id
        elif kind == "activity":
            ak = e.payload.get("activity_kind")
            if ak in ("capacity_probe", "capacity_feedback"):
                data = e.payload.get("data")
                if isinstance(data, Mapping):
                    snap = profile_from_activity(data, self.base_profile)
                    if snap is not None:
                        if ak == "capacity_probe" and not self.profile.recorded:
                            snap = replace(snap, tpc_samples=0)  # bind-time snapshot, unsampled (§10.3)
                        self.profile = snap
        self.builder.add(e)

    # -- building ----------------------------------------------------------------------------------

    def _signature(self) -> tuple:
        """Changes whenever a closed turn, a reset or a packet changes (cheap: one pass of ints)."""
        index = self.index
        turns = index.turns
        versions = sum(t.version for t in turns)
        open_turn = index.open_turn
        if open_turn is not None:
            versions -= open_turn.version
        return (len(turns), versions, open_turn is None, index.reset_position, index.boundary_position,
                len(index.packets))  # fmt: skip

    def has_candidates(self) -> bool:
        """Whether the plan has closed turns to choose from at the current step."""
        return bool(self._candidates(self._sig))

    def _candidates(self, sig: tuple) -> list[tuple]:
        if self._cands is None or self._cands[0] != sig:
            self._cands = (sig, project.plan_candidates(self.index))
        return self._cands[1]

    def _ranked(self) -> tuple[list[PlanCandidate], list[int]]:
        """Candidates and their value ranking; recomputed only when the candidate set changes."""
        sig = self._sig
        raw = self._candidates(sig)
        open_turn = self.index.open_turn
        directive = open_turn.directive_text if open_turn is not None else ""
        query = project.plan_query(self.index, directive)
        key = (sig, query)
        if self._ranking is not None and self._ranking[0] == key:
            return self._ranking[1], self._ranking[2]
        stale = {tid for (tid, _v) in self._rel_docs} & {
            c[0] for c in raw if (c[0], c[4]) not in self._rel_docs
        }
        if stale:  # a card changed after its turn was indexed: rebuild (rare)
            self._rel, self._rel_docs = RelevanceIndex(), {}
        for c in raw:
            if (c[0], c[4]) not in self._rel_docs:
                self._rel_docs[(c[0], c[4])] = self._rel.add(c[3])
        docs = [self._rel_docs[(c[0], c[4])] for c in raw]
        all_scores = self._rel.scores(query)
        relevance = [all_scores[d] for d in docs]
        cands = [c[5] for c in raw]
        order = rank_candidates(cands, relevance, directive)
        self._ranking = (key, cands, order)
        total = sum(c.tokens_full for c in cands)
        self._all_full = (cands, total, (tuple((i, Fidelity.FULL) for i in range(len(cands))), None))
        return cands, order

    def _make_plan(self, prefix_tok: int, tail_tokens: int, n_open: int) -> WorkingSetPlan:
        cands, order = self._ranked()
        if not cands:
            return WorkingSetPlan(budget=0)
        profile = self.profile
        chars = 0
        if n_open:
            positions = [self.turn_dir_pos, *self.open_members]
            chars = request_message_chars(self.chain[p].payload["message"] for p in positions)
        open_tokens = estimate_tokens(chars, profile.tpc)
        reserve = open_tokens
        if profile.turn_reserve_samples > 0:
            reserve = max(estimate_tokens(int(profile.turn_reserve), 1.0), open_tokens)
        budget = max(0, profile.horizon_tokens - prefix_tok - tail_tokens - profile.output_reserve - reserve)
        all_full = self._all_full
        if all_full is not None and all_full[0] is cands and all_full[1] <= budget:
            admission, spent = all_full[2], all_full[1]  # everything fits at Full: order is moot
        else:
            admission, spent = greedy_admission(cands, order, budget)
        last = self._last_plan
        if last is not None and last[0] is cands and last[1] == admission:
            # same shape: reuse it (its budget/spent stay those of the step that first produced it)
            return last[2]
        plan = plan_from_admission(cands, admission, budget, spent)
        self._last_plan = (cands, admission, plan)
        return plan

    def _prefix(self, binding: Binding) -> tuple[str, list[dict], list[dict], str, int]:
        """(system, stored tools, neutral tools, digest, prefix chars) of a binding, cached."""
        cached = self._prefix_cache.get(id(binding.payload))
        if cached is not None and cached[0] is binding.payload:
            return cached[1:]
        bpay = binding.payload
        system = bpay.get("system_prompt") if isinstance(bpay.get("system_prompt"), str) else ""
        schemas = [t for t in bpay.get("tool_schemas") or () if isinstance(t, Mapping)]
        deferred = [n for n in bpay.get("deferred_tool_names") or () if isinstance(n, str)]
        value = (system, schemas, neutral_tools(schemas, deferred), prefix_digest(system, schemas),
                 prefix_chars(system, schemas))  # fmt: skip
        self._prefix_cache[id(bpay)] = (bpay, *value)
        return value

    def _project(self, plan: WorkingSetPlan) -> project.Projection:
        """The projection at this point; the closed-turn part is reused while it cannot change.

        In G2/G3 the open turn is the projection's last block and everything before it depends only
        on the closed turns, resets, packets and the plan; steps of one turn usually share all of
        them, so only the open turn's messages are rebuilt (G1 and G4 always re-project).
        """
        index, gen = self.index, self.gen
        open_turn = index.open_turn
        if gen not in (Generation.G2, Generation.G3) or open_turn is None:
            self._closed = None
            return project.project(index, plan, gen)
        key = (self._sig, plan.per_turn, plan.packet_range)
        if self._closed is None or self._closed[0] != key:
            full = project.project(index, plan, gen)
            n_open = 1 + len(open_turn.raw_tail)
            cut = len(full.messages) - n_open
            open_chars = request_message_chars(full.messages[cut:])
            self._closed = (key, full.tagged[:cut], full.messages[:cut], full.chars - open_chars)
            return full
        _, tagged, closed_msgs, closed_chars = self._closed
        open_tagged = project.open_turn_tagged(open_turn)
        open_msgs = [p.message for p in open_tagged]
        return project.Projection(
            messages=closed_msgs + open_msgs,
            tagged=tagged + open_tagged,
            chars=closed_chars + request_message_chars(open_msgs),
            plan=plan,
        )

    def request_now(self, rpay: Mapping[str, Any], *, tail_override: str | None = None) -> BuiltRequest:
        """Build the request of an execute step dispatched at the current point of the chain."""
        host, rp, gen, index, profile = self.host, self.rp, self.gen, self.index, self.profile
        self.step_in_turn += 1
        self._sig = self._signature()
        binding = self.turn_binding or self.latest_binding
        if binding is None:
            binding = binding_from_header(rp.contract)
        system, schemas, tools, digest, p_chars = self._prefix(binding)
        tools = [dict(t) for t in tools]
        prefix_tok = estimate_tokens(p_chars, profile.tpc)
        n_open = len(self.open_members) + 1 if index.open_turn is not None and self.turn_dir_pos >= 0 else 0

        # tail, composed twice at turn start and frozen for the turn (§7.4)
        if self.frozen_tail is None or self.step_in_turn == 1:
            part0 = project.tail_part(index, gen, None)
            part1 = part0
            if index.goal is not None:  # only the conversation thread depends on the plan
                tail0 = part0.sections.render(turn_context=host.temporal, stance=host.stance)
                plan0 = self._make_plan(prefix_tok, estimate_tokens(len(tail0), profile.tpc), n_open)
                part1 = project.tail_part(index, gen, plan0)
            rendered = part1.sections.render(turn_context=host.temporal, stance=host.stance)
            self.frozen_tail = (rendered, part1.sources)
            self.frozen_plan = None
        tail, tail_sources = self.frozen_tail
        if tail_override is not None:
            tail = tail_override
        tail_tokens = estimate_tokens(len(tail), profile.tpc)
        if rp.regime is Regime.B and self.frozen_plan is not None:
            plan = self.frozen_plan
        else:
            plan = self._make_plan(prefix_tok, tail_tokens, n_open)
            self.frozen_plan = plan
        projected = self._project(plan)
        messages = list(projected.messages)
        if gen == Generation.G1:
            tail_index = None  # G1 splices the intent into the projection; no tail
            tail = ""
        elif rp.regime is Regime.A:
            tail_index = len(messages) - 1 if messages else None
        else:
            tail_index = len(messages) - n_open if n_open else None
        placed = place_tail(messages, tail, tail_index)
        provider = rpay.get("provider") if isinstance(rpay.get("provider"), str) else ""
        model = rpay.get("model") if isinstance(rpay.get("model"), str) else ""
        win = _winning_attempt(rpay)
        if win is not None:
            provider = win.get("provider") if isinstance(win.get("provider"), str) else provider
            model = win.get("model") if isinstance(win.get("model"), str) else model
        max_tokens = host.max_tokens if host.max_tokens is not None else profile.output_reserve
        request = NeutralRequest(
            model=model,
            provider=provider,
            system=system,
            messages=messages,
            tools=tools,
            max_tokens=max_tokens,
            session_key=rp.session_id,
            breakpoints=cache_breakpoints(messages),
            tail=tail if placed is not None else "",
            tail_index=placed,
        )
        return BuiltRequest(
            request=request,
            binding=binding,
            schemas=schemas,
            digest=digest,
            projected=projected,
            n_open=n_open,
            placed=placed,
            tail=tail,
            tail_sources=tail_sources,
            win=win,
            chars=projected.chars + (len(tail.encode("utf-8")) if placed is not None else 0),
            p_chars=p_chars,
        )

    def after_step(self, built: BuiltRequest, recorded: str) -> None:
        """Apply the step's usage to the profile (§10.3) and record its digest."""
        win = built.win
        if win is not None and isinstance(win.get("usage"), Mapping) and self.profile.recorded:
            req_chars = len(built.request.system.encode("utf-8")) + built.chars
            if self.rp.regime is Regime.B:
                req_chars = built.p_chars + built.chars
            self.profile = update_profile(self.profile, prompt_tokens(win["usage"]), req_chars)
        if recorded:
            self.seen_digests.add(recorded)
            self.last_digest = recorded
        self.prev_prefix = (built.request.system, built.schemas, built.digest)
        self.prev_request = built.request


@dataclass(slots=True)
class BuiltRequest:
    request: NeutralRequest
    binding: Binding
    schemas: list[dict]
    digest: str
    projected: project.Projection
    n_open: int
    placed: int | None
    tail: str
    tail_sources: list[str]
    win: Mapping[str, Any] | None
    chars: int
    p_chars: int
