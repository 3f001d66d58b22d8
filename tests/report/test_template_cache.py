"""Compiled templates are kept between runs (jinja2's bytecode cache in a per-user directory of the
temporary directory), one set per flavour, and never change a report: a report rendered with a cold
cache, a warm one and none at all is the same document, byte for byte."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

AT = "2026-01-02T03:04:05Z"


@pytest.fixture(scope="module")
def scan(tiny_scan: Path) -> Path:
    """The tiny sample home's scan (the report tests' shared one: a report only reads it)."""
    return tiny_scan


def _report(scan: Path, out: Path, tmpdir: Path, fmt: str, **env: str) -> bytes:
    tmpdir.mkdir(exist_ok=True)
    run_env = {k: v for k, v in os.environ.items() if k != "VAKAUDIT_NO_TEMPLATE_CACHE"}
    run_env.update(TMPDIR=str(tmpdir), **env)
    subprocess.run([sys.executable, "-m", "vakaudit", "report", str(scan), "-o", str(out), "--format", fmt,
                    "--generated-at", AT, "-q"], check=True, env=run_env)  # fmt: skip
    return out.read_bytes()


def _cached(tmpdir: Path) -> list[str]:
    return sorted(p.name for d in tmpdir.glob("_jinja2-cache-*") for p in d.iterdir())


@pytest.fixture(scope="module")
def uncached(scan: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], bytes]:
    """The report of a format rendered with the cache turned off, once per format."""
    done: dict[str, bytes] = {}

    def render(fmt: str) -> bytes:
        if fmt not in done:
            d = tmp_path_factory.mktemp(f"uncached-{fmt}")
            done[fmt] = _report(scan, d / f"off.{fmt}", d / "tmp", fmt, VAKAUDIT_NO_TEMPLATE_CACHE="1")
            assert _cached(d / "tmp") == []
        return done[fmt]

    return render


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["html", "md"])
def test_cold_warm_and_no_cache_give_the_same_report(
    scan: Path, uncached: Callable[[str], bytes], tmp_path: Path, fmt: str
) -> None:
    cache = tmp_path / "tmp"
    cold = _report(scan, tmp_path / f"cold.{fmt}", cache, fmt)
    files = _cached(cache)
    assert files and all(name.startswith(f"vakaudit-{fmt}-") for name in files), files
    mtimes = {p: p.stat().st_mtime_ns for p in cache.glob("_jinja2-cache-*/*")}
    warm = _report(scan, tmp_path / f"warm.{fmt}", cache, fmt)
    assert {p: p.stat().st_mtime_ns for p in cache.glob("_jinja2-cache-*/*")} == mtimes  # read, not rewritten
    off = uncached(fmt)
    assert cold == warm == off
    assert len(cold) > 1000


@pytest.mark.slow
def test_html_and_markdown_keep_apart_in_one_cache(
    scan: Path, uncached: Callable[[str], bytes], tmp_path: Path
) -> None:
    # jinja2's cache key has no environment settings in it; the HTML templates are compiled with
    # autoescaping and the Markdown ones without, so each flavour has files of its own
    cache = tmp_path / "tmp"
    _report(scan, tmp_path / "a.md", cache, "md")
    _report(scan, tmp_path / "a.html", cache, "html")
    files = _cached(cache)
    assert {n.split("-")[1] for n in files} == {"html", "md"}
    warm = _report(scan, tmp_path / "b.html", cache, "html")
    assert warm == uncached("html")
