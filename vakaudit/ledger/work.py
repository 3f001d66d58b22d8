"""Managed work (``work`` entries, spec ledger.md §4.8, §6.4): vak's strict work projector, the
normalised event payloads its writer produces, and restart reconciliation.

vak validates every work event before writing it: ``append_work`` re-projects the work state of the
active chain plus the candidate and refuses the append (``Corrupt``, nothing written) when any event
is invalid. The rules below restate vak-session's ``work.rs`` (the revision that gates item events on
an ``active`` contract and resets a settled contract to ``draft`` on revision):

- contract transitions: draft→awaiting_input, draft→active, awaiting_input→active, active→blocked,
  active→verifying, active→cancelled, active→failed, blocked→active, verifying→active,
  verifying→completed, verifying→unverified; ``from`` must equal the current status.
- item transitions: proposed→ready, ready→running, running→blocked, running→ready_for_verification,
  running→failed, running→interrupted, blocked→ready, failed→ready, interrupted→ready,
  ready_for_verification→failed, ready→cancelled, running→cancelled; ``from`` must equal the item's
  current status; ``succeeded`` is never reachable by ``item_status_changed`` (only ``item_verified``,
  with evidence and every required criterion passed); ``running`` needs every dependency succeeded or
  skipped; ``ready_for_verification`` needs evidence. The reason of a move to ``blocked`` or
  ``interrupted`` becomes the item's blocker (empty reason: none); any other move clears it.
- item, evidence and verification events need an ``active`` contract; a new contract is refused
  while the current one is not settled; ``contract_revised`` must carry revision + 1.

:class:`WorkState` in :mod:`vakaudit.ledger.turns` is the lenient fold the projections use on
evidence; this module is the strict one a writer uses. The reading side of this package parses work
lines (vak's own reader skips them, §2.4), so reconciliation here also works after a reopen.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vakaudit.errors import CorruptError, LedgerError
from vakaudit.ledger.keys import session_path

if TYPE_CHECKING:
    from vakaudit.ledger.entry import Entry


class WorkLog(Protocol):
    """What the work functions need of a ledger (a :class:`vakaudit.ledger.SessionLog` is one): its
    active chain, its header and an append; this module does not depend on the log's class."""

    @property
    def header(self) -> Entry | None: ...

    def chain_to_root(self) -> list[Entry]: ...

    def append(self, kind: str, payload: Any, **kw: Any) -> Entry: ...


__all__ = [
    "WorkError",
    "WorkItemState",
    "WorkProjection",
    "CONTRACT_TRANSITIONS",
    "ITEM_TRANSITIONS",
    "SETTLED_CONTRACT_STATUSES",
    "RECOVERY_REASONS",
    "apply_work_event",
    "project_work",
    "work_payload",
    "append_work",
    "child_run_status",
    "reconcile_running_work",
]

SETTLED_CONTRACT_STATUSES = frozenset({"completed", "failed", "cancelled", "unverified"})

CONTRACT_TRANSITIONS = frozenset(
    {
        ("draft", "awaiting_input"),
        ("draft", "active"),
        ("awaiting_input", "active"),
        ("active", "blocked"),
        ("active", "verifying"),
        ("active", "cancelled"),
        ("active", "failed"),
        ("blocked", "active"),
        ("verifying", "active"),
        ("verifying", "completed"),
        ("verifying", "unverified"),
    }
)

ITEM_TRANSITIONS = frozenset(
    {
        ("proposed", "ready"),
        ("ready", "running"),
        ("running", "blocked"),
        ("running", "ready_for_verification"),
        ("running", "failed"),
        ("running", "interrupted"),
        ("blocked", "ready"),
        ("failed", "ready"),
        ("interrupted", "ready"),
        ("ready_for_verification", "failed"),
        ("ready", "cancelled"),
        ("running", "cancelled"),
    }
)

_DONE_DEPENDENCY = frozenset({"succeeded", "skipped"})
_ITEM_EVENTS = frozenset(
    {"item_status_changed", "item_verified", "item_assigned", "evidence_attached", "verification_recorded"}
)

