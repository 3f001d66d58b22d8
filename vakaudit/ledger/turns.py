"""The active chain reorganized into turns (spec ledger.md §7.2), plus the chain facts projection needs.

One walk over the active chain builds everything the projections and tail sections read: the turns
(directive, steps, final answer, raw tail, presentations, cards, reading), G3 packets, reset and
compaction boundaries, the G1 message list, the goal and work-contract folds, the latest intent and
the directive timeline for the conversation thread. The walk is incremental
(:class:`TurnIndexBuilder`), so a replay that projects after every step adds each entry once instead
of re-walking a growing prefix. Entries are read through ``entry.id``, ``entry.kind`` and
``entry.payload`` only; nothing here does I/O or mutates an entry.

Generations (spec §0): ``g1`` 2.x-3.4.x message-level projection; ``g1p`` the 3.5.0 development
snapshot (G1'); ``g2`` 3.5.0 turn-based; ``g3`` the JSONL code after 3.5.1 (packets); ``g4`` late JSONL.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from vakaudit.ledger.digest import (
    args_digest,
    build_card,
    card_line,
    evidence_digest,
    evidence_shape,
    first_sentence_by_words,
    reading_key,
    rust_trim,
    strip_duplicate_fences,
    text_content,
)
from vakaudit.ledger.vocab import directive_rule

__all__ = [
    "Generation",
    "Packet",
    "Step",
    "Turn",
    "TurnIndex",
    "TurnIndexBuilder",
    "generation_for",
    "message_of",
    "is_control_entry",
]


class Generation(StrEnum):
    """Ledger code generation whose projection rules apply (spec ledger.md §0)."""

    G1 = "g1"
    G1P = "g1p"
    G2 = "g2"
    G3 = "g3"
    G4 = "g4"


MESSAGE_LEVEL = frozenset({Generation.G1, Generation.G1P})
TURN_BASED = frozenset({Generation.G2, Generation.G3, Generation.G4})
RANGE_PACKETS = frozenset({Generation.G3, Generation.G4})


def generation_for(app_version: str) -> str:
    """Generation from a header's ``contract.app_version``: G1 below 3.5.0, G2 for 3.5.0, else G3.

    A version that does not start with numbers (vak's own test harness writes ``"oracle"`` and
    ``"test"``) is taken as G3, the newest JSONL generation this package reproduces exactly.
    """
    core = app_version.strip().lstrip("vV").split("-", 1)[0].split("+", 1)[0]
    try:
        nums = [int(p) for p in core.split(".")]
    except ValueError:
        return Generation.G3
    nums = (nums + [0, 0, 0])[:3]
    if nums < [3, 5, 0]:
        return Generation.G1
    if nums == [3, 5, 0]:
        return Generation.G2
    return Generation.G3


def coerce_generation(generation: str) -> Generation:
    try:
        return Generation(str(generation).lower().replace("'", "p"))
    except ValueError:
        raise ValueError(
            f"unknown ledger generation {generation!r}; expected one of g1, g1p, g2, g3, g4"
        ) from None


# -- entry access ----------------------------------------------------------------------------------


def message_of(entry: Any) -> dict | None:
    """The neutral message of a ``message`` entry, or None."""
    if entry.kind != "message":
        return None
    msg = entry.payload.get("message")
    return msg if isinstance(msg, dict) else None


def is_control_entry(entry: Any) -> bool:
    """True for a user-role message entry with a ``meta.control`` tag (the only control signal, §5.3).

    Text is never sniffed, and an assistant message is never control.
    """
    meta = entry.payload.get("meta")
    if not isinstance(meta, dict) or meta.get("control") is None:
        return False
    msg = entry.payload.get("message")
    return isinstance(msg, dict) and msg.get("role") == "user"


def _block_types(message: dict) -> set[str]:
    return {b.get("type") for b in message.get("content") or () if isinstance(b, dict)}


# -- turn structure --------------------------------------------------------------------------------


@dataclass(slots=True, eq=False)
class Step:
    """One assistant message with tool calls and the results that answered it, in arrival order."""

    assistant: Any
    results: list[tuple[str, str, bool]] = field(default_factory=list)

    @property
    def message(self) -> dict:
        return self.assistant.payload["message"]


@dataclass(slots=True, frozen=True)
class Packet:
    """A stored G3 compaction packet: the summary of an inclusive range of turns."""

    first_turn_id: str
    last_turn_id: str
    model: str
    summary: str
    entry_id: str = ""
    position: int = 0


@dataclass(slots=True, eq=False)
class Turn:
    """One user directive plus every step and tool exchange until its final answer."""

    turn_id: str
    number: int
    directive: Any
    position: int = 0
    steps: list[Step] = field(default_factory=list)
    final_answer: Any = None
    evidence_ids: list[str] = field(default_factory=list)
    presentations: list[Any] = field(default_factory=list)
    card: dict | None = None
    reading: dict | None = None
    closed: bool = False
    behind_reset: bool = False
    raw_tail: list[Any] = field(default_factory=list)
    version: int = 0
    _cache: dict = field(default_factory=dict, repr=False)

    # -- messages ----------------------------------------------------------------------------------

    @property
    def directive_message(self) -> dict:
        return self.directive.payload["message"]

    @property
    def directive_text(self) -> str:
        return text_content(self.directive_message)

    @property
    def directive_key(self) -> str:
        """The trimmed directive text (what the conversation thread compares), cached."""
        key = self._cache.get("directive_key")
        if key is None:
            key = rust_trim(self.directive_text)
            self._cache["directive_key"] = key
        return key

    @property
    def card_written(self) -> bool:
        return self.card is not None

    def current_verbatim(self) -> list[dict]:
        """The open-turn rendering: directive then every later message of the turn, verbatim."""
        return [self.directive_message, *(e.payload["message"] for e in self.raw_tail)]

    # -- evidence ----------------------------------------------------------------------------------

    def tool_use(self, tool_use_id: str) -> tuple[str, Any] | None:
        """(name, input) of the first tool_use with this id among the turn's steps."""
        for step in self.steps:
            for block in step.message.get("content") or ():
                if (
                    isinstance(block, dict)
                    and block.get("type") == "tool_use"
                    and block.get("id") == tool_use_id
                ):
                    return str(block.get("name", "")), block.get("input")
        return None

    def tool_result(self, tool_use_id: str) -> tuple[str, bool] | None:
        for step in self.steps:
            for rid, content, is_error in step.results:
                if rid == tool_use_id:
                    return content, is_error
        return None

    def evidence_for(self, tool_use_id: str) -> dict | None:
        """{tool, input, content, is_error} for one of this turn's calls that has a result."""
        use = self.tool_use(tool_use_id)
        if use is None:
            return None
        res = self.tool_result(tool_use_id)
        if res is None:
            return None
        return {"tool": use[0], "input": use[1], "content": res[0], "is_error": res[1]}

    def _card_call_ids(self) -> dict[str, str]:
        """tool_use_id -> presentation entry id, for presentations made by a card tool call."""
        out: dict[str, str] = {}
        for pres in self.presentations:
            source = pres.payload.get("source")
            if isinstance(source, dict) and source.get("kind") == "tool_call":
                out[str(source.get("tool_use_id", ""))] = pres.id
        return out

    def trace_lines(self) -> list[dict]:
        """One trace line per non-card tool call with a result, in result order (§7.4)."""
        card_ids = self._card_call_ids()
        lines = []
        for ev_id in self.evidence_ids:
            if ev_id in card_ids:
                continue
            ev = self.evidence_for(ev_id)
            if ev is None:
                continue
            lines.append(
                {
                    "tool": ev["tool"],
                    "args_digest": args_digest(ev["tool"], ev["input"]),
                    "evidence_id": ev_id,
                    "shape": evidence_shape(ev["tool"], ev["content"], ev["is_error"]),
                }
            )
        return lines

    # -- renderings (§7.3) -------------------------------------------------------------------------

    def full_record(self, generation: str = Generation.G3) -> list[dict]:
        """The closed-turn Full rendering (call pattern with digested results; cached per version).

        G2 uses the same call-pattern form: which Full form the released 3.5.0 binary wrote is
        unconfirmed (spec §7.3). G4 additionally drops assistant text that accompanies tool calls.
        """
        key = ("full", str(generation), self.version)
        cached = self._cache.get("full")
        if cached is not None and cached[0] == key:
            return list(cached[1])
        record = self._render_full(drop_step_text=generation == Generation.G4)
        self._cache["full"] = (key, record)
        return list(record)

    def _render_full(self, *, drop_step_text: bool) -> list[dict]:
        card_calls = self._card_call_ids()
        out: list[dict] = [self.directive_message]
        for step in self.steps:
            answered = {rid for rid, _, _ in step.results}
            kept = []
            for block in step.message.get("content") or ():
                btype = block.get("type") if isinstance(block, dict) else None
                if btype == "thinking":
                    continue
                if btype == "tool_use" and block.get("id") not in answered:
                    continue
                if drop_step_text and btype == "text":
                    continue
                kept.append(block)
            if not kept:
                continue
            out.append({"role": "assistant", "content": kept})
            results = []
            for rid, content, is_error in step.results:
                if rid in card_calls:
                    rendered = '{"presentation":"' + card_calls[rid] + '","ok":true}'
                else:
                    ev = self.evidence_for(rid)
                    if ev is not None and not ev["is_error"]:
                        rendered = evidence_digest(rid, ev["tool"], ev["content"], False)
                    else:
                        rendered = content
                results.append(
                    {"type": "tool_result", "tool_use_id": rid, "content": rendered, "is_error": is_error}
                )
            if results:
                out.append({"role": "user", "content": results})
        if self.final_answer is not None:
            digests = [str(p.payload.get("payload_digest", "")) for p in self.presentations]
            narration = rust_trim(
                strip_duplicate_fences(text_content(self.final_answer.payload["message"]), digests)
            )
            if narration:
                out.append({"role": "assistant", "content": [{"type": "text", "text": narration}]})
        return out

    def build_card(
        self,
        outcome: str,
        narration: str,
        estimate_tokens: Callable[[str], int] | None = None,
        *,
        generation: str = Generation.G3,
    ) -> dict:
        """This turn's card in the ledger shape (§4.13); tokens via ``estimate_tokens`` (0 without)."""
        full_text = ""
        if estimate_tokens is not None:
            full_text = "\n".join(text_content(m) for m in self.full_record(generation))
        return build_card(
            turn_id=self.turn_id,
            asked_text=self.directive_text,
            did=self.trace_lines(),
            presentations=[(p.id, p.payload) for p in self.presentations],
            narration=narration,
            outcome=outcome,
            reading=self.reading,
            full_text=full_text,
            estimate_tokens=estimate_tokens,
        )

    def provisional_card(self) -> dict:
        """vak's ``ensure_cards`` card for a closed turn without a written one (outcome ``unrecorded``)."""
        key = ("provisional", self.version)
        cached = self._cache.get("provisional")
        if cached is not None and cached[0] == key:
            return cached[1]
        narration = ""
        if self.final_answer is not None:
            narration = first_sentence_by_words(text_content(self.final_answer.payload["message"]), 60)
        card = self.build_card("unrecorded", narration)
        self._cache["provisional"] = (key, card)
        return card

    def card_line(self, *, provisional: bool = True) -> str | None:
        """This turn's ``<turns>`` line (§7.3) from the written card, else (``provisional``, closed
        turns) the provisional one; None without a card. Cached per version."""
        card = self.effective_card() if provisional else self.card
        if card is None:
            return None
        key = (self.version, self.closed, provisional, self.number)
        cached = self._cache.get("card_line")
        if cached is not None and cached[0] == key:
            return cached[1]
        line = card_line(card, self.number)
        self._cache["card_line"] = (key, line)
        return line

    def effective_card(self) -> dict | None:
        """The written card, else (closed turns) the provisional one, else None."""
        if self.card is not None:
            return self.card
        if self.closed:
            return self.provisional_card()
        return None


