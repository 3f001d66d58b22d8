"""Filters print numbers the way the reference report does; chart SVG is inert and reproducible."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from vakaudit.report import charts
from vakaudit.report.filters import THIN, ms, num, pct, ratio, size


def test_numbers_group_thousands_with_a_narrow_space() -> None:
    assert num(18187) == f"18{THIN}187"
    assert num(1386.4) == f"1{THIN}386"
    assert num(None) == "–"


def test_sizes_are_decimal_units() -> None:
    assert size(92_000_000) == f"92.0{THIN}MB"
    assert size(66_000, 0) == f"66{THIN}KB"
    assert size(999) == f"999{THIN}B"
    assert size(6_600_000_000) == f"6.6{THIN}GB"


def test_percent_ratio_and_durations() -> None:
    assert pct(0.7239) == "72%"
    assert pct(0.7239, 1) == "72.4%"
    assert ratio(13.116) == "13.1"
    assert ms(0.00004) == f"40{THIN}ns"
    assert ms(0.0355) == f"35.5{THIN}µs"
    assert ms(6.24) == f"6.24{THIN}ms"
    assert ms(2130) == f"2{THIN}130{THIN}ms"
    assert ms(39_400) == f"39.4{THIN}s"


def test_bars_escape_labels() -> None:
    html = str(
        charts.hbar([{"l": "<b>x</b>", "v": 2.0}, {"l": "y", "v": 1.0}], label="l", value="v", title="t<")
    )
    assert "<b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert 'style="width:100.00%"' in html and 'style="width:50.00%"' in html


def _chart(label: str):
    return charts.vbar(
        [{"x": label, "y": 1}, {"x": "b", "y": 2}], x="x", y="y", title="t", x_title="x", y_title="y"
    )


def test_chart_svg_is_reproducible_and_ids_are_content_derived() -> None:
    a, b = str(_chart("a")), str(_chart("a"))
    assert a == b
    ids_a = set(re.findall(r'\sid="([^"]+)"', a))
    ids_c = set(re.findall(r'\sid="([^"]+)"', str(_chart("c"))))
    assert ids_a and not (ids_a & ids_c)


@pytest.mark.parametrize(
    "markup",
    [
        '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><g onload="alert(1)"/></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><div/></foreignObject></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
        '<a xlink:href="javascript:alert(1)"><text>x</text></a></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><image href="https://example.org/x.png"/></svg>',
    ],
)
def test_svg_with_active_content_is_refused(markup: str) -> None:
    with pytest.raises(ValueError):
        charts.check_inert(markup)


def test_inert_svg_passes() -> None:
    charts.check_inert(
        '<svg xmlns="http://www.w3.org/2000/svg"><defs><clipPath id="c1"><rect/></clipPath></defs>'
        '<g clip-path="url(#c1)" aria-label="x onerror=alert(1)"><text>onerror=alert(1)</text></g></svg>'
    )


def test_label_text_that_looks_like_a_handler_is_allowed() -> None:
    # escaped text is not markup: a bar or axis label reading onerror= renders as text
    out = str(_chart("x onerror=alert(1)"))
    assert "onerror=alert(1)" in out  # as text and inside aria-label values

    class Attrs(HTMLParser):
        names: set[str] = set()

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.names.update(n for n, _ in attrs)

    p = Attrs()
    p.feed(out)
    assert p.names and not any(n.startswith("on") for n in p.names)
