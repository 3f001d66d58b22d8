"""Report wording: a count agrees with its noun (one filter), the chip row is labelled, no empty panel."""

from __future__ import annotations

import dataclasses
import re

import pytest

from vakaudit.report.filters import plural
from vakaudit.report.render import SECTIONS, build_contexts, environment, markdown_environment

NOUNS = (
    "sessions|session ledgers|files|writes|turns|entries|ledger entries|rows|findings|barriers|days|blocks"
    "|ledgers|fsyncs|tool calls|artifacts"
)
ONE_PLURAL = re.compile(r"(?<![\d.,\u202f])\b1 (?:" + NOUNS + r")\b")
# "{{ x|num }} sessions", "{{ x }} files": a count printed beside a fixed plural noun
FIXED_PLURAL = re.compile(r"\{\{ [\w.]+(?:\|num)? \}\} (?:" + NOUNS + r")\b")
HAND_PLURAL = re.compile(r'\{\{ "s" if ')


def test_plural_agrees_with_the_printed_number() -> None:
    assert plural(1, "session") == "1 session"
    assert plural(6, "session") == "6 sessions"
    assert plural(0, "write") == "0 writes"
    assert plural(1, "entry") == "1 entry"
    assert plural(2, "ledger entry") == "2 ledger entries"
    assert plural(3, "day") == "3 days"  # a vowel before the y: just an s
    assert plural(1.2, "turn") == "1 turn"  # printed as 1
    assert plural(18187, "turn") == "18\u202f187 turns"
    assert plural(None, "file") == "– files"
    assert plural(2, "index", "indices") == "2 indices"


def test_no_template_prints_a_count_beside_a_fixed_plural() -> None:
    bad = []
    for path in sorted(SECTIONS.glob("*.j2")):
        text = path.read_text(encoding="utf-8")
        bad += [f"{path.name}: {m.group(0)}" for m in FIXED_PLURAL.finditer(text)]
        bad += [f"{path.name}: hand-made plural" for _ in HAND_PLURAL.finditer(text)]
    assert bad == []


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_tiny_report_never_says_1_sessions_or_1_writes(tiny_html: str, tiny_inputs) -> None:
    from vakaudit.report import render_inputs

    text = _text(tiny_html)
    assert ONE_PLURAL.findall(text) == []
    # the sample home has one ledger written by vak 3.4.9 (sample_homes/tiny, its header's app_version)
    assert "vak 3.4.9 · 1 session " in text
    assert "1 file · 1 write ·" in text
    assert ONE_PLURAL.findall(render_inputs(tiny_inputs, "md")) == []


def test_the_chip_row_under_the_headline_cards_is_labelled(tiny_html: str) -> None:
    row = re.search(r'<ul class="pills quiet"[^>]*>(.*?)</ul>', tiny_html, re.S)
    assert row is not None
    assert 'aria-label="largest entry kinds by ledger bytes"' in row.group(0)
    assert row.group(1).startswith('<li class="pills-label">Largest entry kinds by ledger bytes:</li>')


@pytest.mark.parametrize("fmt", ["html", "md"])
def test_balance_sheet_renders_no_empty_panel(tiny_inputs, fmt: str) -> None:
    spec, ctx = next((s, c) for s, c in build_contexts(tiny_inputs, charts=False) if s.name == "balance_sheet")
    env = environment() if fmt == "html" else markdown_environment()
    template = env.get_template(f"balance_sheet.{fmt}.j2")
    full = template.render(ctx=ctx, section=spec)
    assert "Designed to stay flat" in full and "Grows with history today" in full  # the tiny home has both
    no_flat = template.render(ctx=dataclasses.replace(ctx, flat=[], static=[]), section=spec)
    assert "Designed to stay flat" not in no_flat
    assert "<ul" not in no_flat or '<ul class="balance">\n    </ul>' not in no_flat
    assert "Grows with history today" in no_flat
    nothing = template.render(ctx=dataclasses.replace(ctx, flat=[], static=[], grows=[], later=[]), section=spec)
    assert "Designed to stay flat" not in nothing and "Grows with history today" not in nothing
    if fmt == "html":
        assert 'class="box' not in nothing and "<ol" not in nothing and "<ul" not in nothing
