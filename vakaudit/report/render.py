"""Render the scale report: discover sections, build their contexts, render HTML, Markdown or JSON.

Each module in :mod:`vakaudit.report.sections` is one section: it defines ``TITLE``, ``ORDER`` and
``build(inputs) -> context`` (a plain frozen dataclass), and has a template of the same name
(``<name>.html.j2``, optionally ``<name>.md.j2``). Compute lives in ``build``; templates only
present. Jinja runs with autoescape and ``StrictUndefined``: everything that comes from a home is
untrusted text.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
from jinja2 import Environment, FileSystemBytecodeCache, FileSystemLoader, StrictUndefined, select_autoescape
from jinja2.bccache import Bucket
from markupsafe import Markup

import vakaudit.report.sections as sections_pkg
from vakaudit.report.charts import ENABLED as CHARTS_ENABLED
from vakaudit.report.filters import FILTERS, md_escape, md_safe

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
SECTIONS = HERE / "sections"


@dataclass(frozen=True, slots=True)
class SectionSpec:
    name: str
    title: str
    order: int
    build: Callable[[Any], Any]
    module: ModuleType


@dataclass(frozen=True, slots=True)
class RenderedSection:
    name: str
    title: str
    html: Markup
    number: int


@cache
def discover_sections() -> tuple[SectionSpec, ...]:
    """Every section module, in report order. A module without its template fails loudly."""
    specs = []
    for info in pkgutil.iter_modules(sections_pkg.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{sections_pkg.__name__}.{info.name}")
        if not (SECTIONS / f"{info.name}.html.j2").is_file():
            raise RuntimeError(f"report section {info.name!r} has no template {info.name}.html.j2")
        specs.append(SectionSpec(info.name, module.TITLE, module.ORDER, module.build, module))
    specs.sort(key=lambda s: (s.order, s.name))
    return tuple(specs)


class _TemplateCache(FileSystemBytecodeCache):
    """jinja2's cache of compiled templates, which never fails a report: a cache that cannot be
    written is skipped (the templates are compiled again next time)."""

    def dump_bytecode(self, bucket: Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


@cache
def template_cache(flavour: str) -> FileSystemBytecodeCache | None:
    """Compiled templates kept between runs (compiling the report's templates costs ~0.15 s a run):
    jinja2's per-user directory under the temporary directory (created 0700, refused when another
    user owns it), keyed by each template's name and source checksum, so an edited template is
    compiled again. One set of files per ``flavour`` (``html``, ``md``): jinja2's key does not
    include the environment's settings, and the HTML templates are compiled with autoescaping, the
    Markdown ones without. It holds the templates' code only, never anything of a home.
    ``VAKAUDIT_NO_TEMPLATE_CACHE=1``: no cache."""
    if os.environ.get("VAKAUDIT_NO_TEMPLATE_CACHE", "") not in ("", "0"):
        return None
    try:
        return _TemplateCache(pattern=f"vakaudit-{flavour}-%s.cache")
    except (OSError, RuntimeError):  # no usable temporary directory, or not the user's own
        return None


@cache
def environment() -> Environment:
    env = Environment(
        bytecode_cache=template_cache("html"),
        loader=FileSystemLoader([str(SECTIONS), str(TEMPLATES)]),
        autoescape=select_autoescape(enabled_extensions=("html", "j2"), default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    return env


def markdown_environment() -> Environment:
    env = Environment(
        bytecode_cache=template_cache("md"),
        loader=FileSystemLoader([str(SECTIONS), str(TEMPLATES)]),
        autoescape=False,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=md_escape,
    )
    env.filters.update(FILTERS)
    env.filters["md_safe"] = md_safe
    return env


def build_contexts(inputs: Any, *, charts: bool = True) -> list[tuple[SectionSpec, Any]]:
    """Every section's context, in order; ``charts=False`` skips rendering chart SVG (text formats)."""
    token = CHARTS_ENABLED.set(charts)
    try:
        built = [(spec, spec.build(inputs)) for spec in discover_sections()]
        # a section that exists only for an input (``OPTIONAL``, e.g. a comparison home) is left out
        # when its build returns None
        return [(spec, ctx) for spec, ctx in built if ctx is not None or not getattr(spec.module, "OPTIONAL", False)]
    finally:
        CHARTS_ENABLED.reset(token)


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if hasattr(value, "__html__"):  # pre-rendered markup (charts) is presentation, not data
        return None
    return value


def render_html(inputs: Any, *, version: str, generated_at: str, title: str) -> str:
    env = environment()
    rendered = []
    for number, (spec, ctx) in enumerate(build_contexts(inputs), start=1):
        html = env.get_template(f"{spec.name}.html.j2").render(ctx=ctx, section=spec)
        # the section template was rendered with autoescape: its output is markup
        rendered.append(RenderedSection(spec.name, spec.title, Markup(html), number))
    # our own stylesheet, not data: embedded as-is (autoescape would mangle its quotes)
    css = Markup((TEMPLATES / "report.css").read_text(encoding="utf-8"))
    return env.get_template("base.html.j2").render(
        sections=rendered,
        css=css,
        version=version,
        generated_at=generated_at,
        title=title,
        include_content=bool(getattr(inputs, "include_content", False)),
    )


def render_markdown(inputs: Any, *, version: str, generated_at: str, title: str) -> str:
    env = markdown_environment()
    parts = [f"# {title}\n", f"_Generated by vakaudit {version} on {generated_at}._\n"]
    for spec, ctx in build_contexts(inputs, charts=False):
        name = f"{spec.name}.md.j2"
        if (SECTIONS / name).is_file():
            parts.append(env.get_template(name).render(ctx=ctx, section=spec))
        else:
            parts.append(f"## {spec.title}\n\n```json\n{_dumps(_jsonable(ctx))}\n```\n")
    return "\n".join(parts)


def render_json(inputs: Any, *, version: str, generated_at: str, title: str) -> str:
    doc = {
        "title": title,
        "vakaudit_version": version,
        "generated_at": generated_at,
        "sections": [
            {"name": spec.name, "title": spec.title, "context": _jsonable(ctx)}
            for spec, ctx in build_contexts(inputs, charts=False)
        ],
    }
    return _dumps(doc)


def _dumps(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