# -- goal and work folds ---------------------------------------------------------------------------

_SETTLED = frozenset({"completed", "failed", "cancelled", "unverified"})


@dataclass(slots=True)
class GoalState:
    """Fold of ``goal_update`` entries along the chain (§4.6)."""

    revision: int = 0
    objective: str = ""
    additions: list[str] = field(default_factory=list)
    control: str = "active"

    def apply(self, payload: dict) -> None:
        rev = payload.get("revision")
        if isinstance(rev, int):
            self.revision = rev
        relation = payload.get("relation")
        request = payload.get("request")
        request = request if isinstance(request, str) else ""
        if relation in ("new", "replaces"):
            self.objective = request
            self.additions = []
            self.control = "active"
        elif relation == "corrects":
            self.objective = request
            self.control = "active"
        elif relation == "adds_to":
            self.additions.append(request)
            self.control = "active"
        elif relation == "pauses":
            self.control = "paused"
        elif relation == "resumes":
            self.control = "active"
        elif relation == "cancels":
            self.control = "cancelled"


@dataclass(slots=True)
class WorkState:
    """Lenient fold of ``work`` events (the contract, its status, each item's status).

    vak validates every transition before writing; a ledger is evidence, so this fold applies what it
    finds without refusing anything.
    """

    contract: dict
    status: str = "draft"
    items: dict[str, str] = field(default_factory=dict)

    @property
    def settled(self) -> bool:
        return self.status in _SETTLED

    def _reset_items(self) -> None:
        self.items = {
            str(i.get("item_id", "")): "proposed"
            for i in self.contract.get("items") or ()
            if isinstance(i, dict)
        }