#: Reasons vak writes when it reconciles a running item after a restart, keyed by the child run's
#: status (None: no child, no child ledger, or no ``child_run`` marker yet).
RECOVERY_REASONS: dict[str | None, str] = {
    "failed": "child failed before restart; review before retry",
    "aborted": "child was aborted before restart; review before retry",
    "max_turns": "child hit its turn limit; review before retry",
    None: "recovered after process restart; review before retry",
}
_COMPLETED_CHILD_REASON = "recovered completed child; verify its durable evidence"
_READY_REASON = "dependencies satisfied"


class WorkError(CorruptError):
    """A work event vak would refuse; ``code`` names the rule (vak's ``WorkError`` variant, snake_case).

    Raised by :meth:`SessionLog.append_work` before anything is written, with vak's message prefix
    ``invalid work event: ``.
    """

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"invalid work event: {detail}", line=0)
        self.code = code
        self.detail = detail


def _debug(value: Any) -> str:
    """Rust ``{:?}`` of a unit enum variant written in snake_case (``ready_for_verification`` ->
    ``ReadyForVerification``)."""
    if isinstance(value, str):
        return "".join(part[:1].upper() + part[1:] for part in value.split("_"))
    return repr(value)


@dataclass(slots=True)
class WorkItemState:
    """One item's projected state (vak's ``WorkItemState``)."""

    item_id: str
    owner: Any
    status: str = "proposed"
    attempt: int = 0
    child_session_id: str | None = None
    blocker: str | None = None
    evidence: list[Any] = field(default_factory=list)


@dataclass(slots=True)
class WorkProjection:
    """The work state of one chain: the contract (as last created or revised), its status, each item
    (sorted by item id, like vak's ``BTreeMap``) and the recorded criterion results."""

    contract: dict
    status: str = "draft"
    items: dict[str, WorkItemState] = field(default_factory=dict)
    criteria: dict[str, Any] = field(default_factory=dict)

    @property
    def settled(self) -> bool:
        return self.status in SETTLED_CONTRACT_STATUSES

    def definition(self, item_id: str) -> dict | None:
        for item in self.contract.get("items") or ():
            if isinstance(item, dict) and item.get("item_id") == item_id:
                return item
        return None

    def _reset_items(self) -> None:
        states = {}
        for item in self.contract.get("items") or ():
            item_id = item["item_id"]
            states[item_id] = WorkItemState(item_id, item.get("owner"))
        self.items = dict(sorted(states.items()))


# -- validation ------------------------------------------------------------------------------------


def _ids(rows: Any, key: str) -> list[Any]:
    return [r.get(key) if isinstance(r, dict) else None for r in rows or ()]


def _validate_contract(contract: Any) -> None:
    if not isinstance(contract, dict):
        raise WorkError("invalid_event", "work event is not valid for the current contract state")
    objective = contract.get("objective")
    items = contract.get("items")
    if not isinstance(objective, str) or not objective.strip() or not isinstance(items, list) or not items:
        raise WorkError("empty_contract", "work contract is empty")
    if not all(isinstance(i, dict) and isinstance(i.get("item_id"), str) for i in items):
        raise WorkError("invalid_event", "work event is not valid for the current contract state")
    item_ids = [i["item_id"] for i in items]
    seen: set[str] = set()
    for item_id in item_ids:
        if item_id in seen:
            raise WorkError("duplicate_item", f"work contract has duplicate item '{item_id}'")
        seen.add(item_id)
    criterion_ids = _ids(contract.get("criteria"), "criterion_id")
    assumption_ids = _ids(contract.get("assumptions"), "assumption_id")
    if len(set(criterion_ids)) != len(criterion_ids) or len(set(assumption_ids)) != len(assumption_ids):
        raise WorkError("invalid_event", "work event is not valid for the current contract state")
    for item in items:
        for dep in item.get("dependencies") or ():
            if dep not in seen:
                raise WorkError(
                    "unknown_dependency", f"work item '{item['item_id']}' has unknown dependency '{dep}'"
                )
        for criterion in item.get("criterion_ids") or ():
            if criterion not in criterion_ids:
                raise WorkError(
                    "unknown_criterion",
                    f"work item '{item['item_id']}' references unknown criterion '{criterion}'",
                )
    _ensure_acyclic(items)


