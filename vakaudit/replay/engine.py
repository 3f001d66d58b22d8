"""Replay one session ledger: rebuild the request of every execute step and check it (§15–§16).

One forward walk over the active chain. The turn index is built incrementally
(`vakaudit.ledger.turns.TurnIndexBuilder`) and the request of a step is projected from the live
index at the step's cut, so replaying a session costs time linear in its entries (plus the size of
the requests themselves). Reads only; never writes, locks or repairs a ledger.

Where a step's request starts and ends (§1.3): the request of an execute receipt was built from the
chain as it stood before the step's dispatch group. vak writes the receipt before the step's
assistant message; a ledger written in the other order (the assistant message right before the
receipt, as in ledgers driven through the session API directly) is read too: a provider request
always ends with a user-role message, so a trailing assistant message before the receipt is taken as
the step's own output and cut off.

The walk itself (:mod:`vakaudit.replay.walker`), a step built and checked at its cut
(:mod:`vakaudit.replay.step`, its checks in :mod:`vakaudit.replay.step_checks`) and the binding in
force (:mod:`vakaudit.replay.bindings`) live beside this module; here are the
pre-pass that finds each step's cut, the whole-ledger replay and the builder for a ledger being
written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from vakaudit.errors import CorruptError
from vakaudit.ledger import SessionLog
from vakaudit.ledger.shape import payload_type_error
from vakaudit.replay.prefix import PrefixBreak, request_message_chars
from vakaudit.replay.request import HostParams, NeutralRequest
from vakaudit.replay.step import ReplayStep, replay_step
from vakaudit.replay.step_checks import StepPlan
from vakaudit.replay.walker import ReplayContext, StepWalker

__all__ = [
    "PrefixBreak",
    "ReplayStep",
    "StepRequestBuilder",
    "StepWalker",
    "build_step_request",
    "replay_log",
]


def _role(entry: Any) -> str | None:
    if entry.kind != "message":
        return None
    msg = entry.payload.get("message")
    return msg.get("role") if isinstance(msg, dict) else None


def _pre_pass(chain: Sequence[Any]) -> dict[int, StepPlan]:
    """Locate each execute receipt's cut, output message and prefix-changed activities."""
    plans: dict[int, StepPlan] = {}
    last_msg_pos: int | None = None
    last_exec_pos = -1
    pending_pc: list[int] = []
    awaiting_output: StepPlan | None = None
    claimed = -1  # an assistant message already taken as the previous receipt's output
    for pos, e in enumerate(chain):
        kind = e.kind
        if kind == "message":
            if awaiting_output is not None and _role(e) == "assistant":
                awaiting_output.output_pos = pos
                awaiting_output = None
                claimed = pos
            last_msg_pos = pos
        elif kind == "activity":
            if e.payload.get("label") == "prefix-changed":
                pending_pc.append(pos)
        elif kind == "receipt" and e.payload.get("purpose") == "execute":
            cut, output = pos, None
            if (
                last_msg_pos is not None
                and last_msg_pos > last_exec_pos
                and last_msg_pos != claimed
                and _role(chain[last_msg_pos]) == "assistant"
            ):
                cut, output = last_msg_pos, last_msg_pos
            plan = StepPlan(pos, cut, output, pending_pc)
            plans[pos] = plan
            pending_pc = []
            awaiting_output = plan if output is None else None
            last_exec_pos = pos
    return plans


def replay_log(
    log: SessionLog,
    *,
    host: HostParams | None = None,
    generation: str | None = None,
    on_step: Callable[[ReplayStep], None] | None = None,
    interfaces: Mapping[str, Mapping[str, Any] | str] | None = None,
) -> Iterator[ReplayStep]:
    """Yield every execute step of `log`'s active chain with its request and checks.

    ``interfaces``: for a 7.0 ledger, the interface object of each ``turn_capabilities_bound`` by
    entry id (its fields, or a string saying why it could not be read; see :func:`bound_binding`).

    Raises :class:`~vakaudit.errors.CorruptError` (with ``line``) before the first step when a payload
    field has a JSON type vak never writes there (:func:`~vakaudit.ledger.shape.payload_type_error`).
    """
    for entry, line_no in zip(log.entries, log.line_nos, strict=True):
        wrong = payload_type_error(entry.kind, entry.payload)
        if wrong is not None:
            raise CorruptError(f"line {line_no} of {log.path}: {wrong}; not replayable", line=line_no)
    rp = ReplayContext(log, host or HostParams(), generation, interfaces=interfaces)
    chain = rp.chain
    cuts: dict[int, list[StepPlan]] = {}
    for plan in _pre_pass(chain).values():
        cuts.setdefault(plan.cut_pos, []).append(plan)
    walker = StepWalker(rp)
    for pos, e in enumerate(chain):
        for sp in cuts.get(pos, ()):
            step = replay_step(walker, sp, chain)
            if on_step is not None:
                on_step(step)
            yield step
        walker.add(e)


class StepRequestBuilder:
    """Incremental request builder for a ledger being written (e.g. a synthetic home generator).

    Keep one per open `SessionLog`; call `request(...)` right before appending an execute receipt.
    Entries appended since the previous call are fed once, so a whole session costs linear time.
    """

    def __init__(
        self, log: SessionLog, *, host: HostParams | None = None, generation: str | None = None
    ) -> None:
        self.log = log
        self._walker = StepWalker(ReplayContext(log, host or HostParams(), generation, chain=[]))
        self._fed = 0

    def _catch_up(self) -> None:
        entries = self.log.entries
        fed = self._walker.chain
        new = entries[self._fed :]
        tip = fed[-1].id if fed else None
        for e in new:  # linear only if every new entry continues the fed chain
            tip = e.id if e.parent_id == tip else "\0"
        if tip != self.log.tail_id:
            # the log branched: rebuild from its active chain
            self._walker = StepWalker(ReplayContext(self.log, self._walker.host, self._walker.gen, chain=[]))
            for e in self.log.chain_to_root():
                self._walker.add(e)
        else:
            for e in new:
                self._walker.add(e)
        self._fed = len(entries)

    def request(self, *, provider: str = "", model: str = "", tail: str | None = None) -> NeutralRequest:
        """The request of an execute step dispatched now (after everything appended so far).

        `tail` replaces the composed tail text (placement still follows the regime).
        """
        self._catch_up()
        built = self._walker.request_now({"provider": provider, "model": model}, tail_override=tail)
        self._walker.after_step(built, "")
        return built.request

    def message_chars(self, *, tail: str | None = None) -> int:
        """`request_message_chars` of `request()`: the §11 message chars, tail included."""
        return request_message_chars(self.request(tail=tail).messages)


def build_step_request(
    log: SessionLog,
    *,
    provider: str = "",
    model: str = "",
    host: HostParams | None = None,
    generation: str | None = None,
) -> NeutralRequest:
    """The request vak would send for an execute step dispatched now, at the end of `log`'s chain.

    One-shot form (walks the whole chain); use `StepRequestBuilder` when calling it per step.
    """
    builder = StepRequestBuilder(log, host=host, generation=generation)
    return builder.request(provider=provider, model=model)
