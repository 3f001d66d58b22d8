"""serde_json-compatible compact JSON encoding (spec ledger.md §2.5).

vak writes every ledger line with ``serde_json::to_string``. Re-serializing a value parsed from such a
line must give back the same bytes, so this module reproduces serde_json's choices exactly:

- strings: only ``"``, ``\\`` and U+0000–U+001F are escaped (``\\b \\f \\n \\r \\t`` short forms,
  the rest as ``\\u00XX`` with lowercase hex); non-ASCII, U+2028/U+2029, DEL and ``/`` are raw;
- floats: the shortest round-trip digits laid out like the ``ryu`` crate (``1e16``, ``1.5e300``,
  ``1e-7``, ``0.00001``, ``-0.0``, ``100.0``); NaN and infinities become ``null``;
- objects keep the order of the mapping they come from (struct field order on the vak side);
- no whitespace anywhere.

:func:`dumps_exact` is the reference encoder. :func:`dumps` is the fast path: orjson produces the same
bytes as serde_json for everything tested except floats with a positive exponent (``1e+16``) and
integers outside the 64-bit range, so its output is used unless it contains ``e+`` (which can only
come from such a float or from string text, both rare) or orjson refuses the value.
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["dumps", "dumps_exact", "format_float", "escape_str"]

_ESCAPES = {i: f"\\u{i:04x}" for i in range(0x20)}
_ESCAPES.update({0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"})
_ESCAPES[ord('"')] = '\\"'
_ESCAPES[ord("\\")] = "\\\\"
_NEEDS_ESCAPE = frozenset(_ESCAPES)


def escape_str(s: str) -> str:
    """Return ``s`` as a quoted JSON string, escaped exactly like serde_json."""
    if any(ord(c) in _NEEDS_ESCAPE for c in s):
        s = s.translate(_ESCAPES)
    return f'"{s}"'


def format_float(x: float) -> str:
    """Format a float like serde_json (ryu's layout of the shortest round-trip digits)."""
    if x != x or x in (float("inf"), float("-inf")):
        return "null"
    r = repr(x)  # shortest round-trip digits, same digit choice as ryu
    sign = ""
    if r[0] == "-":
        sign, r = "-", r[1:]
    mant, _, exp_s = r.partition("e")
    exp = int(exp_s) if exp_s else 0
    int_part, _, frac_part = mant.partition(".")
    digits = (int_part + frac_part).lstrip("0")
    if not digits:
        return sign + "0.0"
    k = exp - len(frac_part)  # value = int(digits) * 10**k
    stripped = digits.rstrip("0")
    k += len(digits) - len(stripped)
    digits = stripped
    n = len(digits)
    kk = n + k  # value = 0.digits * 10**kk
    if 0 <= k and kk <= 16:
        return sign + digits + "0" * k + ".0"
    if 0 < kk <= 16:
        return sign + digits[:kk] + "." + digits[kk:]
    if -5 < kk <= 0:
        return sign + "0." + "0" * (-kk) + digits
    e = kk - 1
    if n == 1:
        return f"{sign}{digits}e{e}"
    return f"{sign}{digits[0]}.{digits[1:]}e{e}"


def _scalar(v: Any) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return escape_str(v)
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return format_float(v)
    raise TypeError(f"value of type {type(v).__name__} is not JSON serializable")


def _encode(value: Any, out: list[str]) -> None:
    """Encode with an explicit stack (no recursion: a document nested deeper than Python's
    recursion limit still encodes; vak's own reader bounds depth, vakaudit's never crashes on it)."""
    # stack items: ("v", value) to encode a value, or ("s", text) to emit text
    stack: list[tuple[str, Any]] = [("v", value)]
    while stack:
        tag, v = stack.pop()
        if tag == "s":
            out.append(v)
        elif isinstance(v, dict):
            if not v:
                out.append("{}")
                continue
            out.append("{")
            todo: list[tuple[str, Any]] = []
            for n, (k, item) in enumerate(v.items()):
                if not isinstance(k, str):
                    raise TypeError(f"JSON object keys must be strings, not {type(k).__name__}")
                todo.append(("s", ("," if n else "") + escape_str(k) + ":"))
                todo.append(("v", item))
            todo.append(("s", "}"))
            stack.extend(reversed(todo))
        elif isinstance(v, list | tuple):
            if not v:
                out.append("[]")
                continue
            out.append("[")
            todo = []
            for n, item in enumerate(v):
                if n:
                    todo.append(("s", ","))
                todo.append(("v", item))
            todo.append(("s", "]"))
            stack.extend(reversed(todo))
        else:
            out.append(_scalar(v))


def dumps_exact(value: Any) -> bytes:
    """Reference serde_json-compatible encoder (pure Python)."""
    out: list[str] = []
    _encode(value, out)
    return "".join(out).encode("utf-8")


def dumps(value: Any) -> bytes:
    """serde_json-compatible compact encoding, via orjson when that is byte-identical."""
    try:
        b = orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return dumps_exact(value)
    if b"e+" in b:
        return dumps_exact(value)
    return b