def _ensure_acyclic(items: list[dict]) -> None:
    indegree = {i["item_id"]: len(i.get("dependencies") or ()) for i in items}
    dependents: dict[str, list[str]] = {}
    for item in items:
        for dep in item.get("dependencies") or ():
            dependents.setdefault(dep, []).append(item["item_id"])
    ready = [item_id for item_id, degree in sorted(indegree.items()) if degree == 0]
    visited = 0
    while ready:
        item_id = ready.pop(0)
        visited += 1
        for child in dependents.get(item_id, ()):
            indegree[child] -= 1
            if indegree[child] == 0:
                ready.append(child)
    if visited != len(items):
        raise WorkError("dependency_cycle", "work contract contains a dependency cycle")


def _invalid() -> WorkError:
    return WorkError("invalid_event", "work event is not valid for the current contract state")


def _state(projection: WorkProjection, item_id: Any) -> WorkItemState:
    state = projection.items.get(item_id) if isinstance(item_id, str) else None
    if state is None:
        raise WorkError("unknown_item", f"unknown work item '{item_id}'")
    return state


def apply_work_event(projection: WorkProjection | None, payload: dict) -> WorkProjection:
    """Apply one ``work`` payload (``contract_id``, ``revision``, ``kind`` = event) like vak's projector.

    Returns the projection (a new one for ``contract_created``, else ``projection`` mutated). Raises
    :class:`WorkError` for an event vak would refuse; ``projection`` may then be partly changed.
    """
    event = payload.get("kind")
    if not isinstance(event, dict):
        raise _invalid()
    kind = event.get("kind")
    contract_id = payload.get("contract_id")
    revision = payload.get("revision")

    if kind == "contract_created":
        if projection is not None and not projection.settled:
            raise _invalid()
        contract = event.get("contract")
        _validate_contract(contract)
        if contract_id != contract.get("contract_id") or revision != contract.get("revision"):
            raise WorkError(
                "wrong_revision",
                f"work revision {revision} is not the expected revision {contract.get('revision')}",
            )
        new = WorkProjection(contract=copy.deepcopy(contract))
        new._reset_items()
        return new

    if projection is None:
        raise WorkError("missing_contract", "work event requires an active contract")
    current = projection.contract.get("contract_id")
    if contract_id != current:
        raise WorkError(
            "wrong_contract",
            f"work event belongs to contract '{contract_id}', active contract is '{current}'",
        )
    current_revision = projection.contract.get("revision", 0)
    expected = current_revision + 1 if kind == "contract_revised" else current_revision
    if revision != expected:
        raise WorkError("wrong_revision", f"work revision {revision} is not the expected revision {expected}")
    if kind in _ITEM_EVENTS and projection.status != "active":
        raise _invalid()
    if kind == "assumption_resolved" and projection.settled:
        raise _invalid()

    if kind == "contract_revised":
        contract = event.get("contract")
        new_revision = contract.get("revision") if isinstance(contract, dict) else None
        if event.get("previous_revision") != current_revision or new_revision != current_revision + 1:
            raise WorkError(
                "wrong_revision",
                f"work revision {new_revision} is not the expected revision {current_revision + 1}",
            )
        _validate_contract(contract)
        projection.contract = copy.deepcopy(contract)
        if projection.settled:
            projection.status = "draft"
        projection.criteria.clear()
        projection._reset_items()
    elif kind == "contract_status_changed":
        src, dst = event.get("from"), event.get("to")
        if projection.status != src or (src, dst) not in CONTRACT_TRANSITIONS:
            raise WorkError(
                "invalid_contract_transition",
                f"invalid work status transition {_debug(projection.status)} -> {_debug(dst)}",
            )
        projection.status = dst
    elif kind == "item_status_changed":
        _apply_item_status(projection, event)
    elif kind == "item_verified":
        _apply_item_verified(projection, event)
    elif kind == "item_assigned":
        state = _state(projection, event.get("item_id"))
        state.child_session_id = event.get("child_session_id")
        state.owner = event.get("owner")
    elif kind == "evidence_attached":
        state = _state(projection, event.get("item_id"))
        evidence = event.get("evidence")
        if evidence not in state.evidence:
            state.evidence.append(copy.deepcopy(evidence))
    elif kind == "assumption_resolved":
        for assumption in projection.contract.get("assumptions") or ():
            if isinstance(assumption, dict) and assumption.get("assumption_id") == event.get("assumption_id"):
                assumption["resolution"] = event.get("resolution")
                break
        else:
            raise _invalid()
    elif kind == "verification_recorded":
        criterion_id = event.get("criterion_id")
        if criterion_id not in _ids(projection.contract.get("criteria"), "criterion_id"):
            raise _invalid()
        projection.criteria[criterion_id] = copy.deepcopy(event.get("result"))
    else:  # vak cannot even deserialize an unknown event kind
        raise WorkError("invalid_event", f"unknown work event kind {kind!r}")
    return projection


