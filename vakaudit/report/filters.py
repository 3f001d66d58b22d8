"""Jinja filters for the report: numbers, bytes and percentages the way the reference prints them.

Pure functions, no I/O. Every filter accepts ``None`` and renders it as an en dash.
"""

from __future__ import annotations

import math

DASH = "–"
THIN = "\u202f"  # narrow no-break space: "18 187" as the reference report groups digits


def num(value: float | int | None, digits: int = 0) -> str:
    """Group thousands with a narrow space: ``18187`` -> ``18 187``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    text = f"{value:,.{digits}f}" if digits else f"{round(value):,}"
    return text.replace(",", THIN)


def size(value: float | int | None, digits: int = 1) -> str:
    """Decimal byte sizes (KB = 1000 bytes), as ``du --si`` and the reference report print them."""
    if value is None:
        return DASH
    v = float(value)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(v) < 1000 or unit == "TB":
            if unit == "B":
                return f"{int(v)}{THIN}B"
            return f"{v:.{digits}f}{THIN}{unit}"
        v /= 1000
    return DASH  # pragma: no cover - loop always returns


def pct(value: float | None, digits: int = 0) -> str:
    """A fraction (0..1) as a percentage."""
    if value is None:
        return DASH
    return f"{value * 100:.{digits}f}%"


def ratio(value: float | None, digits: int = 1) -> str:
    if value is None:
        return DASH
    return f"{value:.{digits}f}"


def ms(value: float | None) -> str:
    """A duration in milliseconds, with sensible precision (µs below a millisecond, s above 10 000 ms)."""
    if value is None:
        return DASH
    v = float(value)
    if v < 0.001:
        return f"{v * 1e6:.0f}{THIN}ns"
    if v < 1:
        return f"{v * 1000:.1f}{THIN}µs"
    if v < 10:
        return f"{v:.2f}{THIN}ms"
    if v < 10_000:
        return f"{v:,.0f}{THIN}ms".replace(",", THIN)
    return f"{v / 1000:.1f}{THIN}s"


class MarkdownText(str):
    """Text already escaped for Markdown (a macro's output): :func:`md_escape` passes it through."""


#: what a value from the home may not bring into Markdown: raw HTML (``<script>``, ``<img onerror>``,
#: entities), a backtick that ends the code span around it, a ``|`` that splits a table cell,
#: brackets that start a link, and line breaks that end a table row
_MD_ESCAPES = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", "`": "&#96;", "|": "\\|", "[": "\\[", "]": "\\]",
     "\r": " ", "\n": " "}
)  # fmt: skip


def md_escape(value: object) -> object:
    """The one escaping of the Markdown report: every ``{{ … }}`` output goes through it (the
    environment's ``finalize``), so text from the home renders as text, never as HTML or markup."""
    if isinstance(value, MarkdownText) or not isinstance(value, str):
        return value
    return value.translate(_MD_ESCAPES)


def md_safe(value: object) -> MarkdownText:
    """Mark a macro's output (its own expressions already escaped) so it is not escaped twice."""
    return MarkdownText(value)


def plural(value: float | int | None, noun: str, plural_noun: str | None = None) -> str:
    """A count with its noun in agreement: ``1|plural("session")`` -> ``1 session``, ``6`` -> ``6 sessions``.

    The number is printed as :func:`num` prints it, and the noun is singular exactly when that
    text is ``1``. The plural is ``noun + "s"`` (``-y`` after a consonant: ``-ies``) unless given.
    """
    text = num(value)
    if text == "1":
        return f"{text} {noun}"
    if plural_noun is None:
        plural_noun = noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s"
    return f"{text} {plural_noun}"


FILTERS = {"num": num, "size": size, "pct": pct, "ratio": ratio, "ms": ms, "plural": plural}
