"""The tiny sample home renders to exactly the committed golden HTML (fixed clock, sorted iteration)."""

from __future__ import annotations

from pathlib import Path

GOLDEN = Path(__file__).parent / "golden" / "tiny.html"


def test_tiny_report_matches_golden(tiny_html: str, update_golden: bool) -> None:
    if update_golden:
        GOLDEN.write_text(tiny_html, encoding="utf-8")
    assert GOLDEN.is_file(), "no golden file yet: run pytest tests/report --update-golden"
    expected = GOLDEN.read_text(encoding="utf-8")
    assert tiny_html == expected, "report HTML changed; if intended, rerun with --update-golden and review"


def test_rendering_twice_gives_the_same_bytes(tiny_inputs, tiny_html: str) -> None:
    from vakaudit.report import render_inputs

    assert render_inputs(tiny_inputs, "html") == tiny_html
