"""Charts: Altair specifications rendered to inline SVG with vl-convert, so reports need no script.

Pre-rendered SVG keeps the report deterministic, offline and free of JavaScript; the colours are
overridden by the page's CSS so light and dark schemes both read well. Labels in the data come from
the home and are untrusted: vl-convert writes them as escaped SVG text, and :func:`_figure` refuses any
output that contains a script element or an event-handler attribute.

Each engine-drawn chart is one function here (:func:`line`, :func:`vbar`) whose Vega-Lite
specification is built in one place (:func:`chart_spec`). Altair and vl-convert are imported only
when a chart is drawn in this process: ``build_report`` draws them in a chart process
(:mod:`vakaudit.report.chart_process`) started before its scan, so Altair's import and the
JavaScript engine's start (about a second of CPU, holding the GIL) run on another core meanwhile.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Any
from xml.etree import ElementTree

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

_ACTIVE_TAGS = frozenset({"script", "foreignobject", "iframe", "object", "embed", "handler", "listener"})
_URL_ATTRS = frozenset({"href", "src"})


def check_inert(svg_text: str) -> None:
    """Raise ValueError unless the SVG is inert: no script-capable element, no event-handler attribute,
    no link or source pointing anywhere but inside the document. Text and attribute *values* may say
    anything (an axis label reading ``onerror=`` is harmless text); only the markup is checked."""
    try:
        root = ElementTree.fromstring(svg_text)
    except ElementTree.ParseError as exc:
        raise ValueError(f"chart SVG does not parse: {exc}") from None
    for el in root.iter():
        tag = str(el.tag).rsplit("}", 1)[-1].lower()
        if tag in _ACTIVE_TAGS:
            raise ValueError(f"chart SVG contains a <{tag}> element; refusing to embed it")
        for name, value in el.attrib.items():
            attr = name.rsplit("}", 1)[-1].lower()
            if attr.startswith("on"):
                raise ValueError(f"chart SVG carries an event handler ({attr}); refusing to embed it")
            if attr in _URL_ATTRS and not value.strip().startswith("#"):
                raise ValueError(f"chart SVG links outside the document ({attr}={value[:40]!r})")


_SIZE = re.compile(r'^<svg([^>]*?) width="([\d.]+)" height="([\d.]+)"')


def warm_up() -> None:
    """Start vl-convert's JavaScript engine (about a second, once per process) and Altair's spec
    machinery (its first ``to_dict`` loads the Vega-Lite schema) ahead of the first chart."""
    import altair as alt
    import vl_convert as vlc

    spec = alt.Chart(alt.Data(values=[{"a": 1}])).mark_point().encode(x="a:Q").to_dict(validate=False)
    vlc.vegalite_to_svg(spec)


#: False while building contexts for Markdown or JSON, which show no charts: nothing is rendered
ENABLED: ContextVar[bool] = ContextVar("vakaudit_report_charts", default=True)

#: the chart process drawing the charts of the report being built (a
#: :class:`vakaudit.report.chart_process.ChartProcess`, set by its ``chart_process()``); None: drawn here
PROCESS: Any = None


def _figure(out: str, title: str) -> Markup:
    """vl-convert's SVG as the page shows it: checked inert, ids made stable, scaling, a title."""
    check_inert(out)
    out = _stable_ids(out)
    # Drop the fixed white background so the page colour shows through, and make it scale.
    out = out.replace('<rect width="', '<rect class="bg" width="', 1)
    m = _SIZE.match(out)
    if m:
        natural = float(m.group(2))
        # scale down with the page, but never below a legible width: narrow screens scroll the figure
        floor = min(natural, MIN_WIDTH)
        out = _SIZE.sub(
            rf'<svg\1 role="img" width="100%" style="max-width:\2px;min-width:{floor:.0f}px" data-height="\3"',
            out,
            count=1,
        )
    safe_title = Markup.escape(title)
    out = out.replace(">", f"><title>{safe_title}</title>", 1)
    return Markup(f'<figure class="chart" data-chart="{Markup.escape(title)}">{out}</figure>')


MIN_WIDTH = 500  # px: below this a chart scrolls instead of shrinking
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
    text: str | None = None,
    value_format: str = "{:,.0f}",
    color: str | None = None,
    color_by: str | None = None,
    **_: Any,
) -> Markup:
    """Horizontal bars with labels and values, in the order given (the reference's bar style).

    Plain HTML and CSS rather than SVG: bar charts this simple need no chart engine, stay crisp at
    any width, follow the colour scheme and reflow on narrow screens. ``text``: a column of
    pre-formatted value labels (else ``value_format``); ``color``: a key of :data:`SEMANTIC` for every
    bar, ``color_by``: a column naming one per bar. Labels are escaped (they come from the home).
    """
    values = [float(r[value] or 0) for r in rows]
    top = max(values, default=0.0) or 1.0
    tone_default = next((k for k, v in SEMANTIC.items() if v == color), None) or "ledger"
    out = [
        f'<figure class="bars" role="img" aria-label="{Markup.escape(title)}">'
        f'<figcaption class="visually-hidden">{Markup.escape(title)}</figcaption>'
    ]
    for r, v in zip(rows, values, strict=True):
        tone = str(r[color_by]) if color_by else tone_default
        if tone not in SEMANTIC:
            tone = "neutral"
        width = 0.0 if v <= 0 else max(0.4, v / top * 100)
        shown = str(r[text]) if text else value_format.format(v)
        out.append(
            f'<div class="bar-row"><span class="bar-label">{Markup.escape(str(r[label]))}</span>'
            f'<span class="bar-track"><span class="bar tone-{tone}" style="width:{width:.2f}%"></span></span>'
            f'<span class="bar-value">{Markup.escape(shown)}</span></div>'
        )
    out.append("</figure>")
    return Markup("".join(out))


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
    """A multi-series line chart (read-scaling curves, staircase); log axes fit the data exactly."""
    data = [{"x": float(r[x]), "y": float(r[y]), "series": str(r[series])} for r in rows]
    return draw("line", data, {"x_title": x_title, "y_title": y_title, "log": log, "width": width}, title=title)


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
    params = {"x_title": x_title, "y_title": y_title, "stacked": bool(stack), "width": width}
    return draw("vbar", data, params, title=title)


