"""Every section has its templates, builds a plain context and shows up in every format."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from vakaudit.report.render import SECTIONS, discover_sections

# the report's thirteen sections, in report order (the scorecard after the as-is -> to-be levers)
EXPECTED = [
    "masthead",
    "ledger_bytes",
    "disk",
    "write_map",
    "one_turn",
    "read_scaling",
    "projection",
    "staircase",
    "launch",
    "levers",
    "scorecard",
    "balance_sheet",
    "findings",
]
# sections that exist only for an input: the comparison home of ``report --compare``
OPTIONAL = {"compare": 1}  # name -> its place in the report when present


def test_the_thirteen_sections_in_order() -> None:
    found = [s.name for s in discover_sections()]
    expected = list(EXPECTED)
    for name, place in OPTIONAL.items():
        expected.insert(place, name)
    assert found == expected


def test_optional_sections_are_left_out_without_their_input(tiny_inputs) -> None:
    from vakaudit.report.render import build_contexts

    assert [spec.name for spec, _ctx in build_contexts(tiny_inputs)] == EXPECTED


@pytest.mark.parametrize("name", EXPECTED)
def test_section_has_html_and_markdown_templates(name: str) -> None:
    assert (SECTIONS / f"{name}.html.j2").is_file()
    assert (SECTIONS / f"{name}.md.j2").is_file()


def test_contexts_are_plain_dataclasses(tiny_inputs) -> None:
    from vakaudit.report.render import build_contexts

    for spec, ctx in build_contexts(tiny_inputs):
        assert dataclasses.is_dataclass(ctx), spec.name


def test_html_has_every_section_anchor_and_toc_link(tiny_html: str) -> None:
    for name in EXPECTED[1:]:
        assert f'<section class="report-section" id="{name}">' in tiny_html
        assert f'href="#{name}"' in tiny_html


def test_json_has_every_section_and_the_headline(tiny_inputs) -> None:
    from vakaudit.report import render_inputs

    doc = json.loads(render_inputs(tiny_inputs, "json"))
    assert [s["name"] for s in doc["sections"]] == EXPECTED
    masthead = doc["sections"][0]["context"]
    # the committed tiny home: six ledgers; turns counted by intent entries (read independently)
    assert masthead["sessions"] == 6
    assert masthead["turns"] == _intents_in_tiny()


def test_markdown_has_every_section_title(tiny_inputs) -> None:
    from vakaudit.report import render_inputs

    md = render_inputs(tiny_inputs, "md")
    for spec in discover_sections()[1:]:
        if spec.name not in OPTIONAL:
            assert f"## {spec.title}" in md
    assert "<figure" not in md and "<svg" not in md


def test_bars_are_scaled_to_the_largest_value(tiny_inputs) -> None:
    """The ledger-kind bars: the largest kind's bar is full width, the others in proportion."""
    from vakaudit.report.sections import ledger_bytes

    ctx = ledger_bytes.build(tiny_inputs)
    widths = [float(w) for w in re.findall(r'style="width:([\d.]+)%"', str(ctx.chart))]
    assert widths[0] == 100.0
    shares = [k.share for k in ctx.kinds]
    for w, share in zip(widths[1:], shares[1:], strict=True):
        assert abs(w - max(0.4, share / shares[0] * 100)) < 0.01 or share == 0


def test_every_chart_is_inline_svg_without_script(tiny_html: str) -> None:
    figures = re.findall(r'<figure class="chart".*?</figure>', tiny_html, flags=re.S)
    assert len(figures) >= 1
    for fig in figures:
        assert "<svg" in fig
        assert "<script" not in fig.lower()
    assert "<script" not in tiny_html.lower()


def test_ids_are_unique(tiny_html: str) -> None:
    ids = re.findall(r'\sid="([^"]+)"', tiny_html)
    assert len(ids) == len(set(ids))


def _intents_in_tiny() -> int:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "sample_homes" / "tiny"
    n = 0
    for path in root.rglob("*.jsonl"):
        if "/sessions/" not in path.as_posix():
            continue
        for line in path.read_bytes().splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and obj.get("kind") == "intent":
                n += 1
    return n
