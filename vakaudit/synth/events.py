"""What the writers of one synthetic home share, and the typed events a session hands to them.

The session writer (:mod:`vakaudit.synth.session`) writes one ledger. What a turn does to the rest of
the home (an intent-evidence row, an approval in the security log, a checkpoint, the routing and cost
rows of a settled turn, the search index after a session) is not its business: it emits one typed
event per happening through :meth:`SessionHost.emit`, and the home (:class:`vakaudit.synth.home.
HomeWriter`) hands each event to the per-kind writers subscribed to its type, in subscription order.
The session writer also asks the host for a few shared draws and facts (:class:`SessionHost`).

:class:`HomeFacts` is what every writer of a home reads (where it is, its profile, seed, clock, id
source and content pools) and :class:`SideSinks` the side ledgers' append sinks. Neither refers
back to the home, so the side writers (:mod:`vakaudit.synth.sidecars`, :mod:`vakaudit.synth.static`)
depend on these two and nothing above them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vakaudit.ledger.keys import workspace_key
from vakaudit.synth.sinks import BudgetAlertSink, CostLogSink, JsonlSink

if TYPE_CHECKING:  # pragma: no cover
    from vakaudit.synth.clock import IdSource, SynthClock
    from vakaudit.synth.content import ContentPools
    from vakaudit.synth.profiles import Profile


@dataclass(slots=True)
class HomeFacts:
    """What every writer of one synthetic home reads."""

    out: Path
    layout: str
    profile: Profile
    seed: int
    clock: SynthClock
    ids: IdSource
    pools: ContentPools

    @property
    def data(self) -> Path:
        """The data folder (the home itself in every layout synth writes)."""
        return self.out

    @property
    def agent(self) -> Path:
        return self.out / "agents" / "vak"

    def trace(self, sw: Any, turn: int | None = None) -> dict | None:
        """The ``trace`` object G2-layout rows carry (home.md §4), None in other layouts."""
        if self.layout != "g2":
            return None
        t: dict[str, Any] = {
            "tenant": "local",
            "space": f"spc_{workspace_key(sw.spec.cwd)}",
            "agent": "vak",
            "run": f"run_{sw.spec.session_id[-12:]}_{turn or 0}",
            "span": self.ids.nonzero_hex16(),
            "cause": {"kind": "user", "request_id": f"req_{self.ids.hex(12)}"},
            "actor": "usr_local",
            "session": sw.spec.session_id,
        }
        if turn is not None:
            t["turn"] = turn
        return t

    def with_trace(self, row: dict, sw: Any, turn: int | None = None) -> dict:
        t = self.trace(sw, turn)
        if t is not None:
            row["trace"] = t
            row["actor"] = "usr_local"
        return row


@dataclass(slots=True)
class SideSinks:
    """The append sinks of the side ledgers (JSONL era: one file each, home.md §4–§10)."""

    routing: JsonlSink
    intent_ev: JsonlSink
    cost: CostLogSink
    cost_root: CostLogSink
    activity_log: JsonlSink
    activity_root: JsonlSink
    security: JsonlSink
    security_root: JsonlSink
    alerts: BudgetAlertSink
    inbox: JsonlSink
    commitments: JsonlSink
    incidents: JsonlSink
    actions: JsonlSink
    deliveries: JsonlSink

    @classmethod
    def open(cls, facts: HomeFacts) -> SideSinks:
        a, d = facts.agent, facts.data
        return cls(
            routing=JsonlSink(a / "routing-evidence.jsonl"),
            intent_ev=JsonlSink(a / "intent-evidence.jsonl"),
            cost=CostLogSink(a / "cost-log.jsonl"),
            cost_root=CostLogSink(d / "cost-log.jsonl"),
            activity_log=JsonlSink(a / "activity-log.jsonl"),
            activity_root=JsonlSink(d / "activity-log.jsonl"),
            security=JsonlSink(a / "security-events.jsonl"),
            security_root=JsonlSink(d / "security-events.jsonl"),
            alerts=BudgetAlertSink(d / "budget-alerts.jsonl"),
            inbox=JsonlSink(d / "inbox.jsonl"),
            commitments=JsonlSink(a / "commitments.jsonl"),
            incidents=JsonlSink(d / "operations" / "incidents.jsonl"),
            actions=JsonlSink(d / "operations" / "actions.jsonl"),
            deliveries=JsonlSink(d / "gateway" / "deliveries.jsonl"),
        )

    def close(self) -> None:
        for name in self.__slots__:  # type: ignore[attr-defined]
            getattr(self, name).close()

    @property
    def cost_log_compactions(self) -> int:
        return getattr(self.cost, "compactions", 0) + getattr(self.cost_root, "compactions", 0)


# -- the events of one turn and one session, in the order a session emits them --------------------


@dataclass(frozen=True, slots=True)
class CheckpointTaken:
    """A workspace snapshot is stored before the turn (vak-core checkpoints)."""

    sw: Any
    label: str


@dataclass(frozen=True, slots=True)
class IntentRead:
    """The turn's intent was read: one intent-evidence row (and an escalation when it asks for one)."""

    sw: Any
    act: str
    stakes: str
    tier: str


@dataclass(frozen=True, slots=True)
class ApprovalAsked:
    """A tool call needed approval (granted or denied): a security event."""

    sw: Any
    tool: str
    denied: bool


@dataclass(frozen=True, slots=True)
class Remembered:
    """The ``remember`` tool ran: the workspace's memory note grows."""

    sw: Any
    inp: dict


@dataclass(frozen=True, slots=True)
class ToolRan:
    """A tool finished: its activity-log row."""

    sw: Any
    tool: str
    tool_use_id: str
    ok: bool
    duration_ms: int


@dataclass(frozen=True, slots=True)
class TurnSettled:
    """A turn's provider attempts settled: routing-evidence, cost and budget rows."""

    sw: Any
    turn: Any


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """Turn ``t`` of the session is written (inbox, commitments, deliveries, incidents may follow)."""

    sw: Any
    t: int


@dataclass(frozen=True, slots=True)
class SessionEnded:
    """The session's ledger is closed: the search index and the per-session side state."""

    sw: Any
    res: Any  # vakaudit.synth.session.SessionResult


Event = CheckpointTaken | IntentRead | ApprovalAsked | Remembered | ToolRan | TurnSettled | TurnEnded | SessionEnded


@dataclass(slots=True)
class Subscribers:
    """Event type -> the handlers it goes to, in the order they subscribed."""

    by_type: dict[type, list[Callable[[Any], None]]] = field(default_factory=dict)

    def on(self, kind: type, handler: Callable[[Any], None]) -> None:
        self.by_type.setdefault(kind, []).append(handler)

    def emit(self, event: Event) -> None:
        for handler in self.by_type.get(type(event), ()):
            handler(event)


class SessionHost(Protocol):
    """What a session writer needs of the home it writes into."""

    profile: Profile
    pools: ContentPools
    clock: SynthClock
    ids: IdSource
    fsync: bool
    compactions: list[int]

    def emit(self, event: Event) -> None: ...

    def session_path(self, cwd: str, session_id: str) -> Path: ...

    def next_variant(self, rng: random.Random) -> int: ...

    def spread(self, stream: str) -> float: ...

    def result_size(self, rng: random.Random) -> int: ...

    def result_written(self, size: int) -> None: ...

    def request_message_chars(self, sw: Any) -> int: ...

    def spawn_child(self, parent: Any, instructions: str) -> str: ...

    def sandbox_execution(self, sw: Any, command: str, output: str, is_error: bool) -> int: ...
