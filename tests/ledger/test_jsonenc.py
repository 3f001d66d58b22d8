"""serde_json-compatible encoding (ledger.md §2.5), asserted against fixed vectors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vakaudit.ledger.jsonenc import dumps, dumps_exact, escape_str, format_float

VECTORS = Path(__file__).parent / "vectors"
FLOAT_CASES = json.loads((VECTORS / "floats.json").read_text())["cases"]


@pytest.mark.parametrize(("literal", "expected"), FLOAT_CASES)
def test_float_layout_matches_serde_json(literal: str, expected: str) -> None:
    value = float(literal)
    assert format_float(value) == expected
    assert dumps_exact(value) == expected.encode()
    assert dumps(value) == expected.encode()


def test_non_finite_floats_become_null() -> None:
    for v in (float("nan"), float("inf"), float("-inf")):
        assert dumps_exact(v) == b"null"
        assert dumps(v) == b"null"


def test_string_escaping_only_quote_backslash_and_c0() -> None:
    s = 'a"b\\c\x00\x01\x08\x09\x0a\x0b\x0c\x0d\x1f\x7f /é✓😀\u2028'
    expected = b'"a\\"b\\\\c\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u001f\x7f /' + "é✓😀\u2028".encode() + b'"'
    assert escape_str(s).encode() == expected
    assert dumps_exact(s) == expected
    assert dumps(s) == expected


def test_compact_layout_and_key_order_kept() -> None:
    value = {"z": [1, -2, True, False, None], "a": {"y": 1.0, "b": []}, "e": {}}
    expected = b'{"z":[1,-2,true,false,null],"a":{"y":1.0,"b":[]},"e":{}}'
    assert dumps_exact(value) == expected
    assert dumps(value) == expected


def test_integers_beyond_64_bits_use_the_exact_encoder() -> None:
    assert dumps(2**64) == b"18446744073709551616"
    assert dumps([2**64 - 1, -(2**63)]) == b"[18446744073709551615,-9223372036854775808]"
    assert dumps(9007199254740993) == b"9007199254740993"


def test_text_containing_e_plus_is_not_altered() -> None:
    # The fast path falls back to the exact encoder on any "e+"; the result must still be right.
    assert dumps({"t": "1e+5 and x e+y", "f": 1e16}) == b'{"t":"1e+5 and x e+y","f":1e16}'


def test_non_string_keys_are_refused() -> None:
    with pytest.raises(TypeError):
        dumps_exact({1: 2})
    with pytest.raises(TypeError):
        dumps({1: 2})


def test_the_reference_encoder_takes_nesting_deeper_than_the_recursion_limit() -> None:
    # the fallback for what orjson refuses (a float with an exponent, orjson's own depth limit) must
    # not crash on a hostile, deeply nested payload
    import sys

    n = sys.getrecursionlimit() * 3
    value: object = 1.5e300
    for i in range(n):
        value = [value] if i % 2 else {"k": value}
    text = dumps_exact(value).decode()
    inner = "1.5e300"
    expected = inner
    for i in range(n):
        expected = f"[{expected}]" if i % 2 else f'{{"k":{expected}}}'
    assert text == expected
    assert dumps_exact({"a": [1, "x", None, True, False, {}], "b": []}) == b'{"a":[1,"x",null,true,false,{}],"b":[]}'
