"""One replayed execute step: :class:`ReplayStep`, what the replay yields (the request, where it came
from, the checks), and :func:`replay_step`, which builds it at the walker's point and runs the
checks of §16 in order. The checks that need only the step's facts are in
:mod:`vakaudit.replay.step_checks`; the two here read the walk's state (what the open turn logged,
the previous request of the turn).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import vakaudit.replay.project as project
from vakaudit.ledger.projection import WorkingSetPlan
from vakaudit.ledger.turns import Generation
from vakaudit.names import shown
from vakaudit.replay.checks import CheckName, CheckResult, failed, not_checkable, passed
from vakaudit.replay.prefix import PrefixBreak, prefix_break
from vakaudit.replay.request import NeutralRequest, Regime
from vakaudit.replay.step_checks import (
    StepPlan,
    check_binding,
    check_prefix_changed,
    check_prefix_tokens,
    check_usage,
)
from vakaudit.replay.walker import BuiltRequest, StepWalker

__all__ = ["ReplayStep", "check_logged", "check_step", "drop_tail_block", "replay_step"]


@dataclass(slots=True)
class ReplayStep:
    """One reconstructed execute step: the request, where it came from, and the checks."""

    ledger_path: str
    session_id: str
    turn: int
    step: int
    receipt_id: str
    receipt_line: int | None
    regime: Regime
    generation: str
    request: NeutralRequest
    computed_digest: str
    recorded_digest: str
    binding_id: str | None
    checks: list[CheckResult]
    prefix_break: PrefixBreak | None = None
    message_chars: int = 0
    plan: WorkingSetPlan | None = None

    @property
    def status(self) -> str:
        """`fail` if any check failed, else `pass` if any passed, else `not_checkable`."""
        if any(c.failed for c in self.checks):
            return "fail"
        if any(c.passed for c in self.checks):
            return "pass"
        return "not_checkable"

    def check(self, name: str) -> CheckResult | None:
        return next((c for c in self.checks if c.name == name), None)

    def to_dict(self, *, with_request: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ledger": shown(self.ledger_path),
            "session_id": self.session_id,
            "turn": self.turn,
            "step": self.step,
            "receipt_id": self.receipt_id,
            "receipt_line": self.receipt_line,
            "regime": str(self.regime),
            "generation": str(self.generation),
            "model": self.request.model,
            "provider": self.request.provider,
            "binding_id": self.binding_id,
            "computed_digest": self.computed_digest,
            "recorded_digest": self.recorded_digest,
            "message_count": len(self.request.messages),
            "message_chars": self.message_chars,
            "breakpoints": self.request.breakpoints,
            "status": self.status,
            "checks": [c.to_dict() for c in self.checks],
            "prefix_break": self.prefix_break.to_dict() if self.prefix_break else None,
        }
        if with_request:
            out["request"] = self.request.to_dict()
        return out


def _recorded_digest(receipt: Mapping[str, Any]) -> str:
    d = receipt.get("prefix_digest")
    return d if isinstance(d, str) else ""


def replay_step(walker: StepWalker, sp: StepPlan, full_chain: Sequence[Any]) -> ReplayStep:
    """Build and check the step of the execute receipt described by `sp` at the walker's point."""
    rp, gen = walker.rp, walker.gen
    receipt = full_chain[sp.receipt_pos]
    rpay = receipt.payload
    built = walker.request_now(rpay)
    request, binding, digest = built.request, built.binding, built.digest
    recorded = _recorded_digest(rpay)
    host_deps: tuple[str, ...] = ()
    if rp.regime is Regime.A and gen != Generation.G1:
        host_deps = ("temporal", "stance")
    if walker.has_candidates() and not walker.profile.recorded:
        host_deps += ("horizon_tokens", "output_reserve")
    checks = check_step(walker, sp, full_chain, built, recorded, host_deps)

    brk = None
    if walker.prev_prefix is not None and walker.prev_prefix[2] != digest:
        p_sys, p_tools, p_digest = walker.prev_prefix
        brk = prefix_break(p_sys, p_tools, request.system, built.schemas, p_digest, digest)
    step = ReplayStep(
        ledger_path=str(rp.log.path),
        session_id=rp.session_id,
        turn=walker.turn_no,
        step=walker.step_in_turn,
        receipt_id=receipt.id,
        receipt_line=rp.log.line_no_of(receipt.id),
        regime=rp.regime,
        generation=str(gen),
        request=request,
        computed_digest=digest,
        recorded_digest=recorded,
        binding_id=binding.entry_id or None,
        checks=checks,
        prefix_break=brk,
        message_chars=built.chars,
        plan=built.projected.plan,
    )
    walker.after_step(built, recorded)
    return step


