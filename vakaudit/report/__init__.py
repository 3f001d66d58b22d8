"""The self-contained scale report of a vak home (Jinja + Altair, charts pre-rendered to inline SVG).

Public API::

    build_report(home_or_scan, *, out=None, format="html", include_content=False, clock=None,
                 readscale=None, scan_out=None, link_base=None, verify=False, progress=None) -> str
    load_inputs(...) -> ReportInputs          (what every section builds from)
    render_inputs(inputs, format="html") -> str
    FORMATS = ("html", "md", "json")

Sections live in :mod:`vakaudit.report.sections` (one module + one template each). The report
presents; :mod:`vakaudit.analyze` computes. Private by default: structure, sizes, counts and digests,
never message text, tool output or prompts unless ``include_content`` is set. Paths are relative to
the home. Deterministic for a fixed ``clock``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import ExitStack
from datetime import datetime
from typing import Any

from vakaudit.errors import UsageError
from vakaudit.outputs import check_output, write_output
from vakaudit.report.inputs import ReportInputs, load_inputs

FORMATS = ("html", "md", "json")
TITLE = "vak home · write paths and growth"


def render_inputs(inputs: ReportInputs, format: str = "html") -> str:  # noqa: A002 - the CLI's word
    """Render already-loaded inputs in one of :data:`FORMATS`."""
    import vakaudit.report.render as r
    from vakaudit import __version__

    if format not in FORMATS:
        raise UsageError(f"unknown report format {format!r}; choose one of {', '.join(FORMATS)}")
    generated_at = inputs.generated_at.strftime("%Y-%m-%d %H:%M UTC")
    fn = {"html": r.render_html, "md": r.render_markdown, "json": r.render_json}[format]
    return fn(inputs, version=__version__, generated_at=generated_at, title=TITLE)


def build_report(
    home_or_scan: str | os.PathLike[str],
    *,
    out: str | os.PathLike[str] | None = None,
    format: str = "html",  # noqa: A002
    include_content: bool = False,
    clock: Callable[[], datetime] | None = None,
    readscale: str | os.PathLike[str] | None = None,
    scan_out: str | os.PathLike[str] | None = None,
    link_base: str | None = None,
    verify: bool = False,
    progress: Callable[[Any], None] | None = None,
    keys: Any = None,
    compare: str | os.PathLike[str] | None = None,
    compare_keys: Any = None,
) -> str:
    """Scan (if given a home), analyze and render the report; write it to ``out`` when given.

    ``clock`` returns the "generated on" time (inject a fixed one for reproducible output);
    ``readscale`` names a stored readscale result (default: the scan's ``readscale.json``);
    ``link_base`` prefixes the home-relative paths of findings to make them links; ``verify`` adds the
    forensic cross checks of :func:`vakaudit.forensics.verify_home` to the findings; ``keys`` (a
    :class:`~vakaudit.storage.KeyRing`) unlocks a sealed 7.0 home; ``compare`` (a home or scan, with
    ``compare_keys`` for a sealed 7.0 one) adds the side-by-side section and a measured to-be.
    Returns the rendered text.
    """
    if format not in FORMATS:
        raise UsageError(f"unknown report format {format!r}; choose one of {', '.join(FORMATS)}")
    from vakaudit.analyze._open import scan_home_of

    home = scan_home_of(home_or_scan)
    homes = [home] if compare is None else [home, scan_home_of(compare)]
    if out is not None:
        check_output(out, homes)  # before any work: nothing is written when it is refused
    with ExitStack() as stack:
        if format == "html":  # the charts' engine starts in a process of its own while the home is scanned
            from vakaudit.report.chart_process import chart_process

            stack.enter_context(chart_process())
        inputs = load_inputs(
            home_or_scan,
            include_content=include_content,
            clock=clock,
            readscale=readscale,
            scan_out=scan_out,
            link_base=link_base,
            verify=verify,
            progress=progress,
            keys=keys,
            compare=compare,
            compare_keys=compare_keys,
        )
        try:
            if progress:
                progress("rendering report")
            text = render_inputs(inputs, format)
        finally:
            inputs.con.close()
    if out is not None:
        write_output(out, text, home)
    return text


__all__ = ["FORMATS", "TITLE", "ReportInputs", "build_report", "load_inputs", "render_inputs"]
