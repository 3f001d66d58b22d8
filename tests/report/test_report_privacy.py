"""Private by default: no message text, prompts or tool output, and no absolute path of the home;
untrusted text is escaped; no external URL in any src or href."""

from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser

import pytest


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts += 1
        for name, value in attrs:
            if name in ("src", "href", "xlink:href", "action", "poster", "srcset") and value is not None:
                self.urls.append(value)


def _links(html: str) -> _Links:
    p = _Links()
    p.feed(html)
    return p


@pytest.fixture(scope="module")
def hostile_default(hostile_inputs):
    from vakaudit.report import render_inputs

    private = dataclasses.replace(hostile_inputs, include_content=False, home=None)
    return {fmt: render_inputs(private, fmt) for fmt in ("html", "md", "json")}


@pytest.fixture(scope="module")
def hostile_content_html(hostile_inputs) -> str:
    from vakaudit.report import render_inputs

    return render_inputs(hostile_inputs, "html")


@pytest.mark.parametrize("fmt", ["html", "md", "json"])
def test_default_report_holds_no_message_text(hostile_default, payloads, fmt: str) -> None:
    assert payloads["secret"] not in hostile_default[fmt]


@pytest.mark.parametrize("fmt", ["html", "md", "json"])
def test_no_absolute_home_path(hostile_default, hostile_home, fmt: str) -> None:
    assert str(hostile_home) not in hostile_default[fmt]
    assert str(hostile_home.parent) not in hostile_default[fmt]


def test_hostile_names_render_as_text(hostile_default, payloads) -> None:
    html = hostile_default["html"]
    # the payloads are in the report (entry kind, undeclared file name) ...
    assert "&lt;script&gt;document.body.dataset.pwned=1&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=" in html
    # ... and never as markup
    assert payloads["script"] not in html
    assert payloads["img"] not in html
    assert _links(html).scripts == 0


def test_include_content_shows_text_escaped(tiny_scan, clock) -> None:
    from vakaudit.report import load_inputs, render_inputs

    inputs = load_inputs(tiny_scan, include_content=True, clock=clock)
    try:
        html = render_inputs(inputs, "html")
    finally:
        inputs.con.close()
    previews = re.findall(r'<blockquote class="preview">(.*?)</blockquote>', html, flags=re.S)
    assert previews, "--include-content shows excerpts of the representative turn's text"
    assert "short excerpts of message text" in html


def test_include_content_escapes_hostile_text(hostile_content_html: str, payloads) -> None:
    assert payloads["script"] not in hostile_content_html
    assert payloads["img"] not in hostile_content_html
    assert _links(hostile_content_html).scripts == 0


@pytest.mark.parametrize("which", ["tiny", "hostile"])
def test_no_external_url_in_any_src_or_href(which: str, tiny_html: str, hostile_default) -> None:
    html = tiny_html if which == "tiny" else hostile_default["html"]
    urls = _links(html).urls
    assert urls, "the table of contents links exist"
    bad = [u for u in urls if re.match(r"\s*(https?:|//|ftp:|javascript:)", u, re.I)]
    assert bad == []
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