def check_step(
    walker: StepWalker, sp: StepPlan, full_chain: Sequence[Any], built: BuiltRequest, recorded: str,
    host_deps: tuple[str, ...],
) -> list[CheckResult]:
    """The checks of one execute step (§16), in their order, from the request `built` at its cut."""
    rp, gen, rpay = walker.rp, walker.gen, full_chain[sp.receipt_pos].payload
    request, binding, digest = built.request, built.binding, built.digest
    checks: list[CheckResult] = []
    # 1. digest
    if not recorded:
        checks.append(not_checkable(CheckName.PREFIX_DIGEST, "receipt records no prefix_digest"))
    elif recorded == digest:
        why = "header fallback (no binding on the chain)" if binding.from_header else ""
        checks.append(passed(CheckName.PREFIX_DIGEST, why, expected=recorded, actual=digest))
    elif walker.turn_work:
        checks.append(
            not_checkable(
                CheckName.PREFIX_DIGEST,
                "managed-work turn: the agent sends its runtime tools plus `work`, not the binding's list",
                expected=recorded,
                actual=digest,
            )
        )
    else:
        src = "header (no binding on the chain)" if binding.from_header else f"binding {binding.entry_id}"
        checks.append(
            failed(
                CheckName.PREFIX_DIGEST,
                f"digest of system prompt + tools from {src} differs from the receipt's",
                expected=recorded,
                actual=digest,
            )
        )
    # 2. prefix-changed activities
    checks.append(check_prefix_changed(full_chain, sp, recorded, walker.last_digest))
    # 3. prefix_tokens window
    checks.append(
        check_prefix_tokens(
            rpay, recorded, walker.seen_digests, built.chars, walker.profile, rp.regime, host_deps, built.win
        )
    )
    # 4. binding walker-consistency (+ G4 ref)
    checks.append(check_binding(binding))
    if binding.ref_check is not None:
        checks.append(binding.ref_check)
    elif gen == Generation.G4 or binding.stored is not None:  # G4, or a 7.0 binding (baseline7.md §8.2)
        checks.append(passed(CheckName.BINDING_REF, "binding written whole for this turn"))
    else:
        checks.append(
            not_checkable(CheckName.BINDING_REF, "turn_capabilities_ref entries exist only in G4 ledgers")
        )
    # 5. model-visible means logged
    checks.append(
        check_logged(
            walker,
            built.projected,
            request.messages,
            built.n_open,
            walker.turn_dir_pos,
            walker.open_members,
            built.placed,
            built.tail,
            rp.unsealed,
            built.tail_sources,
        )
    )
    # 6. usage sanity
    checks.append(check_usage(full_chain, sp, built.win))
    # 7. append-only within a turn (Regime B)
    prev = walker.prev_request
    if rp.regime is Regime.B and prev is not None and walker.step_in_turn > 1:
        same = prev.system == request.system and prev.tools == request.tools
        starts = request.messages[: len(prev.messages)] == prev.messages
        if same and starts:
            checks.append(passed(CheckName.APPEND_ONLY))
        else:
            checks.append(
                failed(CheckName.APPEND_ONLY, "step does not extend the previous request of its turn")
            )
    else:
        why = (
            "Regime A rebuilds the plan each step" if rp.regime is Regime.A else "first step of the turn"
        )
        checks.append(not_checkable(CheckName.APPEND_ONLY, why))
    return checks


def check_logged(
    walker: StepWalker,
    projected: project.Projection,
    messages: Sequence[Mapping[str, Any]],
    n_open: int,
    turn_dir_pos: int,
    open_members: Sequence[int],
    placed: int | None,
    tail: str,
    unsealed: Mapping[str, str],
    tail_sources: Sequence[str],
) -> CheckResult:
    name = CheckName.MODEL_VISIBLE_LOGGED
    chain = walker.chain
    problems = []
    if n_open:
        positions = [turn_dir_pos, *open_members]
        base = len(messages) - n_open
        if base < 0:
            problems.append("request holds fewer messages than the open turn logged")
        else:
            for k, p in enumerate(positions):
                got = messages[base + k]
                if placed == base + k:
                    got = drop_tail_block(got, tail)
                if got != chain[p].payload.get("message"):
                    problems.append(
                        f"request message {base + k} is not the logged entry {chain[p].id} verbatim"
                    )
    bad = []
    if unsealed:  # only then is it worth listing every source entry
        sources = projected.sources(walker.index, walker.card_entries, chain)
        bad = [f"{sid} ({unsealed[sid]})" for sid in [*sources, *tail_sources] if sid in unsealed]
    if bad:
        problems.append("derived from entries the hash chain does not vouch for: " + ", ".join(bad[:5]))
    if projected.unmatched:
        problems.append(f"{projected.unmatched} request messages could not be traced to a ledger entry")
    if problems:
        return failed(name, "; ".join(problems))
    return passed(name, f"{len(messages)} messages traced to ledger entries, hash chain intact")


def drop_tail_block(message: Mapping[str, Any], tail: str) -> dict:
    content = list(message.get("content") or [])
    for i, b in enumerate(content):
        if b.get("type") == "text" and (tail is None or b.get("text") == tail):
            del content[i]
            break
    out = dict(message)
    out["content"] = content
    return out
