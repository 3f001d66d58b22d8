"""Headless Chromium opens the report from a file URL: no console errors, every chart rendered, no
script from the data ran; full-page screenshots (light, dark, narrow) are written under reports/ci/.

Needs chromium (CI installs Debian's); a missing browser is a failure, not a skip.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "reports" / "ci"
CHECKS = {
    "title": "document.title",
    "pwned": "document.body.dataset.pwned || null",
    "scripts": "document.querySelectorAll('script').length",
    "charts": "document.querySelectorAll('figure.chart').length",
    "charts_drawn": (
        "[...document.querySelectorAll('figure.chart')].filter(f => { const s = f.querySelector('svg');"
        " return s && s.getBoundingClientRect().width > 50 && s.querySelectorAll('path,rect').length > 0; }).length"
    ),
    "bars": "document.querySelectorAll('figure.bars').length",
    "bars_drawn": (
        "[...document.querySelectorAll('figure.bars')].filter(f => f.querySelectorAll('.bar-row').length > 0 &&"
        " [...f.querySelectorAll('.bar-track')].every(t => t.getBoundingClientRect().width > 20)).length"
    ),
    "overflow_x": "document.documentElement.scrollWidth > window.innerWidth + 1",
}


@pytest.fixture(scope="module")
def chromium_path() -> str:
    from vakaudit.report.browser import find_chromium

    path = find_chromium()
    if path is None:
        pytest.fail("chromium is required for the report browser tests (Debian: apt-get install chromium)")
    return path


@pytest.mark.slow
def test_tiny_report_in_chromium(tiny_html: str, chromium_path: str, tmp_path: Path) -> None:
    from vakaudit.report import TITLE
    from vakaudit.report.browser import open_report

    page = tmp_path / "tiny.html"
    page.write_text(tiny_html, encoding="utf-8")
    result = open_report(
        page,
        binary=chromium_path,
        checks=CHECKS,
        screenshots={"light": (1280, "light"), "dark": (1280, "dark"), "narrow": (420, "light")},
    )
    assert result.console_errors == []
    v = result.values
    assert v["title"] == TITLE
    assert v["scripts"] == 0
    assert v["charts"] >= 1
    assert v["charts_drawn"] == v["charts"]
    assert v["bars"] >= 5
    assert v["bars_drawn"] == v["bars"]
    assert v["overflow_x"] is False
    SHOTS.mkdir(parents=True, exist_ok=True)
    for name, png in result.screenshots.items():
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        (SHOTS / f"tiny-{name}.png").write_bytes(png)


def test_no_script_from_the_data_runs(hostile_inputs, chromium_path: str, tmp_path: Path) -> None:
    from vakaudit.report import TITLE, render_inputs
    from vakaudit.report.browser import open_report

    pages = {
        "private": render_inputs(
            dataclasses.replace(hostile_inputs, include_content=False, home=None), "html"
        ),
        "content": render_inputs(hostile_inputs, "html"),
    }
    for name, html in pages.items():
        page = tmp_path / f"hostile-{name}.html"
        page.write_text(html, encoding="utf-8")
        result = open_report(page, binary=chromium_path, checks=CHECKS)
        assert result.values["title"] == TITLE, name
        assert result.values["pwned"] is None, name
        assert result.values["scripts"] == 0, name
        assert result.values["charts_drawn"] == result.values["charts"], name
        assert result.values["bars_drawn"] == result.values["bars"], name
        assert result.console_errors == [], name


def test_narrow_window_does_not_scroll_sideways(tiny_html: str, chromium_path: str, tmp_path: Path) -> None:
    from vakaudit.report.browser import open_report

    page = tmp_path / "tiny.html"
    page.write_text(tiny_html, encoding="utf-8")
    result = open_report(page, binary=chromium_path, checks=CHECKS, width=420, scheme="dark")
    assert result.console_errors == []
    assert result.values["overflow_x"] is False
    assert result.values["charts_drawn"] == result.values["charts"]
    assert result.values["bars_drawn"] == result.values["bars"]
