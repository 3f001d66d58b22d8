"""The binding in force at a step (replay.md §3): a ``turn_capabilities_bound`` entry, a G4
``turn_capabilities_ref`` resolved to an earlier one, or the header's contract when the chain holds
none. Reads entries only; the walker (:mod:`vakaudit.replay.walker`) keeps which one is current.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vakaudit.ledger.digest import payload_digest
from vakaudit.replay.checks import CheckName, failed, passed
from vakaudit.replay.step_checks import Binding

__all__ = ["binding_from_header", "binding_ref_digest", "bound_binding", "resolve_ref"]


def binding_from_header(contract: Mapping[str, Any]) -> Binding:
    """§3 rule 4: the header's system prompt and tools from `contract.capabilities` (low confidence)."""
    tools = []
    for cap in contract.get("capabilities") or ():
        if not isinstance(cap, Mapping) or cap.get("kind") != "tool":
            continue
        conf = cap.get("configuration")
        schema = conf.get("input_schema", conf.get("parameters", conf)) if isinstance(conf, Mapping) else conf
        tools.append(
            {"name": cap.get("name", ""), "description": cap.get("description", ""), "input_schema": schema}
        )
    payload = {"system_prompt": contract.get("system_prompt", ""), "tool_schemas": tools}
    return Binding(entry_id="", payload=payload, from_header=True)


def binding_ref_digest(payload: Mapping[str, Any]) -> str:
    """G4 ref digest: payload digest of the bound record without its `epoch` key (ledger §4.11).
    In 7.0 the record is the entry as written, its interface an ObjectRef (baseline7.md §8.2)."""
    return payload_digest({k: v for k, v in payload.items() if k != "epoch"})


def bound_binding(e: Any, interfaces: Mapping[str, Mapping[str, Any] | str]) -> Binding:
    """The binding of a ``turn_capabilities_bound`` entry. A 7.0 entry keeps its interface
    (``system_prompt``, ``tool_schemas``, ``tool_index``) as an object (baseline7.md §8.2, §8.6):
    ``interfaces`` holds, by entry id, that object's fields or why it could not be read; the
    binding is then the entry with those fields in place of the reference, so the request is built
    from it exactly as from a JSONL binding."""
    payload = e.payload
    if "interface" not in payload or e.id not in interfaces:
        return Binding(e.id, payload)
    got = interfaces[e.id]
    rest = {k: v for k, v in payload.items() if k != "interface"}
    if isinstance(got, str):
        return Binding(e.id, rest, stored=payload, object_error=got)
    return Binding(e.id, {**rest, **got}, stored=payload)


def resolve_ref(entry: Any, bindings: Mapping[str, Binding], latest: Binding | None) -> Binding:
    ref = entry.payload.get("entry")
    digest = entry.payload.get("digest")
    target = bindings.get(ref) if isinstance(ref, str) else None
    if target is None:
        check = failed(
            CheckName.BINDING_REF,
            f"turn_capabilities_ref {entry.id} names {ref!r}, which is not an earlier full binding on the chain",
        )
        base = latest or Binding("", {})
        return Binding(base.entry_id, base.payload, ref_check=check, from_header=base.from_header,
                        stored=base.stored, object_error=base.object_error)
    actual = binding_ref_digest(target.stored if target.stored is not None else target.payload)
    if digest == actual:
        check = passed(CheckName.BINDING_REF, f"ref {entry.id} resolves to {ref} with the recorded digest")
    else:
        check = failed(
            CheckName.BINDING_REF,
            f"ref {entry.id} resolves to {ref} but its digest differs",
            expected=digest,
            actual=actual,
        )
    return Binding(target.entry_id, target.payload, ref_check=check, stored=target.stored,
                    object_error=target.object_error)