def _apply_item_status(projection: WorkProjection, event: dict) -> None:
    item_id = event.get("item_id")
    src, dst = event.get("from"), event.get("to")
    state = _state(projection, item_id)
    if state.status != src:
        raise WorkError(
            "invalid_item_transition",
            f"invalid work item '{item_id}' transition {_debug(state.status)} -> {_debug(dst)}",
        )
    if dst == "succeeded":
        raise WorkError(
            "model_completion", f"work item '{item_id}' cannot be marked succeeded by a model event"
        )
    if (src, dst) not in ITEM_TRANSITIONS:
        raise WorkError(
            "invalid_item_transition",
            f"invalid work item '{item_id}' transition {_debug(src)} -> {_debug(dst)}",
        )
    if dst == "running":
        definition = projection.definition(item_id)
        if definition is None:
            raise WorkError("unknown_item", f"unknown work item '{item_id}'")
        for dep in definition.get("dependencies") or ():
            dep_state = projection.items.get(dep)
            if dep_state is None or dep_state.status not in _DONE_DEPENDENCY:
                raise _invalid()
    if dst == "ready_for_verification" and not state.evidence:
        raise _invalid()
    state.status = dst
    state.attempt = event.get("attempt", 0)
    reason = event.get("reason")
    state.blocker = (
        reason if dst in ("blocked", "interrupted") and isinstance(reason, str) and reason else None
    )


def _apply_item_verified(projection: WorkProjection, event: dict) -> None:
    item_id = event.get("item_id")
    state = _state(projection, item_id)
    if state.status != "ready_for_verification" or state.attempt != event.get("attempt"):
        raise WorkError(
            "invalid_item_transition",
            f"invalid work item '{item_id}' transition {_debug(state.status)} -> Succeeded",
        )
    definition = projection.definition(item_id)
    if definition is None:
        raise WorkError("unknown_item", f"unknown work item '{item_id}'")
    criteria = {
        c.get("criterion_id"): c for c in projection.contract.get("criteria") or () if isinstance(c, dict)
    }
    for criterion_id in definition.get("criterion_ids") or ():
        criterion = criteria.get(criterion_id)
        required = criterion is not None and criterion.get("required", True)
        result = projection.criteria.get(criterion_id)
        passed = isinstance(result, dict) and result.get("kind") == "passed"
        if required and not passed:
            raise _invalid()
    if not state.evidence:
        raise _invalid()
    state.status = "succeeded"


def project_work(chain: Iterable[Any]) -> WorkProjection | None:
    """vak's ``project_work``: every ``work`` entry of ``chain`` (root first) applied in order; None
    when the chain has no work. Raises :class:`WorkError` at the first invalid event."""
    projection: WorkProjection | None = None
    for entry in chain:
        if entry.kind == "work":
            projection = apply_work_event(projection, entry.payload)
    return projection


# -- the payload vak writes ------------------------------------------------------------------------

