"""Evidence digests, trace shapes, card text and Rust string semantics (spec ledger.md §7.3, §7.4).

Expected strings are composed by hand from the spec; the shape strings and the payload digest marked
"vak sample" are values vak itself wrote into /work/shared/vak-samples.
"""

from __future__ import annotations

import pytest

from vakaudit.ledger.digest import (
    args_digest,
    card_index_text,
    evidence_digest,
    evidence_shape,
    first_sentence,
    first_sentence_by_words,
    parse_json_value,
    payload_digest,
    reading_key,
    rust_lines,
    rust_trim,
    split_whitespace,
    truncate_utf8,
    truncate_words,
)

TAG = "[evidence:{id} \u2014 {n} chars; call recall to expand]"


def tag(eid: str, n: int) -> str:
    return TAG.format(id=eid, n=n)


# -- evidence digests ------------------------------------------------------------------------------


def test_two_link_fixture_digest_ends_with_65_chars_tag() -> None:
    content = '[{"title":"A","url":"https://a"},{"title":"B","url":"https://b"}]'
    digest = evidence_digest("ev1", "search", content)
    assert digest.endswith("[evidence:ev1 \u2014 65 chars; call recall to expand]")
    assert digest == "2 results:\n- A (https://a)\n- B (https://b)\n" + tag("ev1", 65)


def test_bash_digest_puts_the_exit_code_line_first() -> None:
    assert evidence_digest("ev2", "bash", "hi\nexit code: 0") == "exit code: 0\nhi\nexit code: 0\n" + tag(
        "ev2", 15
    )
    # case-insensitive match, and the line is repeated raw (not trimmed)
    assert evidence_digest(
        "x", "bash", "  EXIT CODE 1 \nout"
    ) == "  EXIT CODE 1 \n  EXIT CODE 1 \nout\n" + tag("x", 18)


def test_bash_digest_over_twenty_lines_keeps_first_and_last_ten() -> None:
    content = "\n".join(f"l{i}" for i in range(1, 26))
    assert len(content) == 90
    body = "\n".join(f"l{i}" for i in range(1, 11)) + "\n...\n" + "\n".join(f"l{i}" for i in range(16, 26))
    assert evidence_digest("b", "bash", content) == body + "\n" + tag("b", 90)


def test_text_digest_headings_first_sentence_and_counts() -> None:
    content = "# Heading\n\nFirst paragraph text.\n\nMore."
    assert evidence_digest("ev3", "read", content) == (
        "headings: # Heading\nFirst paragraph text.\n(5 lines, 39 bytes)\n" + tag("ev3", 39)
    )
    content = "## A\n## B\n\nIntro here. More"
    assert evidence_digest(
        "t", "read", content
    ) == "headings: ## A | ## B\nIntro here.\n(4 lines, 27 bytes)\n" + tag("t", 27)


def test_text_digest_blob_without_whitespace_reports_counts_only() -> None:
    assert evidence_digest("t", "read", "abcdef") == "(1 lines, 6 bytes)\n" + tag("t", 6)
    # bytes are UTF-8 bytes, chars are code points
    assert evidence_digest("t", "read", "caf\u00e9") == "(1 lines, 5 bytes)\n" + tag("t", 4)


def test_text_digest_cuts_the_opening_to_sixty_words() -> None:
    words = [f"w{i}" for i in range(70)]
    content = " ".join(words)
    expected_opening = " ".join(words[:60]) + "\u2026"
    assert evidence_digest(
        "t", "read", content
    ) == f"{expected_opening}\n(1 lines, {len(content)} bytes)\n" + tag("t", len(content))


def test_error_result_digest_is_the_content_itself() -> None:
    assert evidence_digest("ev4", "bash", "boom: permission denied", is_error=True) == (
        "boom: permission denied\n" + tag("ev4", 23)
    )


def test_json_digests_by_shape() -> None:
    assert evidence_digest("j", "t", "[]") == "array, 0 items\n" + tag("j", 2)
    assert evidence_digest("j", "t", '[1,"x"]') == "array, 2 items; first: 1\n" + tag("j", 7)
    assert evidence_digest("j", "t", '[{"z":1,"a":2}]') == 'array, 1 items; first: {"a":2,"z":1}\n' + tag(
        "j", 15
    )
    obj = '{"b":[1,2],"a":{"x":1},"links":[{"url":"u"}]}'
    # keys sorted (serde_json map); a link-array key gets the link digest, a missing title is empty
    assert evidence_digest("j", "t", obj) == (
        "object, keys: a, b, links\nb: array[2]\nlinks: 1 results:\n-  (u)\n" + tag("j", len(obj))
    )
    assert evidence_digest("j", "t", '"hello"') == '"hello"\n' + tag("j", 7)
    assert evidence_digest("j", "t", " 1e16 ") == "1e16\n" + tag("j", 6)
    assert evidence_digest("j", "t", "true") == "true\n" + tag("j", 4)
    # an integer beyond 64 bits is a float to serde_json
    assert evidence_digest("j", "t", "18446744073709551616") == "1.8446744073709552e19\n" + tag("j", 20)
    # NaN is not JSON: treated as text
    assert evidence_digest("j", "t", "NaN") == "(1 lines, 3 bytes)\n" + tag("j", 3)