def _apply_work(state: WorkState | None, payload: dict) -> WorkState | None:
    event = payload.get("kind")
    if not isinstance(event, dict):
        return state
    kind = event.get("kind")
    if kind == "contract_created":
        contract = event.get("contract")
        if not isinstance(contract, dict):
            return state
        new = WorkState(contract=contract)
        new._reset_items()
        return new
    if state is None:
        return None
    if kind == "contract_revised":
        contract = event.get("contract")
        if isinstance(contract, dict):
            state.contract = contract
            if state.settled:
                state.status = "draft"
            state._reset_items()
    elif kind == "contract_status_changed":
        if isinstance(event.get("to"), str):
            state.status = event["to"]
    elif kind == "item_status_changed":
        item = str(event.get("item_id", ""))
        if item in state.items and isinstance(event.get("to"), str):
            state.items[item] = event["to"]
    elif kind == "item_verified":
        item = str(event.get("item_id", ""))
        if item in state.items:
            state.items[item] = "succeeded"
    return state


# -- the index -------------------------------------------------------------------------------------


@dataclass(slots=True, eq=False)
class G1Item:
    """One element of the G1/G1' message-level walk."""

    entry_id: str
    message: dict
    is_summary: bool = False
    is_control: bool = False
    is_intent: bool = False