# Field order of each struct/variant as vak-session's types.rs declares it (serde writes fields in
# declaration order). Tag keys come first for internally tagged enums.
_EVENT_FIELDS = {
    "contract_created": ("contract",),
    "contract_revised": ("previous_revision", "contract", "reason"),
    "contract_status_changed": ("from", "to", "reason"),
    "item_status_changed": ("item_id", "from", "to", "attempt", "reason"),
    "item_verified": ("item_id", "attempt"),
    "item_assigned": ("item_id", "owner", "child_session_id"),
    "evidence_attached": ("item_id", "evidence"),
    "assumption_resolved": ("assumption_id", "resolution"),
    "verification_recorded": ("criterion_id", "result"),
}
_CONTRACT_FIELDS = (
    ("contract_id", None),
    ("revision", 0),
    ("source_entry_id", None),
    ("objective", None),
    ("constraints", []),
    ("assumptions", []),
    ("criteria", []),
    ("items", None),
)
_ITEM_FIELDS = (
    ("item_id", None),
    ("title", None),
    ("instructions", None),
    ("dependencies", []),
    ("owner", None),
    ("required", True),
    ("readonly", False),
    ("path_claims", []),
    ("criterion_ids", []),
)
_CRITERION_FIELDS = (("criterion_id", None), ("statement", None), ("kind", None), ("required", True))
_ASSUMPTION_FIELDS = (("assumption_id", None), ("text", None), ("requires_confirmation", False))
_MISSING = object()


def _ordered(value: Any, fields: Sequence[tuple[str, Any]]) -> Any:
    """``value`` with ``fields`` first in declaration order (defaults filled, serde writes them), then
    any other keys in their given order."""
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, default in fields:
        v = value.get(key, _MISSING)
        if v is _MISSING:
            if default is None:
                continue
            v = copy.copy(default)
        out[key] = v
    for key, v in value.items():
        if key not in out:
            out[key] = v
    return out


def _tagged_first(value: Any) -> Any:
    if isinstance(value, dict) and "kind" in value:
        return {"kind": value["kind"], **{k: v for k, v in value.items() if k != "kind"}}
    return value


def _contract(contract: Any) -> Any:
    c = _ordered(contract, _CONTRACT_FIELDS)
    if not isinstance(c, dict):
        return c
    if isinstance(c.get("items"), list):
        c["items"] = [_ordered(i, _ITEM_FIELDS) for i in c["items"]]
    if isinstance(c.get("criteria"), list):
        crit = [_ordered(x, _CRITERION_FIELDS) for x in c["criteria"]]
        c["criteria"] = [
            {**x, "kind": _tagged_first(x["kind"])} if isinstance(x, dict) and "kind" in x else x
            for x in crit
        ]
    if isinstance(c.get("assumptions"), list):
        c["assumptions"] = [
            _ordered(
                {k: v for k, v in a.items() if not (k == "resolution" and v is None)}, _ASSUMPTION_FIELDS
            )
            if isinstance(a, dict)
            else a
            for a in c["assumptions"]
        ]
    return c


def work_payload(contract_id: str, revision: int, event: dict) -> dict:
    """The payload of a ``work`` entry as vak writes it: ``contract_id``, ``revision``, then the event
    under a second ``kind`` key (§2.4), its fields in vak's declaration order.

    Defaults vak always serialises are filled in (``child_session_id`` null, contract and item list
    defaults, ``required`` true); keys vak does not know are kept after the known ones.
    """
    kind = event.get("kind")
    fields = _EVENT_FIELDS.get(kind, ())
    ev: dict[str, Any] = {"kind": kind}
    for key in fields:
        if key in event:
            ev[key] = event[key]
        elif key == "child_session_id":
            ev[key] = None
    for key, value in event.items():
        if key not in ev:
            ev[key] = value
    if "contract" in ev:
        ev["contract"] = _contract(ev["contract"])
    for key in ("evidence", "result"):
        if key in ev:
            ev[key] = _tagged_first(ev[key])
    return {"contract_id": contract_id, "revision": revision, "kind": ev}


# -- writing through a SessionLog ------------------------------------------------------------------


def append_work(log: WorkLog, contract_id: str, revision: int, event: dict, **kw: Any) -> Entry:
    """Validate and append one work event, then promote ready items (§6.4); see
    :meth:`SessionLog.append_work`."""
    payload = work_payload(contract_id, revision, event)
    chain = log.chain_to_root()
    projection = project_work(chain)
    apply_work_event(projection, payload)  # raises WorkError: nothing written
    entry = log.append("work", payload, **kw)
    _promote_ready_items(log)
    return entry