def test_shapes_match_the_ones_vak_wrote_in_the_samples() -> None:
    # vak sample cards (basic: turns 1-3; branch: turn 1)
    assert evidence_shape(
        "search", '[{"title":"Caf\u00e9 \u00dcn\u00efcode","url":"https://example.com/a"}]'
    ) == ("1 results, 56 chars")
    assert evidence_shape("bash", "a.txt\nb.txt\nexit code: 0") == "exit code: 0, 24 chars"
    assert (
        evidence_shape("read", "# Title\n\nFirst paragraph here. Second sentence.\n\nMore.")
        == "5 lines, 54 chars"
    )
    assert evidence_shape("search", "[]") == "array[0], 2 chars"


def test_other_shapes() -> None:
    assert evidence_shape("bash", "x", is_error=True) == "error"
    assert evidence_shape("bash", "no code here") == "12 chars"
    assert evidence_shape("bash", "ok\n  exit code: 2  ") == "exit code: 2, 19 chars"
    assert evidence_shape("t", '{"a":1,"b":2}') == "2 keys, 13 chars"
    assert evidence_shape("t", "[1,2,3]") == "array[3], 7 chars"
    assert evidence_shape("t", "42") == "2 chars"
    assert evidence_shape("t", "a\nb\n") == "2 lines, 4 chars"


def test_args_digest_shortens_strings_except_for_bash_edit_write() -> None:
    tool_input = {
        "query": "Find it. Then more",
        "n": 3,
        "list": ["A. b", "c"],
        "nested": {"s": "Why? Because"},
    }
    assert args_digest("search", tool_input) == {
        "query": "Find it.",
        "n": 3,
        "list": ["A.", "c"],
        "nested": {"s": "Why?"},
    }
    for tool in ("bash", "edit", "write"):
        assert args_digest(tool, {"command": "echo a. b"}) == {"command": "echo a. b"}


# -- sentences, words, Rust string semantics -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello world. Next one.", "Hello world."),
        ("Version 1.2 is out", "Version 1.2 is out"),
        ("Stop!", "Stop!"),
        ("  padded? yes ", "padded?"),
        ("a.\nb", "a."),
        ("e.g.x", "e.g.x"),
        ("no end", "no end"),
        ("tab.\tafter", "tab.\tafter"),
    ],
)
def test_first_sentence(text: str, expected: str) -> None:
    assert first_sentence(text) == expected


def test_words() -> None:
    assert truncate_words("  a b  c ", 3) == "a b  c"
    assert truncate_words("a b c d", 2) == "a b\u2026"
    assert first_sentence_by_words(" short one. two ", 60) == "short one. two"
    assert first_sentence_by_words("First. " + "x " * 60, 60) == "First."
    assert split_whitespace("a\x1fb c\u3000d") == ["a\x1fb", "c", "d"]


def test_rust_string_helpers() -> None:
    assert rust_trim("\x1fa\x1f") == "\x1fa\x1f"  # not White_Space in Rust
    assert rust_trim("\u3000a\u00a0\n") == "a"
    assert rust_lines("a\r\nb\n") == ["a", "b"]
    assert rust_lines("") == []
    assert rust_lines("\n") == [""]
    assert rust_lines("a\n\nb") == ["a", "", "b"]
    assert truncate_utf8("a\u00e9", 2) == "a"
    assert truncate_utf8("abc", 3) == "abc"


def test_serde_like_json_parsing() -> None:
    assert parse_json_value("NaN") == (False, None)
    assert parse_json_value(" [1] ") == (True, [1])
    assert parse_json_value("[1] x") == (False, None)
    ok, value = parse_json_value('{"b":1,"a":2}')
    assert ok and list(value) == ["a", "b"]
    assert parse_json_value('{"a":1,"a":2}') == (True, {"a": 2})
    assert parse_json_value("1e400") == (False, None)
    assert parse_json_value('"\\ud800"') == (False, None)
    assert parse_json_value("") == (False, None)


# -- presentations and cards -----------------------------------------------------------------------


def test_payload_digest_matches_vak() -> None:
    # vak sample: basic/ledger.jsonl line 11 (presentation "Result 1")
    expected = "75a1f0ca46a274127fa77c8c0ab3a3f503b5a3bb24c1516074483f6e01ba39da"
    assert payload_digest({"note": "\u00e9 \u2713", "title": "Result 1", "value": 1}) == expected
    assert payload_digest({"value": 1, "title": "Result 1", "note": "\u00e9 \u2713"}) == expected


def test_card_index_text() -> None:
    card = {
        "asked": "q",
        "did": [{"tool": "search", "args_digest": {"z": 1, "a": "x"}, "evidence_id": "e", "shape": "s"}],
        "answered": {"presentations": [{"title": "T", "digest": "D"}], "narration": "n"},
        "reading": {"act": "answer", "domains": ["d1", "d2"], "modalities": []},
    }
    assert card_index_text(card) == 'q T D n search {"a":"x","z":1} answer d1 d2'


def test_reading_key() -> None:
    reading = {
        "act": "answer",
        "domains": ["b", "a"],
        "input_modalities": ["text", "image"],
        "output_modalities": ["text"],
        "confidence": 0.5,
    }
    assert reading_key(reading) == {"act": "answer", "domains": ["b", "a"], "modalities": ["image", "text"]}
    assert reading_key(None) == {"act": "", "domains": [], "modalities": []}
