"""Charts: Altair specifications rendered to inline SVG with vl-convert, so reports need no script.

Pre-rendered SVG keeps the report deterministic, offline and free of JavaScript; the colours are
overridden by the page's CSS so light and dark schemes both read well. Labels in the data come from
the home and are untrusted: vl-convert writes them as escaped SVG text, and :func:`svg` refuses any
output that contains a script element or an event-handler attribute.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import vl_convert as vlc
from markupsafe import Markup

ACCENT = "#b5532a"
FONT = "Helvetica Neue, Arial, Liberation Sans, DejaVu Sans, sans-serif"
SEMANTIC = {
    "ledger": "#b5532a",
    "rewrite": "#7a5fa8",
    "derived": "#3f7f8c",
    "warning": "#c28a1a",
    "neutral": "#8a8275",
}

#: write-map group -> semantic colour of its bars and badges
GROUP_TONE = {
    "ledger": "ledger",
    "checkpoint": "rewrite",
    "memory": "rewrite",
    "config": "rewrite",
    "derived": "derived",
    "evidence": "warning",
    "sandbox": "warning",
    "server": "warning",
}

# Active content in *markup* (not in escaped text: a label reading "onerror=" is harmless text).
_FORBIDDEN = re.compile(
    r"<\s*(?:script|foreignObject|iframe|object|embed)\b|<[^>]*\son[a-z]+\s*=|<[^>]*(?:href|src)\s*=\s*[\"']?\s*javascript:",
    re.IGNORECASE,
)
_SIZE = re.compile(r'^<svg([^>]*?) width="([\d.]+)" height="([\d.]+)"')


def svg(spec: Mapping[str, Any] | alt.TopLevelMixin, *, title: str) -> Markup:
    """Render a Vega-Lite spec to responsive inline SVG markup with an accessible title."""
    spec_dict = spec.to_dict() if hasattr(spec, "to_dict") else dict(spec)
    out = vlc.vegalite_to_svg(spec_dict)
    if _FORBIDDEN.search(out):
        raise ValueError("chart SVG contains active content; refusing to embed it")
    out = _stable_ids(out)
    # Drop the fixed white background so the page colour shows through, and make it scale.
    out = out.replace('<rect width="', '<rect class="bg" width="', 1)
    out = _SIZE.sub(r'<svg\1 role="img" width="100%" style="max-width:\2px" data-height="\3"', out, count=1)
    safe_title = Markup.escape(title)
    out = out.replace(">", f"><title>{safe_title}</title>", 1)
    return Markup(f'<figure class="chart" data-chart="{Markup.escape(title)}">{out}</figure>')


_ID = re.compile(r'\bid="([^"]+)"')


def _stable_ids(out: str) -> str:
    """Rename the SVG's element ids (vl-convert numbers them process-wide: ``clip69``) to ids derived
    from the chart's own content, so output is reproducible and ids stay unique within a page."""
    ids = list(dict.fromkeys(_ID.findall(out)))
    if not ids:
        return out
    local = {old: f"k{i}" for i, old in enumerate(ids, start=1)}

    def swap(text: str, mapping: dict[str, str]) -> str:
        for old, new in sorted(mapping.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(f'id="{old}"', f'id="{new}"').replace(f"url(#{old})", f"url(#{new})")
            text = text.replace(f'href="#{old}"', f'href="#{new}"')
        return text

    # two passes (old -> placeholder -> final) so a new id never collides with an old one
    tmp = {old: f"__vakaudit_{i}__" for i, old in enumerate(ids, start=1)}
    out = swap(out, tmp)
    normal = swap(out, {tmp[o]: local[o] for o in ids})
    digest = hashlib.sha256(normal.encode()).hexdigest()[:10]
    return swap(out, {tmp[o]: f"c{digest}-{local[o]}" for o in ids})


def hbar(
    rows: Sequence[Mapping[str, Any]],
    *,
    label: str,
    value: str,
    title: str,
    value_format: str = ",.0f",
    color: str | None = None,
    width: int = 560,
    text: str | None = None,
    color_by: str | None = None,
    label_limit: int = 260,
) -> Markup:
    """A horizontal bar chart with labels and values, sorted as given (the reference's bar style).

    ``text``: a column of pre-formatted value labels (e.g. "12.3 MB"); else ``value_format``.
    ``color_by``: a column naming a semantic colour (a key of :data:`SEMANTIC`) per bar.
    """
    data = [
        {
            "label": str(r[label]),
            "value": float(r[value] or 0),
            "text": str(r[text]) if text else "",
            "tone": str(r[color_by]) if color_by else "",
        }
        for r in rows
    ]
    order = [d["label"] for d in data]
    base = alt.Chart(alt.Data(values=data)).encode(
        y=alt.Y(
            "label:N",
            sort=order,
            title=None,
            axis=alt.Axis(
                labelLimit=label_limit, ticks=False, domain=False, labelFontSize=12, labelPadding=6
            ),
        ),
        x=alt.X("value:Q", title=None, axis=None, scale=alt.Scale(nice=False)),
    )
    if color_by:
        tones = sorted({d["tone"] for d in data})
        bars = base.mark_bar(cornerRadiusEnd=2, height={"band": 0.7}).encode(
            color=alt.Color(
                "tone:N",
                legend=None,
                scale=alt.Scale(domain=tones, range=[SEMANTIC.get(t, SEMANTIC["neutral"]) for t in tones]),
            )
        )
    else:
        bars = base.mark_bar(color=color or ACCENT, cornerRadiusEnd=2, height={"band": 0.7})
    if text:
        labels = base.mark_text(align="left", dx=4, fontSize=11).encode(text=alt.Text("text:N"))
    else:
        labels = base.mark_text(align="left", dx=4, fontSize=11).encode(
            text=alt.Text("value:Q", format=value_format)
        )
    chart = (bars + labels).properties(width=width, height=alt.Step(22)).configure_view(strokeWidth=0)
    chart = chart.configure_axis(labelFontSize=12).configure(
        font=FONT, padding={"left": 24, "right": 80, "top": 4, "bottom": 4}
    )
    return svg(chart, title=title)


def line(
    rows: Sequence[Mapping[str, Any]],
    *,
    x: str,
    y: str,
    series: str,
    title: str,
    x_title: str,
    y_title: str,
    log: bool = False,
    width: int = 560,
) -> Markup:
    """A multi-series line chart (read-scaling curves, staircase)."""
    data = [{"x": float(r[x]), "y": float(r[y]), "series": str(r[series])} for r in rows]
    scale = alt.Scale(type="log") if log else alt.Scale()
    chart = (
        alt.Chart(alt.Data(values=data))
        .mark_line(point=True)
        .encode(
            x=alt.X("x:Q", title=x_title, scale=scale),
            y=alt.Y("y:Q", title=y_title, scale=scale),
            color=alt.Color("series:N", title=None, legend=alt.Legend(orient="bottom", columns=2)),
        )
        .properties(width=width, height=260)
        .configure_view(strokeWidth=0)
        .configure(font=FONT)
    )
    return svg(chart, title=title)


def vbar(
    rows: Sequence[Mapping[str, Any]],
    *,
    x: str,
    y: str,
    title: str,
    x_title: str,
    y_title: str,
    stack: str | None = None,
    width: int = 560,
) -> Markup:
    """Vertical bars over an ordinal x (a distribution), optionally stacked by a ``stack`` column."""
    data = [{"x": str(r[x]), "y": float(r[y] or 0), "s": str(r[stack]) if stack else ""} for r in rows]
    order = list(dict.fromkeys(d["x"] for d in data))
    enc: dict[str, Any] = {
        "x": alt.X("x:N", sort=order, title=x_title, axis=alt.Axis(labelAngle=0)),
        "y": alt.Y("y:Q", title=y_title, stack="zero"),
    }
    if stack:
        series = sorted({d["s"] for d in data})
        tones = [ACCENT, SEMANTIC["derived"], SEMANTIC["warning"], SEMANTIC["rewrite"], SEMANTIC["neutral"]]
        enc["color"] = alt.Color(
            "s:N",
            title=None,
            scale=alt.Scale(domain=series, range=tones[: len(series)]),
            legend=alt.Legend(orient="top", direction="horizontal"),
        )
        chart = alt.Chart(alt.Data(values=data)).mark_bar(cornerRadiusEnd=1).encode(**enc)
    else:
        chart = alt.Chart(alt.Data(values=data)).mark_bar(color=ACCENT, cornerRadiusEnd=1).encode(**enc)
    chart = (
        chart.properties(width=width, height=180)
        .configure_view(strokeWidth=0)
        .configure_axis(labelFontSize=11, titleFontSize=11, grid=False)
        .configure(font=FONT)
    )
    return svg(chart, title=title)