@dataclass(slots=True, eq=False)
class TurnIndex:
    """Turns and packets of one active chain, plus the chain facts the projections read.

    Obtain one with :meth:`from_chain` or from a :class:`TurnIndexBuilder`. Treat it as read-only.
    """

    generation: Generation = Generation.G3
    turns: list[Turn] = field(default_factory=list)
    packets: list[Packet] = field(default_factory=list)
    entry_count: int = 0
    positions: dict[str, int] = field(default_factory=dict)
    by_turn_id: dict[str, Turn] = field(default_factory=dict)
    # reset_all compactions: position and summary of the newest one
    reset_position: int | None = None
    reset_summary: str | None = None
    # G2 cumulative boundary: the newest compaction of any kind
    boundary_position: int = 0
    boundary_summary: str | None = None
    # G1/G1' message-level walk
    g1_items: list[G1Item] = field(default_factory=list)
    latest_visible_intent_id: str | None = None
    # tail inputs
    latest_intent: Any = None
    latest_workspace: Any = None
    goal: GoalState | None = None
    work: WorkState | None = None
    directive_count: int = 0
    recent_directives: deque = field(default_factory=lambda: deque(maxlen=8))

    @classmethod
    def from_chain(cls, chain: Sequence[Any], *, generation: str) -> TurnIndex:
        """Walk ``chain`` (root first) once."""
        builder = TurnIndexBuilder(generation=generation)
        builder.extend(chain)
        return builder.index

    def turn_by_number(self, number: int) -> Turn | None:
        if 1 <= number <= len(self.turns):
            return self.turns[number - 1]
        return None

    def turn_by_id(self, turn_id: str) -> Turn | None:
        return self.by_turn_id.get(turn_id)

    @property
    def open_turn(self) -> Turn | None:
        if self.turns and not self.turns[-1].closed:
            return self.turns[-1]
        return None

    def packet_for(self, first_turn_id: str, last_turn_id: str) -> Packet | None:
        """The newest stored packet whose range is exactly (first, last)."""
        for packet in reversed(self.packets):
            if packet.first_turn_id == first_turn_id and packet.last_turn_id == last_turn_id:
                return packet
        return None

    def latest_reading(self) -> dict | None:
        """ReadingKey of the newest intent entry on the chain, or None."""
        if self.latest_intent is None:
            return None
        return reading_key(self.latest_intent.payload.get("reading"))


