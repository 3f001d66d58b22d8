"""The ``entry_fields`` accounting of a ledger line: the bytes of each top-level payload member after
the envelope's ``kind``, exactly as written (``,"key":value``). A fast path re-encodes each value
(vak's writer is serde_json-compatible) and checks every boundary against the raw bytes; the
tokenizer is the reference it falls back to. No I/O here.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

__all__ = ["field_sizes", "kind_end"]


_TOK = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]]', re.DOTALL)


def _split_fields_slow(raw: bytes) -> list[tuple[str, int]] | None:
    """(key, bytes) of every top-level member after the envelope's ``kind``, by tokenizing the line.

    A member's bytes run from the comma before its key to the end of its value.
    """
    depth = 0
    starts: list[tuple[bytes, int]] = []
    n = len(raw)
    for m in _TOK.finditer(raw):
        c = raw[m.start()]
        if c == 0x22:  # '"'
            if depth == 1 and m.end() < n and raw[m.end()] == 0x3A:  # ':'
                starts.append((m.group(), m.start() - 1))
        elif c in (0x7B, 0x5B):
            depth += 1
        else:
            depth -= 1
    if depth != 0 or not starts:
        return None
    out: list[tuple[str, int]] = []
    seen_kind = False
    end = n - 1
    for i, (key, start) in enumerate(starts):
        stop = starts[i + 1][1] if i + 1 < len(starts) else end
        if not seen_kind:
            if key == b'"kind"':
                seen_kind = True
            continue
        try:
            name = orjson.loads(key)
        except orjson.JSONDecodeError:
            return None
        out.append((name, stop - start))
    return out


_KIND_TAGS: dict[str, bytes] = {}


def kind_end(raw: bytes, kind: str) -> int:
    """Offset just after the envelope's ``"kind":"…"`` member, or -1.

    ``"kind":`` cannot occur inside a JSON string (its quote would be escaped) and the envelope keys
    before it are plain strings, so its first occurrence is the envelope tag.
    """
    i = raw.find(b'"kind":')
    if i < 0:
        return -1
    tag = _KIND_TAGS.get(kind)
    if tag is None:
        tag = orjson.dumps(kind)
        if len(_KIND_TAGS) < 1024:
            _KIND_TAGS[kind] = tag
    j = i + 7
    return j + len(tag) if raw.startswith(tag, j) else -1


_KEY_TOKENS: dict[str, bytes] = {}


def _key_token(key: str) -> bytes:
    tok = _KEY_TOKENS.get(key)
    if tok is None:
        tok = b"," + orjson.dumps(key) + b":"
        if len(_KEY_TOKENS) < 4096:
            _KEY_TOKENS[key] = tok
    return tok


def _value_len(value: Any) -> int:
    t = type(value)
    if t is int:
        return len(str(value))
    if value is None:
        return 4
    return len(orjson.dumps(value))


# per entry kind, the payload key that usually holds most of its bytes (learned from the first line
# of the kind): its size is taken as what the other members leave, instead of re-encoding it
_BIG_KEY: dict[str, str] = {}


def field_sizes(
    raw: bytes, payload: dict[str, Any], end_of_kind: int, kind: str | None = None
) -> list[tuple[str, int]] | None:
    """Bytes of each payload member of one parsed line, exactly as written (``,"key":value``).

    Fast path: the writer is serde_json-compatible, so re-encoding a value gives its exact length;
    every boundary is checked against the raw bytes (each member's ``,"key":`` token must sit exactly
    where the sizes before it put it, and the last member must end at the closing brace). The
    kind's usually-largest member is not re-encoded: its size is what the others leave, and the
    token checks on both sides of it hold it in place. Any mismatch (a work line's second ``kind``,
    a float written differently, spaces) falls back to tokenizing the line.
    """
    end = len(raw) - 1
    if end_of_kind > 0 and raw.endswith(b"}"):
        try:
            big = _BIG_KEY.get(kind) if kind is not None else None
            if big is not None and big in payload:
                out = _sizes_around(raw, payload, end_of_kind, end, big)
                if out is not None:
                    return out
            pos = end_of_kind
            out = []
            for key, value in payload.items():
                tok = _key_token(key)
                if not raw.startswith(tok, pos):
                    break
                size = len(tok) + _value_len(value)
                out.append((key, size))
                pos += size
            else:
                if pos == end:
                    if kind is not None and kind not in _BIG_KEY and out:
                        _BIG_KEY[kind] = max(out, key=lambda kv: kv[1])[0]
                    return out
        except (TypeError, orjson.JSONEncodeError):
            pass
    return _split_fields_slow(raw)


def _sizes_around(
    raw: bytes, payload: dict[str, Any], start: int, end: int, big: str
) -> list[tuple[str, int]] | None:
    out: list[tuple[str, int]] = []
    pos = start
    before = True
    tail: list[tuple[str, bytes, int]] = []
    tail_bytes = 0
    tokens = _KEY_TOKENS
    dumps = orjson.dumps
    for key, value in payload.items():
        if before and key == big:
            before = False
            continue
        tok = tokens.get(key) or _key_token(key)
        t = type(value)
        # the value's serde_json length (as _value_len)
        n = len(tok) + (len(str(value)) if t is int else 4 if value is None else len(dumps(value)))
        if before:
            if not raw.startswith(tok, pos):
                return None
            out.append((key, n))
            pos += n
        else:
            tail.append((key, tok, n))
            tail_bytes += n
    big_tok = tokens.get(big) or _key_token(big)
    big_size = end - pos - tail_bytes
    if big_size <= len(big_tok) or not raw.startswith(big_tok, pos):
        return None
    out.append((big, big_size))
    pos += big_size
    for key, tok, n in tail:
        if not raw.startswith(tok, pos):
            return None
        out.append((key, n))
        pos += n
    return out if pos == end else None


# vak's own timestamp form (chrono writes up to nanoseconds): with the digits past microseconds cut
# (datetime.fromisoformat truncates them too), Arrow's parser and fromisoformat agree on it
