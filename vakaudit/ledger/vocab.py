"""The vocabulary of a vak session ledger, defined once: its entry kinds and its turns.

What a *directive* is (the user message that opens a turn, replay.md §6.1, §13), which entries are
*prep* entries (written before the directive of the turn they prepare and numbered with it), and
how entries are numbered into turns in file order. The scan's ``entries`` rows
(:mod:`vakaudit.artifacts.session_ledger`, and the compiled scanner, which is handed
:data:`PREP_KINDS` as data on every call), the turn index (:mod:`vakaudit.ledger.turns`), the
projection and replay all read these definitions; none keeps its own copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

__all__ = [
    "EntryKind",
    "KNOWN_KINDS",
    "PREP_KINDS",
    "PREP_FOLLOWER_KIND",
    "HEADER_KIND",
    "DIRECTIVE_KIND",
    "DIRECTIVE_ROLE",
    "TEXT_BLOCK",
    "RESULT_BLOCK",
    "KERNEL_VOCAB",
    "directive_rule",
    "is_directive_message",
    "is_directive",
    "payload_directive",
    "turn_step",
    "at_turn_attribution",
]


class EntryKind(StrEnum):
    """Envelope ``kind`` values of the single-file JSONL era (§2.3)."""

    HEADER = "header"
    MESSAGE = "message"
    COMPACTION = "compaction"
    RECEIPT = "receipt"
    GOAL = "goal"
    GOAL_UPDATE = "goal_update"
    ACTIVITY = "activity"
    WORK = "work"
    INTENT = "intent"
    CHILD_RUN = "child_run"
    TURN_CAPABILITIES_BOUND = "turn_capabilities_bound"
    PRESENTATION = "presentation"  # G2+
    TURN_CARD = "turn_card"  # G2+
    EVIDENCE_BODY = "evidence_body"  # G3+
    TURN_CAPABILITIES_REF = "turn_capabilities_ref"  # G4
    CONTEXT_SELECTION = "context_selection"  # G4


KNOWN_KINDS: frozenset[str] = frozenset(k.value for k in EntryKind)

_K = EntryKind

#: Entries written before the directive of the turn they prepare (write-paths: goal update, intent,
#: capability binding come before the user message). They carry the turn number of that next turn.
PREP_KINDS: frozenset[str] = frozenset(
    {_K.TURN_CAPABILITIES_BOUND.value, _K.TURN_CAPABILITIES_REF.value, _K.GOAL_UPDATE.value, _K.CONTEXT_SELECTION.value}
)
#: an ``intent`` is a prep entry when it follows a prep entry (else it belongs to the open turn)
PREP_FOLLOWER_KIND = _K.INTENT.value
#: the session header belongs to no turn
HEADER_KIND = _K.HEADER.value
#: a directive is a message entry ...
DIRECTIVE_KIND = _K.MESSAGE.value
#: ... of this role ...
DIRECTIVE_ROLE = "user"
#: ... with a content block of this type ...
TEXT_BLOCK = "text"
#: ... and none of this one
RESULT_BLOCK = "tool_result"
#: the turn vocabulary as the compiled kernel takes it on every call (vakaudit/_native/ledger_rows.c,
#: ``Vocab``): it keeps no copy of these words
KERNEL_VOCAB = (PREP_KINDS, HEADER_KIND, PREP_FOLLOWER_KIND, DIRECTIVE_KIND, DIRECTIVE_ROLE, TEXT_BLOCK, RESULT_BLOCK)


def directive_rule(role: Any, control: bool, has_text: bool, has_tool_result: bool) -> bool:
    """The directive rule over a message's facts: a user-role message that is not a control message,
    with at least one text block and no tool_result block."""
    return role == DIRECTIVE_ROLE and not control and has_text and not has_tool_result


def _block_facts(message: Mapping[str, Any]) -> tuple[bool, bool]:
    """(has a text block, has a tool_result block) of a message's content list."""
    content = message.get("content")
    has_text = has_result = False
    if isinstance(content, list | tuple):
        for block in content:
            if isinstance(block, Mapping):
                t = block.get("type")
                if t == TEXT_BLOCK:
                    has_text = True
                elif t == RESULT_BLOCK:
                    has_result = True
    return has_text, has_result


def is_directive_message(message: Mapping[str, Any], control: bool = False) -> bool:
    """:func:`directive_rule` of a neutral message (``control``: the entry carries a control tag)."""
    has_text, has_result = _block_facts(message)
    return directive_rule(message.get("role"), control, has_text, has_result)


def payload_directive(kind: str, payload: Mapping[str, Any]) -> bool | None:
    """:func:`directive_rule` of an entry's kind and decoded payload: None for an entry that is no
    ``message``; else whether it is a directive (its ``meta.control`` absent or null)."""
    if kind != DIRECTIVE_KIND:
        return None
    msg = payload.get("message")
    if not isinstance(msg, Mapping):
        return False
    meta = payload.get("meta")
    control = isinstance(meta, Mapping) and meta.get("control") is not None
    return is_directive_message(msg, control)


def is_directive(entry: Any) -> bool:
    """:func:`directive_rule` of a parsed ledger entry (``kind``, ``payload``)."""
    return bool(payload_directive(entry.kind, entry.payload)) if entry.kind == DIRECTIVE_KIND else False


def turn_step(
    turn_no: int, turn_id: str | None, in_prep: bool, kind: str, directive: bool | None, ident: str
) -> tuple[int, str | None, bool, int | None, str | None]:
    """One entry of the file-order turn numbering.

    From the numbering state (turn_no of the last directive, its id, whether the previous entry was
    a prep entry) and an entry (kind, directive flag, id): the new state and the entry's
    (turn_no, turn_id). A directive opens the next turn; a prep entry (and an intent after one)
    carries the number of the turn it prepares and no turn id; the header has no turn; any other
    entry belongs to the open turn (no number before the first directive).
    """
    if directive:
        return turn_no + 1, ident, False, turn_no + 1, ident
    if kind in PREP_KINDS or (kind == PREP_FOLLOWER_KIND and in_prep):
        return turn_no, turn_id, True, turn_no + 1, None
    if kind == HEADER_KIND:
        return turn_no, turn_id, in_prep, None, None
    return turn_no, turn_id, False, (turn_no or None), turn_id


def at_turn_attribution(ids: list[Any], directives: list[Any], turn_nos: list[Any], turn_ids: list[Any]) -> list[Any]:
    """Turn numbers of one ledger's entries (in file order) corrected by the envelope's ``at_turn``
    (baseline7.md §8.1, G4: "the directive entry id of the turn"; a directive may take an id
    reserved by ``begin_turn``, so entries naming it may come before or after it). The line reader
    already sets ``turn_id`` to ``at_turn`` wherever it is written; an entry whose ``turn_id`` is the
    id of a directive of the ledger takes that directive's turn number. Every other entry keeps the
    file-order numbering of :func:`turn_step` (where no ``at_turn`` is written the two agree)."""
    turn_of = {i: n for i, d, n in zip(ids, directives, turn_nos, strict=True) if d and i is not None}
    return [turn_of.get(t, n) if t is not None else n for t, n in zip(turn_ids, turn_nos, strict=True)]
