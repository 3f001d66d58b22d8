"""The checks of one replayed step (replay.md §16) and the facts they take: the binding in force
and the pre-pass plan of the step's execute receipt. Each check compares what the ledger recorded
with what the replay re-derived; none reads a file. :func:`vakaudit.replay.step.replay_step` runs
them in order for the step the walker has just built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vakaudit.replay.checks import CheckName, CheckResult, failed, not_checkable, passed
from vakaudit.replay.planner import CapacityProfile
from vakaudit.replay.prefix import estimate_tokens, tool_parts
from vakaudit.replay.request import Regime

__all__ = ["Binding", "StepPlan", "check_binding", "check_prefix_changed", "check_prefix_tokens", "check_usage",
           "prompt_tokens"]


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