def chart_spec(chart: str, data: list[dict[str, Any]], params: Mapping[str, Any]) -> dict[str, Any]:
    """The Vega-Lite specification of the :data:`CHARTS` chart ``chart`` over ``data`` (the rows
    :func:`line` and :func:`vbar` make): plain JSON values in, a plain dict out, so a chart process
    builds exactly what this process would."""
    if chart not in CHARTS or set(params) != set(CHARTS[chart][1]):
        raise ValueError(f"unknown chart {chart!r} or parameters {sorted(params)}")
    # Altair's JSON-schema validation costs more than the rendering of a small chart; specs are ours
    return CHARTS[chart][0](data, **params).to_dict(validate=False)


def _line_spec(data: list[dict[str, Any]], *, x_title: str, y_title: str, log: bool, width: int) -> Any:
    import altair as alt

    xs = [d["x"] for d in data] or [1.0]
    if log:
        x_scale = alt.Scale(type="log", domain=[min(xs), max(xs)], nice=False)
        y_scale = alt.Scale(type="log")
    else:
        x_scale = y_scale = alt.Scale()
    return (
        alt.Chart(alt.Data(values=data))
        .mark_line(point=True, strokeWidth=2)
        .encode(
            x=alt.X("x:Q", title=x_title, scale=x_scale, axis=alt.Axis(values=sorted(set(xs)), format="~s")),
            y=alt.Y("y:Q", title=y_title, scale=y_scale, axis=alt.Axis(tickCount=6, format="~g")),
            color=alt.Color(
                "series:N",
                title=None,
                legend=alt.Legend(orient="right", labelLimit=300, labelFontSize=11, symbolSize=60),
            ),
        )
        .properties(width=width, height=240)
        .configure_view(strokeWidth=0)
        .configure_axis(labelFontSize=11, titleFontSize=11, gridOpacity=0.5)
        .configure(font=FONT)
    )


def _vbar_spec(data: list[dict[str, Any]], *, x_title: str, y_title: str, stacked: bool, width: int) -> Any:
    import altair as alt

    order = list(dict.fromkeys(d["x"] for d in data))
    enc: dict[str, Any] = {
        "x": alt.X("x:N", sort=order, title=x_title, axis=alt.Axis(labelAngle=0)),
        "y": alt.Y("y:Q", title=y_title, stack="zero"),
    }
    if stacked:
        series = sorted({d["s"] for d in data})
        tones = [ACCENT, SEMANTIC["derived"], SEMANTIC["warning"], SEMANTIC["rewrite"], SEMANTIC["neutral"]]
        enc["color"] = alt.Color(
            "s:N",
            title=None,
            scale=alt.Scale(domain=series, range=tones[: len(series)]),
            legend=alt.Legend(orient="top", direction="horizontal"),
        )
        bars = alt.Chart(alt.Data(values=data)).mark_bar(cornerRadiusEnd=1).encode(**enc)
    else:
        bars = alt.Chart(alt.Data(values=data)).mark_bar(color=ACCENT, cornerRadiusEnd=1).encode(**enc)
    return (
        bars.properties(width=width, height=180)
        .configure_view(strokeWidth=0)
        .configure_axis(labelFontSize=11, titleFontSize=11, grid=False)
        .configure(font=FONT)
    )


#: the engine-drawn charts: name -> (the function building its Altair chart, its keyword parameters)
CHARTS = {
    "line": (_line_spec, ("x_title", "y_title", "log", "width")),
    "vbar": (_vbar_spec, ("x_title", "y_title", "stacked", "width")),
}


def chart_svg(chart: str, data: list[dict[str, Any]], params: Mapping[str, Any]) -> str:
    """vl-convert's SVG of a :data:`CHARTS` chart, drawn in this process."""
    import vl_convert as vlc

    return vlc.vegalite_to_svg(chart_spec(chart, data, params))


def draw(chart: str, data: list[dict[str, Any]], params: Mapping[str, Any], *, title: str) -> Markup:
    """A :data:`CHARTS` chart as page markup: drawn by the running chart process when there is one
    (:data:`PROCESS`), else (or should that process fail) here."""
    if not ENABLED.get():
        return Markup("")
    proc = PROCESS
    ticket = proc.submit(chart, data, params) if proc is not None else None
    if ticket is None:
        return _figure(chart_svg(chart, data, params), title)
    return _Drawn(proc, ticket, (chart, data, params), title)  # type: ignore[return-value]


class _Drawn:
    """A chart sent to the chart process: page markup once its reply is taken, the first time the
    page (or ``str``) shows it, so the report builds on while the chart is drawn."""

    __slots__ = ("_args", "_html", "_proc", "_ticket", "_title")

    def __init__(self, proc: Any, ticket: int, args: tuple[str, list[dict[str, Any]], Mapping[str, Any]],
                 title: str) -> None:  # fmt: skip
        self._proc, self._ticket, self._args, self._title = proc, ticket, args, title
        self._html: Markup | None = None

    def __html__(self) -> Markup:
        if self._html is None:
            out = self._proc.result(self._ticket)
            self._html = _figure(out if out is not None else chart_svg(*self._args), self._title)
        return self._html

    def __str__(self) -> str:
        return str(self.__html__())
