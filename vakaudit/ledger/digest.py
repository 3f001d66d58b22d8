"""Evidence digests, trace lines and card lines (spec ledger.md §7.3, §7.4).

These are the texts vak puts in place of a closed turn's tool results and the one-line `<turns>`
rendering of a turn card. Everything here is pure string work on values already read from a ledger:
no I/O, no entry parsing.

Rust string semantics matter for byte-exact output and are reproduced on purpose:
``str::trim``/``split_whitespace`` use the Unicode White_Space set (Python's ``str.strip`` would also
strip U+001C..U+001F), ``str::lines`` splits on LF and drops one trailing CR per line and no final
empty line, ``to_ascii_lowercase`` folds ASCII only, and ``serde_json`` parses strictly (no NaN), maps
come back sorted by key (no ``preserve_order``), and an integer too large for 64 bits becomes a float.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import vakaudit.ledger.jsonenc as jsonenc

__all__ = [
    "RUST_WHITESPACE",
    "args_digest",
    "build_card",
    "canonical",
    "card_index_text",
    "card_line",
    "evidence_digest",
    "evidence_shape",
    "evidence_tag",
    "first_sentence",
    "first_sentence_by_words",
    "parse_json_value",
    "payload_digest",
    "reading_key",
    "rust_lines",
    "rust_trim",
    "split_whitespace",
    "strip_duplicate_fences",
    "summarize_trace",
    "text_content",
    "truncate_utf8",
    "truncate_words",
]

# Rust `char::is_whitespace` (Unicode White_Space); Python's isspace() adds U+001C..U+001F.
RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_WS_RUN = re.compile("[" + re.escape(RUST_WHITESPACE) + "]+")
_WS_ANY = re.compile("[" + re.escape(RUST_WHITESPACE) + "]")
_SENTENCE_END = re.compile(r"[.!?](?=[ \n]|\Z)")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

ELLIPSIS = "\u2026"
ARROW = "\u2192"
TIMES = "\u00d7"
EM_DASH = "\u2014"


# -- Rust string helpers ---------------------------------------------------------------------------


def rust_trim(text: str) -> str:
    """``str::trim``: strip Unicode White_Space from both ends."""
    return text.strip(RUST_WHITESPACE)


def split_whitespace(text: str) -> list[str]:
    """``str::split_whitespace``."""
    return [w for w in _WS_RUN.split(text) if w]


def rust_lines(text: str) -> list[str]:
    """``str::lines``: split on LF, drop one trailing CR per line, no trailing empty line."""
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def truncate_utf8(text: str, max_bytes: int) -> str:
    """Cut ``text`` to at most ``max_bytes`` UTF-8 bytes, at the last character boundary.

    vak calls ``String::truncate(4_000)``, which panics when byte 4,000 is inside a character; the
    port cuts at the boundary before it instead (spec §7.1).
    """
    raw = text.encode("utf-8")
    if len(raw) <= max_bytes:
        return text
    return raw[:max_bytes].decode("utf-8", errors="ignore")


def text_content(message: Mapping[str, Any]) -> str:
    """vak-llm ``Message::text_content``: the text blocks joined by LF."""
    return "\n".join(
        b.get("text", "")
        for b in message.get("content") or ()
        if isinstance(b, dict) and b.get("type") == "text"
    )


# -- sentences and words ---------------------------------------------------------------------------


def first_sentence(text: str) -> str:
    """Text up to and including the first ``.``/``!``/``?`` followed by space, LF or the end.

    The text is trimmed first; without such punctuation the whole trimmed text is returned.
    """
    trimmed = rust_trim(text)
    m = _SENTENCE_END.search(trimmed)
    return trimmed[: m.end()] if m else trimmed


def truncate_words(text: str, max_words: int) -> str:
    """At most ``max_words`` words; when cut, the words joined by one space plus ``…``."""
    words = split_whitespace(text)
    if len(words) <= max_words:
        return rust_trim(text)
    return " ".join(words[:max_words]) + ELLIPSIS


def first_sentence_by_words(text: str, max_words: int) -> str:
    """The trimmed text when it has at most ``max_words`` words, else its first sentence."""
    trimmed = rust_trim(text)
    if len(split_whitespace(trimmed)) <= max_words:
        return trimmed
    return first_sentence(trimmed)


# -- serde_json-like parsing -----------------------------------------------------------------------

_U64_MAX = 2**64 - 1
_I64_MIN = -(2**63)


class _NotJson(ValueError):
    pass


def _parse_constant(name: str) -> Any:
    raise _NotJson(name)


def _parse_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _NotJson("number out of range")
    return value


def _parse_int(text: str) -> int | float:
    value = int(text)
    if _I64_MIN <= value <= _U64_MAX:
        return value
    return _parse_float(text)  # serde_json falls back to f64 for integers beyond 64 bits


def _sorted_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for key, value in pairs:  # a repeated key keeps its last value, like a BTreeMap insert
        merged[key] = value
    return {k: merged[k] for k in sorted(merged)}


_DECODER = json.JSONDecoder(
    object_pairs_hook=_sorted_object,
    parse_constant=_parse_constant,
    parse_float=_parse_float,
    parse_int=_parse_int,
)
_JSON_START = frozenset('{["-0123456789tfn')


def parse_json_value(text: str) -> tuple[bool, Any]:
    """``serde_json::from_str::<Value>``: ``(True, value)`` or ``(False, None)``.

    Objects come back with keys sorted (serde_json's map without ``preserve_order``).
    """
    stripped = text.strip(" \t\n\r")  # JSON whitespace only
    if not stripped or stripped[0] not in _JSON_START:
        return False, None
    try:
        value, end = _DECODER.raw_decode(stripped)
    except (ValueError, RecursionError):
        return False, None
    if end != len(stripped):
        return False, None
    if "\\u" in stripped:
        try:  # serde_json refuses lone surrogates; Python's decoder lets them through
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return False, None
    return True, value


def canonical(value: Any) -> Any:
    """``value`` with every object's keys sorted, recursively: the canonical form a digest encodes
    (§4.12)."""
    if isinstance(value, dict):
        return {k: canonical(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


def payload_digest(payload: Any) -> str:
    """SHA-256 hex of the compact encoding of the canonical (recursively key-sorted) value (§4.12)."""
    return hashlib.sha256(jsonenc.dumps(canonical(payload))).hexdigest()


# -- evidence digests (§7.4) -----------------------------------------------------------------------


def evidence_tag(tool_use_id: str, content: str) -> str:
    """``[evidence:{id} — {chars} chars; call recall to expand]`` (chars = Unicode scalar values)."""
    return f"[evidence:{tool_use_id} {EM_DASH} {len(content)} chars; call recall to expand]"


def _is_link_like(value: Any) -> bool:
    return isinstance(value, dict) and ("url" in value or "title" in value)


def _str_or_empty(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _array_digest(items: list[Any]) -> str:
    if items and all(_is_link_like(i) for i in items):
        out = [f"{len(items)} results:"]
        for item in items:
            out.append(f"- {_str_or_empty(item.get('title'))} ({_str_or_empty(item.get('url'))})")
        return rust_trim("\n".join(out))
    text = f"array, {len(items)} items"
    if items:
        text += "; first: " + jsonenc.dumps(items[0]).decode("utf-8")
    return text


def _object_digest(obj: dict[str, Any]) -> str:
    lines = ["object, keys: " + ", ".join(obj)]
    for key, value in obj.items():
        if isinstance(value, list):
            if value and all(_is_link_like(i) for i in value):
                lines.append(f"{key}: {_array_digest(value)}")
            else:
                lines.append(f"{key}: array[{len(value)}]")
    return "\n".join(lines)


def _json_digest(value: Any) -> str:
    if isinstance(value, list):
        return _array_digest(value)
    if isinstance(value, dict):
        return _object_digest(value)
    return jsonenc.dumps(value).decode("utf-8")


def _text_digest(content: str) -> str:
    lines = rust_lines(content)
    headings = [s for s in (line.lstrip(RUST_WHITESPACE) for line in lines) if s.startswith("#")]
    opening = ""
    for paragraph in content.split("\n\n"):
        paragraph = rust_trim(paragraph)
        if paragraph and not paragraph.startswith("#"):
            # only the first prose paragraph is considered; a blob with no whitespace has no opening
            if _WS_ANY.search(paragraph):
                opening = truncate_words(first_sentence(paragraph), 60)
            break
    out = ""
    if headings:
        out += "headings: " + " | ".join(headings) + "\n"
    if opening:
        out += opening + "\n"
    return out + f"({len(lines)} lines, {len(content.encode('utf-8'))} bytes)"


def _exit_line(lines: Iterable[str]) -> str | None:
    for line in lines:
        if "exit code" in line.translate(_ASCII_LOWER):
            return line
    return None


def _bash_digest(content: str) -> str:
    lines = rust_lines(content)
    out = ""
    exit_line = _exit_line(lines)
    if exit_line is not None:
        out += exit_line + "\n"
    if len(lines) <= 20:
        out += "\n".join(lines)
    else:
        out += "\n".join(lines[:10]) + "\n...\n" + "\n".join(lines[-10:])
    return out


def evidence_digest(tool_use_id: str, tool: str, content: str, is_error: bool = False) -> str:
    """The shape-driven digest of one tool result followed by LF and the evidence tag (§7.4)."""
    tag = evidence_tag(tool_use_id, content)
    if is_error:
        return f"{content}\n{tag}"
    if tool == "bash":
        body = _bash_digest(content)
    else:
        ok, value = parse_json_value(content)
        body = _json_digest(value) if ok else _text_digest(content)
    return f"{body}\n{tag}"


def evidence_shape(tool: str, content: str, is_error: bool = False) -> str:
    """The short ``shape`` of a trace line (§7.4)."""
    chars = len(content)
    if is_error:
        return "error"
    if tool == "bash":
        exit_line = _exit_line(rust_lines(content))
        if exit_line is not None:
            return f"{rust_trim(exit_line)}, {chars} chars"
        return f"{chars} chars"
    ok, value = parse_json_value(content)
    if ok:
        if isinstance(value, list):
            if value and all(_is_link_like(i) for i in value):
                return f"{len(value)} results, {chars} chars"
            return f"array[{len(value)}], {chars} chars"
        if isinstance(value, dict):
            return f"{len(value)} keys, {chars} chars"
        return f"{chars} chars"
    return f"{len(rust_lines(content))} lines, {chars} chars"


def _shorten_strings(value: Any) -> Any:
    if isinstance(value, str):
        return first_sentence(value)
    if isinstance(value, list):
        return [_shorten_strings(v) for v in value]
    if isinstance(value, dict):
        return {k: _shorten_strings(v) for k, v in value.items()}
    return value


def args_digest(tool: str, tool_input: Any) -> Any:
    """Trace-line ``args_digest``: the input unchanged for bash/edit/write, else strings cut to one sentence."""
    if tool in ("bash", "edit", "write"):
        return tool_input
    return _shorten_strings(tool_input)


# -- duplicate fences (§7.3) -----------------------------------------------------------------------


def strip_duplicate_fences(narration: str, known_digests: Iterable[str]) -> str:
    """Drop every ```` ```vak ```` (or ``~~~vak``) fence whose ``payload`` digest is already presented.

    Returns the text rebuilt line by line, each line followed by LF (the caller trims).
    """
    known = set(known_digests)
    out: list[str] = []
    lines = rust_lines(narration)
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        trimmed = line.lstrip(RUST_WHITESPACE)
        opens = (trimmed.startswith("```") or trimmed.startswith("~~~")) and rust_trim(trimmed[3:]) == "vak"
        if not opens:
            out.append(line + "\n")
            continue
        marker = trimmed[:3]
        body_parts: list[str] = []
        closed = False
        while i < len(lines):
            inner = lines[i]
            i += 1
            if inner.lstrip(RUST_WHITESPACE).startswith(marker):
                closed = True
                break
            body_parts.append(inner + "\n")
        body = "".join(body_parts)
        duplicate = False
        if known:
            ok, value = parse_json_value(body)
            if ok and isinstance(value, dict) and "payload" in value:
                duplicate = payload_digest(value["payload"]) in known
        if not duplicate:
            out.append(line + "\n")
            out.append(body)
            if closed:
                out.append(marker + "\n")
    return "".join(out)


# -- cards (§7.3) ----------------------------------------------------------------------------------


def reading_key(reading: Mapping[str, Any] | None) -> dict[str, Any]:
    """vak's ``ReadingKey`` from an intent ``reading``: act, domains, sorted unique modalities."""
    if not isinstance(reading, Mapping):
        return {"act": "", "domains": [], "modalities": []}
    modalities = sorted(
        {
            m
            for key in ("input_modalities", "output_modalities")
            for m in (reading.get(key) or ())
            if isinstance(m, str)
        }
    )
    act = reading.get("act")
    return {
        "act": act if isinstance(act, str) else "",
        "domains": [d for d in reading.get("domains") or () if isinstance(d, str)],
        "modalities": modalities,
    }


def summarize_trace(did: Sequence[Mapping[str, Any]]) -> str:
    """``nothing`` or tool names in first-seen order, ``×n`` when a tool ran more than once."""
    if not did:
        return "nothing"
    counts: dict[str, int] = {}
    for trace in did:
        tool = str(trace.get("tool", ""))
        counts[tool] = counts.get(tool, 0) + 1
    return ", ".join(name if n == 1 else f"{name}{TIMES}{n}" for name, n in counts.items())


def card_line(card: Mapping[str, Any], number: int) -> str:
    """``#{n} asked: {asked} → did: {did} → {outcome}`` (§7.3)."""
    did = card.get("did") or []
    answered = card.get("answered") or {}
    presentations = answered.get("presentations") or []
    if presentations:
        first = presentations[0]
        ev_ids = [str(t.get("evidence_id", "")) for t in did]
        ev = f"; ev:{','.join(ev_ids)}" if ev_ids else ""
        outcome = (
            f'{first.get("semantic_type", "")} "{first.get("title", "")}" [pres:{first.get("id", "")}{ev}]'
        )
    else:
        outcome = '"' + truncate_words(str(answered.get("narration", "")), 12) + '"'
    return f"#{number} asked: {card.get('asked', '')} {ARROW} did: {summarize_trace(did)} {ARROW} {outcome}"


def card_index_text(card: Mapping[str, Any]) -> str:
    """The text BM25 indexes a card by (§7.4): asked, presentations, narration, trace, reading."""
    answered = card.get("answered") or {}
    parts = [str(card.get("asked", ""))]
    for pres in answered.get("presentations") or []:
        parts.append(str(pres.get("title", "")))
        parts.append(str(pres.get("digest", "")))
    parts.append(str(answered.get("narration", "")))
    for trace in card.get("did") or []:
        parts.append(str(trace.get("tool", "")))
        parts.append(jsonenc.dumps(canonical(trace.get("args_digest"))).decode("utf-8"))
    reading = card.get("reading") or {}
    parts.append(str(reading.get("act", "")))
    parts.extend(str(d) for d in reading.get("domains") or [])
    return " ".join(parts)


def build_card(
    *,
    turn_id: str,
    asked_text: str,
    did: list[dict[str, Any]],
    presentations: Sequence[tuple[str, Mapping[str, Any]]],
    narration: str,
    outcome: str,
    reading: Mapping[str, Any] | None,
    full_text: str = "",
    estimate_tokens: Callable[[str], int] | None = None,
) -> dict[str, Any]:
    """A turn card in the ledger's ``turn_card.card`` shape (§4.13), e.g. a provisional one.

    ``presentations`` are ``(presentation entry id, presentation payload)`` pairs. Token counts are
    ``estimate_tokens(full_text)`` and ``estimate_tokens(index text)``; 0 without an estimator (vak
    renders provisional cards with a zero estimator).
    """
    card: dict[str, Any] = {
        "turn_id": turn_id,
        "asked": first_sentence_by_words(asked_text, 60),
        "did": did,
        "answered": {
            "presentations": [
                {
                    "id": pres_id,
                    "semantic_type": p.get("semantic_type", ""),
                    "title": p.get("title", ""),
                    "digest": p.get("identity_digest", ""),
                    "derived_from": list(p.get("derived_from") or []),
                }
                for pres_id, p in presentations
            ],
            "narration": narration,
        },
        "outcome": outcome,
        "reading": dict(reading) if reading else reading_key(None),
        "tokens_full": 0,
        "tokens_card": 0,
    }
    if estimate_tokens is not None:
        card["tokens_full"] = int(estimate_tokens(full_text))
        card["tokens_card"] = int(estimate_tokens(card_index_text(card)))
    return card