class TurnIndexBuilder:
    """Builds a :class:`TurnIndex` one entry at a time (feed the active chain root first).

    ``index`` is live: later :meth:`add` calls update it in place, and renderings cached on a turn
    are invalidated by its ``version``. Adding a whole chain costs time linear in its length.
    """

    def __init__(self, *, generation: str) -> None:
        self._gen = coerce_generation(generation)
        self.index = TurnIndex(generation=self._gen)
        self._pending_presentations: dict[str, list[Any]] = {}
        self._pending_cards: dict[str, dict] = {}
        self._pending_reading: dict | None = None

    def extend(self, entries: Iterable[Any]) -> TurnIndexBuilder:
        for entry in entries:
            self.add(entry)
        return self

    def add(self, entry: Any) -> None:
        idx = self.index
        pos = idx.entry_count
        idx.entry_count += 1
        idx.positions[entry.id] = pos
        kind = entry.kind
        if kind == "message":
            self._add_message(entry, pos)
        elif kind == "intent":
            self._add_intent(entry)
        elif kind == "compaction":
            self._add_compaction(entry, pos)
        elif kind == "presentation":
            if self._gen in TURN_BASED:
                self._add_presentation(entry)
        elif kind == "turn_card":
            if self._gen in TURN_BASED:
                self._add_card(entry)
        elif kind == "goal_update":
            if idx.goal is None:
                idx.goal = GoalState()
            idx.goal.apply(entry.payload)
        elif kind == "work":
            idx.work = _apply_work(idx.work, entry.payload)
        elif kind == "activity" and self._gen == Generation.G4:
            data = entry.payload.get("data")
            if isinstance(data, dict) and data.get("section") == "workspace_delta":
                idx.latest_workspace = entry

    # -- per kind ----------------------------------------------------------------------------------

    def _add_message(self, entry: Any, pos: int) -> None:
        idx = self.index
        msg = message_of(entry)
        if msg is None:
            return
        role = msg.get("role")
        if role not in ("user", "assistant"):
            return  # not a vak-llm message: vak would not have parsed the entry
        control = is_control_entry(entry)
        gen = self._gen
        if gen in MESSAGE_LEVEL:
            idx.g1_items.append(G1Item(entry.id, msg, is_control=control))
        if role == "user" and not control:
            text = rust_trim(text_content(msg))
            if text and not text.startswith("<"):
                idx.directive_count += 1
                idx.recent_directives.append((idx.directive_count, text))
        if gen not in TURN_BASED:
            return
        turns = idx.turns
        last = turns[-1] if turns else None
        if control:
            if last is not None:
                last.raw_tail.append(entry)
                last.version += 1
            return
        types = _block_types(msg)
        if role == "user":
            has_result = "tool_result" in types
            if directive_rule(role, control, "text" in types, has_result):
                self._new_turn(entry, pos)
            elif has_result and last is not None:
                last.raw_tail.append(entry)
                if last.steps:
                    step = last.steps[-1]
                    for block in msg.get("content") or ():
                        if isinstance(block, dict) and block.get("type") == "tool_result":
                            rid = str(block.get("tool_use_id", ""))
                            content = block.get("content", "")
                            if not isinstance(content, str):
                                content = str(content)
                            step.results.append((rid, content, bool(block.get("is_error", False))))
                            last.evidence_ids.append(rid)
                last.version += 1
            return
        if last is None:
            return
        last.raw_tail.append(entry)
        if "tool_use" in types:
            last.steps.append(Step(entry))
        else:
            last.final_answer = entry
            last.closed = True
        last.version += 1

    def _new_turn(self, entry: Any, pos: int) -> None:
        idx = self.index
        if idx.turns and not idx.turns[-1].closed:
            idx.turns[-1].closed = True
            idx.turns[-1].version += 1
        turn = Turn(turn_id=entry.id, number=len(idx.turns) + 1, directive=entry, position=pos)
        pending = self._pending_presentations.pop(entry.id, None)
        if pending:
            turn.presentations.extend(pending)
        card = self._pending_cards.pop(entry.id, None)
        if card is not None:
            turn.card = card
        if self._gen == Generation.G4 and self._pending_reading is not None:
            turn.reading = self._pending_reading
            self._pending_reading = None
        idx.turns.append(turn)
        idx.by_turn_id[entry.id] = turn

    def _add_intent(self, entry: Any) -> None:
        idx = self.index
        idx.latest_intent = entry
        visible = entry.payload.get("model_visible")
        if self._gen in MESSAGE_LEVEL and isinstance(visible, str):
            idx.latest_visible_intent_id = entry.id
            note = {"role": "user", "content": [{"type": "text", "text": f"<intent>\n{visible}\n</intent>"}]}
            idx.g1_items.append(G1Item(entry.id, note, is_intent=True))
        if self._gen not in TURN_BASED:
            return
        reading = reading_key(entry.payload.get("reading"))
        target = None
        if self._gen == Generation.G4:
            # G4 attaches the reading to the turn the intent belongs to (spec §7.2); `at_turn` names it
            # when present, otherwise the next directive (the intent is written before it).
            at_turn = getattr(entry, "at_turn", None)
            target = idx.by_turn_id.get(at_turn) if at_turn else None
            if target is None:
                self._pending_reading = reading
                return
        elif idx.turns:
            target = idx.turns[-1]
        if target is not None:
            target.reading = reading
            target.version += 1

    def _add_compaction(self, entry: Any, pos: int) -> None:
        # vak reads only its own compaction shape (spec §4.3): shape A (first_kept_entry_id) in
        # G1/G2, shape B (turn range) in G3/G4; the other shape fails to parse there and is skipped.
        # The port does the same, except that a reset (reset_all) is honoured in either shape.
        idx = self.index
        p = entry.payload
        summary = p.get("summary")
        summary = summary if isinstance(summary, str) else ""
        reset = p.get("reset_all") is True
        gen = self._gen
        if gen in MESSAGE_LEVEL:
            items = idx.g1_items
            if reset:
                items.clear()
            elif "first_kept_entry_id" in p:
                keep = p.get("first_kept_entry_id")
                cut = next((i for i, it in enumerate(items) if it.entry_id == keep), len(items))
                del items[:cut]
            else:
                return  # a shape-B line does not parse under G1
            note = {
                "role": "user",
                "content": [{"type": "text", "text": f"<context_summary>\n{summary}\n</context_summary>"}],
            }
            items.insert(0, G1Item(entry.id, note, is_summary=True))
            return
        if reset:
            idx.reset_position = pos
            idx.reset_summary = summary
            idx.boundary_position = pos
            idx.boundary_summary = summary
            open_turn = idx.open_turn
            keep_open = gen == Generation.G4 and p.get("keeps_open_turn") is True
            for turn in idx.turns:
                if keep_open and turn is open_turn:
                    continue
                if not turn.behind_reset:
                    turn.behind_reset = True
                    turn.version += 1
            return
        if gen == Generation.G2:
            if "first_kept_entry_id" in p:
                idx.boundary_position = idx.positions.get(str(p.get("first_kept_entry_id")), 0)
                idx.boundary_summary = summary
            return
        if "first_turn_id" in p:
            idx.packets.append(
                Packet(
                    first_turn_id=str(p.get("first_turn_id", "")),
                    last_turn_id=str(p.get("last_turn_id", "")),
                    model=str(p.get("model", "")),
                    summary=summary,
                    entry_id=entry.id,
                    position=pos,
                )
            )

    def _add_presentation(self, entry: Any) -> None:
        turn_id = entry.payload.get("turn_id")
        if not isinstance(turn_id, str):
            return
        turn = self.index.by_turn_id.get(turn_id)
        if turn is None:
            self._pending_presentations.setdefault(turn_id, []).append(entry)
            return
        turn.presentations.append(entry)
        turn.version += 1

    def _add_card(self, entry: Any) -> None:
        turn_id = entry.payload.get("turn_id")
        card = entry.payload.get("card")
        if not isinstance(turn_id, str) or not isinstance(card, dict):
            return
        turn = self.index.by_turn_id.get(turn_id)
        if turn is None:
            self._pending_cards[turn_id] = card
            return
        turn.card = card
        turn.version += 1
