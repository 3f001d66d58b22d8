"""How deeply a JSON text nests, cheaply: vak's reader (serde_json) cannot decode a line deeper
than its recursion limit and skips it, so the verdict reports such lines (``deep_json``) without
decoding them. No I/O here.
"""

from __future__ import annotations

import re
from array import array
from itertools import accumulate

__all__ = ["MAX_JSON_DEPTH", "REST_MIN_BYTES", "attested_depth", "json_depth"]

#: serde_json's default recursion limit: vak's reader cannot decode a deeper line and skips it.
MAX_JSON_DEPTH = 128
# Bracket bytes -> +1 / -1 (as signed bytes); everything but brackets and quotes deleted first.
_DEPTH_TABLE = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_ONE_BRACKET = bytes.maketrans(b"{}", b"[]")
_DEPTH_CACHE: dict[bytes, int] = {}  # bracket-and-quote skeleton (no escapes) -> depth
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')
_ESCAPED_QUOTE_OR_BACKSLASH = re.compile(rb'\\["\\]')


def json_depth(raw: bytes) -> int:
    """Maximum nesting depth of the JSON text ``raw`` (brackets inside strings do not count).

    Exact when the depth exceeds :data:`MAX_JSON_DEPTH` (or the brackets do not balance); below it
    the result may be any figure up to the limit. Cheap: everything but brackets and quotes is
    deleted in one C pass, and a line with at most the limit's count of brackets returns at once.
    """
    red = raw.translate(None, _NOT_STRUCTURE)
    if len(red) - red.count(b'"') <= MAX_JSON_DEPTH:
        return min(len(red), MAX_JSON_DEPTH)  # too few brackets to exceed the limit
    cacheable = _ESCAPED_QUOTE_OR_BACKSLASH.search(raw) is None
    if cacheable:  # without escapes the depth is a function of the skeleton alone
        known = _DEPTH_CACHE.get(red)
        if known is not None:
            return known
        key = red
    else:  # \\ before \" : "a\\" ends its string
        red = _ESCAPED_QUOTE_OR_BACKSLASH.sub(b"", raw).translate(None, _NOT_STRUCTURE)
    # an adjacent quote pair is an empty string or the boundary of two strings: dropping it keeps
    # every other character's inside/outside-a-string status
    red = red.replace(b'""', b"")
    if b'"' in red:
        red = b"".join(red.split(b'"')[::2])
    flat = red.translate(_ONE_BRACKET)  # depth does not depend on the bracket type
    # peel the innermost pairs one level per pass (C passes; real JSON is shallow) ...
    depth = None
    for level in range(MAX_JSON_DEPTH + 1):
        if not flat:
            depth = level
            break
        flat = flat.replace(b"[]", b"")
    if depth is None:  # ... and count exactly when it is deeper than the limit (or not balanced)
        depth = max(accumulate(array("b", red.translate(_DEPTH_TABLE))), default=0)
    if cacheable:  # capability bindings repeat their tool schemas turn after turn
        if len(_DEPTH_CACHE) >= 512:
            _DEPTH_CACHE.clear()
        _DEPTH_CACHE[key] = depth
    return depth


# probe of a line's bytes after its envelope -> (those bytes, depth)
_REST_DEPTH: dict[tuple, tuple[bytes, int]] = {}
REST_MIN_BYTES = 4096
_REST_MAX = 1 << 20  # the cache keeps at most 64 tails of at most this size
_PROBE = 64


def attested_depth(raw: bytes, start: int) -> int:
    """:func:`json_depth` of a line whose envelope the anchored expression matched; ``start`` is the
    offset of the ``,`` or ``}`` right after the kind value.

    That envelope holds strings without quotes or backslashes and leaves the parser at depth 1 outside
    any string before ``start``, so the depth is a function of ``raw[start:]`` alone. Capability bindings repeat that
    part byte for byte turn after turn: a repeat is recognized by a comparison of bytes (memcmp
    speed) instead of another bracket scan. A small probe picks the candidate; equality decides.
    """
    n = len(raw) - start
    if n < REST_MIN_BYTES or n > _REST_MAX:
        return json_depth(raw)
    mid = start + n // 2
    probe = (n, raw[start : start + _PROBE], raw[mid : mid + _PROBE], raw[-_PROBE:])
    rest = raw[start:]
    hit = _REST_DEPTH.get(probe)
    if hit is not None and hit[0] == rest:
        return hit[1]
    depth = json_depth(raw)
    if len(_REST_DEPTH) >= 64:
        _REST_DEPTH.clear()
    _REST_DEPTH[probe] = (rest, depth)
    return depth