def _promote_ready_items(log: WorkLog) -> None:
    # vak collects the promotable items once and appends proposed->ready for each through append_work,
    # which promotes again recursively; with two or more items ready at once its outer loop then
    # re-appends an item the inner call already promoted and returns an error after writing. The
    # entries written are the same as this loop's (one proposed->ready per item, contract order).
    while True:
        projection = project_work(log.chain_to_root())
        if projection is None or projection.status != "active":
            return
        for item in projection.contract.get("items") or ():
            state = projection.items.get(item["item_id"])
            if state is None or state.status != "proposed":
                continue
            deps = item.get("dependencies") or ()
            if all(
                projection.items.get(d) is not None and projection.items[d].status in _DONE_DEPENDENCY
                for d in deps
            ):
                append_work(
                    log,
                    projection.contract["contract_id"],
                    projection.contract.get("revision", 0),
                    {
                        "kind": "item_status_changed",
                        "item_id": item["item_id"],
                        "from": "proposed",
                        "to": "ready",
                        "attempt": 0,
                        "reason": _READY_REASON,
                    },
                )
                break
        else:
            return


def child_run_status(chain: Iterable[Any]) -> str | None:
    """``status`` of the newest ``child_run`` entry on ``chain`` (root first), else None."""
    status = None
    for entry in chain:
        if entry.kind == "child_run":
            s = entry.payload.get("status")
            status = s if isinstance(s, str) else status
    return status


def _child_status(
    log: WorkLog, child_id: str | None, sessions_home: str | os.PathLike | None
) -> str | None:
    if child_id is None or sessions_home is None:
        return None
    header = log.header
    cwd = header.payload.get("cwd") if header is not None else None
    if not isinstance(cwd, str):
        return None
    path = session_path(Path(sessions_home).expanduser(), cwd, child_id)
    # vak opens the child for writing: a child still held by a live process (or missing) yields no
    # status, so its item is interrupted rather than trusted. The handle writes nothing. (It is
    # opened as the parent was, by the parent's class: this module does not import the log back.)
    try:
        child = type(log).open(path, fsync=False)
    except (OSError, LedgerError):  # missing, locked by a live writer, or not UTF-8
        return None
    try:
        return child_run_status(child.chain_to_root())
    finally:
        child.close()


def reconcile_running_work(
    log: WorkLog,
    live_child_sessions: Iterable[str] = (),
    sessions_home: str | os.PathLike | None = None,
) -> int:
    """Settle items left ``running`` by a process restart (vak's ``reconcile_running_work`` and
    ``…_with_child_ledgers``); returns how many were reconciled.

    An item whose child session is in ``live_child_sessions`` stays running. Otherwise, when
    ``sessions_home`` is given and the item's child ledger (``<sessions_home>/sessions/<key(cwd)>/
    <child>.jsonl``, cwd from this ledger's header) ends in ``child_run`` ``completed``, the item gets an
    ``evidence_attached`` ``child_session`` ref and moves running→ready_for_verification (never
    succeeded). Every other running item moves running→interrupted with a blocker reason naming the
    child's fate (:data:`RECOVERY_REASONS`). Nothing is replayed. Items are visited in item-id order.
    """
    live = set(live_child_sessions)
    projection = project_work(log.chain_to_root())
    if projection is None:
        return 0
    stale = [
        (s.item_id, s.attempt, s.child_session_id)
        for s in projection.items.values()
        if s.status == "running" and not (s.child_session_id is not None and s.child_session_id in live)
    ]
    reconciled = 0
    for item_id, attempt, child_id in stale:
        current = project_work(log.chain_to_root())
        if current is None:
            break
        cid, rev = current.contract["contract_id"], current.contract.get("revision", 0)
        status = _child_status(log, child_id, sessions_home)
        if status == "completed":
            evidence = {"kind": "child_session", "session_id": child_id or ""}
            append_work(
                log, cid, rev, {"kind": "evidence_attached", "item_id": item_id, "evidence": evidence}
            )
            move = {"to": "ready_for_verification", "reason": _COMPLETED_CHILD_REASON}
        else:
            move = {"to": "interrupted", "reason": RECOVERY_REASONS.get(status, RECOVERY_REASONS[None])}
        append_work(
            log,
            cid,
            rev,
            {
                "kind": "item_status_changed",
                "item_id": item_id,
                "from": "running",
                "to": move["to"],
                "attempt": attempt,
                "reason": move["reason"],
            },
        )
        reconciled += 1
    return reconciled
