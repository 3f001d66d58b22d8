"""The JSON types of the payload fields vakaudit's derivations read, checked once per entry.

vak writes these fields with one type each (its serde structs); a hand edit or a foreign writer can put
any JSON value there. :func:`payload_type_error` names the first field of the wrong type, so a reader
that derives from payloads (replay: turns, messages, receipts) reports the line instead of failing
inside the derivation. Fields that are absent or null are not checked here. No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["payload_type_error"]

_STR = (str,)
_MAP = (dict,)
_LIST = (list,)
_INT = (int,)

#: per content-block field: the types it may have
_BLOCK_FIELDS: dict[str, tuple[type, ...]] = {
    "type": _STR,
    "text": _STR,
    "thinking": _STR,
    "signature": _STR,
    "id": _STR,
    "name": _STR,
    "tool_use_id": _STR,
    "content": (str, list),
    "is_error": (bool,),
}
#: per entry kind: top-level payload field -> the types it may have
_TOP_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "message": {"message": _MAP, "meta": _MAP},
    "activity": {"data": _MAP, "kind": _STR, "meta": _MAP},
    "receipt": {"attempts": _LIST, "winning_attempt": _INT, "usage": _MAP, "meta": _MAP},
    "header": {"contract": _MAP, "session_id": _STR},
    "intent": {"reading": _MAP},
    "turn_card": {"card": _MAP},
}
_CARD_FIELDS: dict[str, tuple[type, ...]] = {"answered": _MAP, "did": _LIST, "reading": _MAP}
_READING_FIELDS: dict[str, tuple[type, ...]] = {"act": _STR, "domains": _LIST, "input_modalities": _LIST,
                                                "output_modalities": _LIST}  # fmt: skip
_MESSAGE_FIELDS: dict[str, tuple[type, ...]] = {"role": _STR, "content": (str, list)}


def _name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    return {int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(type(value), "null")


def _check(
    obj: Mapping[str, Any], fields: Mapping[str, tuple[type, ...]], where: str, null_ok: bool = True
) -> str | None:
    for key, types in fields.items():
        value = obj.get(key)
        if value is None and (null_ok or key not in obj):
            continue
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
            want = " or ".join(_name(t()) for t in types)
            return f"{where}{key} is {_name(value)}, expected {want}"
    return None


def _each_object(items: Any, where: str) -> str | None:
    for i, item in enumerate(items or ()):
        if not isinstance(item, dict):
            return f"{where}[{i}] is {_name(item)}, expected object"
    return None


def _card_error(card: Any) -> str | None:
    if card is None:
        return None
    err = _check(card, _CARD_FIELDS, "card.") or _each_object(card.get("did"), "card.did")
    if err:
        return err
    answered = card.get("answered") or {}
    err = _check(answered, {"presentations": _LIST}, "card.answered.")
    err = err or _each_object(answered.get("presentations"), "card.answered.presentations")
    reading = card.get("reading")
    return err or (_check(reading, _READING_FIELDS, "card.reading.") if reading is not None else None)


def payload_type_error(kind: str, payload: Any) -> str | None:
    """The first payload field of an entry of ``kind`` whose JSON type vak never writes there, as
    ``"message.content[0].text is number, expected string"``; None when every checked field fits."""
    if not isinstance(payload, Mapping):
        return f"the payload is {_name(payload)}, expected object"
    err = _check(payload, _TOP_FIELDS.get(kind, {}), "")
    if err or kind not in ("message", "receipt", "intent", "turn_card"):
        return err
    if kind == "turn_card":
        return _card_error(payload.get("card"))
    if kind == "intent":
        reading = payload.get("reading")
        return _check(reading, _READING_FIELDS, "reading.") if reading is not None else None
    if kind == "receipt":
        for i, attempt in enumerate(payload.get("attempts") or ()):
            if not isinstance(attempt, dict):
                return f"attempts[{i}] is {_name(attempt)}, expected object"
            err = _check(attempt, {"usage": _MAP}, f"attempts[{i}].")
            if err:
                return err
        return None
    msg = payload.get("message")
    if msg is None:
        return None
    err = _check(msg, _MESSAGE_FIELDS, "message.")
    if err or not isinstance(msg.get("content"), list):
        return err
    for i, block in enumerate(msg["content"]):
        if not isinstance(block, dict):
            return f"message.content[{i}] is {_name(block)}, expected object"
        err = _check(block, _BLOCK_FIELDS, f"message.content[{i}].", null_ok=False)
        if err:
            return err
    return None
