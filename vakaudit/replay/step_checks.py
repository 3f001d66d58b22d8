"""The checks of one replayed step (replay.md §16) and the facts they take: the binding in force
and the pre-pass plan of the step's execute receipt. Each check compares what the ledger recorded
with what the replay re-derived; none reads a file. :func:`check_step` runs them in order for the step
:mod:`vakaudit.replay.walker` has just built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vakaudit.ledger.turns import Generation
from vakaudit.replay.checks import CheckName, CheckResult, failed, not_checkable, passed
from vakaudit.replay.planner import CapacityProfile
from vakaudit.replay.prefix import estimate_tokens, tool_parts
from vakaudit.replay.request import Regime

if TYPE_CHECKING:
    from vakaudit.replay import project
    from vakaudit.replay.walker import BuiltRequest, StepWalker

__all__ = ["Binding", "StepPlan", "check_binding", "check_logged", "check_prefix_changed", "check_prefix_tokens",
           "check_step", "check_usage", "drop_tail_block", "prompt_tokens"]


@dataclass(slots=True)
class Binding:
    entry_id: str
    payload: Mapping[str, Any]
    ref_check: CheckResult | None = None  # G4 turn_capabilities_ref resolution
    from_header: bool = False
    stored: Mapping[str, Any] | None = None  # 7.0: the entry as written (interface as an ObjectRef)
    object_error: str | None = None  # 7.0: why the interface object could not be read


@dataclass(slots=True)
class StepPlan:
    """Pre-pass facts about one execute receipt."""

    receipt_pos: int
    cut_pos: int
    output_pos: int | None
    prefix_changed: list[int]


def prompt_tokens(usage: Mapping[str, Any]) -> int:
    total = 0
    for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
        v = usage.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            total += v
    return total


def check_prefix_changed(
    chain: Sequence[Any], sp: StepPlan, recorded: str, last_digest: str
) -> CheckResult:
    name = CheckName.PREFIX_CHANGED_ACTIVITY
    acts = [chain[p] for p in sp.prefix_changed]
    if not recorded:
        if acts:
            return not_checkable(
                name,
                f"receipt records no prefix_digest, so the prefix-changed activity {acts[0].id} cannot be placed",
            )
        return not_checkable(name, "receipt records no prefix_digest")
    changed = bool(last_digest) and recorded != last_digest
    if not changed:
        if not acts:
            why = "first digest on the chain" if not last_digest else "digest unchanged, no activity"
            return passed(name, why)
        data = acts[0].payload.get("data") or {}
        if not last_digest and data.get("current") == recorded and not data.get("previous"):
            return passed(name, "first digest on the chain, recorded as a change from nothing")
        return failed(name, f"prefix-changed activity {acts[0].id} but the digest did not change")
    if not acts:
        return failed(
            name,
            f"digest changed {last_digest[:12]}… → {recorded[:12]}… but no prefix-changed activity precedes the receipt",
        )
    if len(acts) > 1:
        return failed(name, f"{len(acts)} prefix-changed activities for one receipt")
    data = acts[0].payload.get("data") or {}
    prev, cur = data.get("previous"), data.get("current")
    if prev == last_digest and cur == recorded:
        return passed(name, f"activity {acts[0].id} records the change")
    return failed(
        name,
        f"activity {acts[0].id} records previous/current that do not match the receipts",
        expected={"previous": last_digest, "current": recorded},
        actual={"previous": prev, "current": cur},
    )


def check_prefix_tokens(
    rpay: Mapping[str, Any],
    recorded: str,
    seen: set[str],
    chars: int,
    profile: CapacityProfile,
    regime: Regime,
    deps: tuple[str, ...],
    win: Mapping[str, Any] | None,
) -> CheckResult:
    name = CheckName.PREFIX_TOKENS_WINDOW
    pt = rpay.get("prefix_tokens")
    has_pt = isinstance(pt, int) and not isinstance(pt, bool)
    if not recorded:
        return not_checkable(name, "receipt records no prefix_digest, so prefix_tokens cannot be placed")
    if recorded in seen:
        if has_pt:
            return failed(
                name, "prefix_tokens recorded on a receipt whose digest was already seen", actual=pt
            )
        return passed(name, "repeated digest, prefix_tokens omitted as expected")
    if not has_pt:
        return not_checkable(name, "first receipt of this digest records no prefix_tokens")
    usage = win.get("usage") if win is not None else None
    if not isinstance(usage, Mapping):
        return not_checkable(name, "winning attempt records no usage")
    u = usage.get("input_tokens", 0) if regime is Regime.A else prompt_tokens(usage)
    u = u if isinstance(u, int) else 0
    est = estimate_tokens(chars, profile.tpc)
    expected = max(0, u - est)
    details = {"usage_tokens": u, "message_chars": chars, "estimate": est, "tokens_per_char": profile.tpc}
    if pt == expected:
        return passed(name, f"U {u} − estimate({chars} chars) {est} = {pt}", depends_on=deps, details=details)
    if pt == 0 and u <= est:
        return passed(name, "U below the message estimate, clamped to 0", depends_on=deps, details=details)
    target = u - pt
    lo = max(0, int((target - 0.5) / profile.tpc) + 1) if profile.tpc > 0 else 0
    hi = int((target + 0.5) / profile.tpc) if profile.tpc > 0 else 0
    return failed(
        name,
        f"receipt implies message estimate {target} (≈{lo}–{hi} chars); reconstructed {chars} chars → {est}",
        depends_on=deps,
        expected=pt,
        actual=expected,
        details=details,
    )


def check_binding(binding: Binding) -> CheckResult:
    name = CheckName.BINDING_CONSISTENCY
    if binding.from_header:
        return not_checkable(
            name, "no turn_capabilities_bound on the chain before this turn (header fallback)"
        )
    if binding.object_error is not None:
        return failed(name, f"binding {binding.entry_id}: {binding.object_error}")
    p = binding.payload
    core = [n for n in p.get("core_tool_names") or () if isinstance(n, str)]
    deferred = [n for n in p.get("deferred_tool_names") or () if isinstance(n, str)]
    schemas = [t for t in p.get("tool_schemas") or () if isinstance(t, Mapping)]
    names = [tool_parts(t)[0] for t in schemas]
    if not core and not deferred:
        return not_checkable(
            name, f"binding {binding.entry_id} has no core/deferred tool lists (pre-3.5 shape)"
        )
    problems = []
    expected = ["find_tools", *core, *deferred]
    if names != expected:
        problems.append(f"tool_schemas names {names} != find_tools + core + deferred {expected}")
    flagged = [tool_parts(t)[0] for t in schemas if t.get("defer") is True]
    if any("defer" in t for t in schemas) and flagged != deferred:
        problems.append(f"defer flags on {flagged}, deferred_tool_names {deferred}")
    index = p.get("tool_index") if isinstance(p.get("tool_index"), str) else ""
    lines = [ln for ln in index.split("\n") if ln] if index else []
    index_names = [ln[2:].split(" — ", 1)[0] if ln.startswith("- ") else ln for ln in lines]
    if index_names != deferred:
        problems.append(f"tool_index lists {index_names}, deferred_tool_names {deferred}")
    if problems:
        return failed(name, f"binding {binding.entry_id}: " + "; ".join(problems))
    return passed(name, f"binding {binding.entry_id}")


def check_usage(chain: Sequence[Any], sp: StepPlan, win: Mapping[str, Any] | None) -> CheckResult:
    name = CheckName.USAGE_SANITY
    if win is None:
        return not_checkable(name, "receipt has no winning attempt")
    wu = win.get("usage")
    if not isinstance(wu, Mapping):
        return not_checkable(name, "winning attempt records no usage")
    if sp.output_pos is None:
        return not_checkable(name, "no assistant message answers this receipt")
    out = chain[sp.output_pos]
    meta = out.payload.get("meta")
    mu = meta.get("usage") if isinstance(meta, Mapping) else None
    if not isinstance(mu, Mapping):
        return not_checkable(name, f"assistant message {out.id} records no meta.usage")
    if dict(mu) == dict(wu):
        return passed(name, f"assistant message {out.id} usage equals the winning attempt's")
    return failed(
        name,
        f"assistant message {out.id} usage differs from the winning attempt's",
        expected=dict(wu),
        actual=dict(mu),
    )


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
