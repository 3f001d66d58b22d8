"""Compiled templates are kept between runs (jinja2's bytecode cache in a per-user directory of the
temporary directory), one set per flavour, and never change a report: a report rendered with a cold
cache, a warm one and none at all is the same document, byte for byte."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TINY = Path(__file__).resolve().parents[2] / "sample_homes" / "tiny"
AT = "2026-01-02T03:04:05Z"


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("scan") / "s"
    subprocess.run([sys.executable, "-m", "vakaudit", "scan", str(TINY), "--out", str(out), "-q"], check=True)
    return out


def _report(scan: Path, out: Path, tmpdir: Path, fmt: str, **env: str) -> bytes:
    tmpdir.mkdir(exist_ok=True)
    run_env = {k: v for k, v in os.environ.items() if k != "VAKAUDIT_NO_TEMPLATE_CACHE"}
    run_env.update(TMPDIR=str(tmpdir), **env)
    subprocess.run([sys.executable, "-m", "vakaudit", "report", str(scan), "-o", str(out), "--format", fmt,
                    "--generated-at", AT, "-q"], check=True, env=run_env)  # fmt: skip
    return out.read_bytes()


def _cached(tmpdir: Path) -> list[str]:
    return sorted(p.name for d in tmpdir.glob("_jinja2-cache-*") for p in d.iterdir())


@pytest.mark.parametrize("fmt", ["html", "md"])
def test_cold_warm_and_no_cache_give_the_same_report(scan: Path, tmp_path: Path, fmt: str) -> None:
    cache = tmp_path / "tmp"
    cold = _report(scan, tmp_path / f"cold.{fmt}", cache, fmt)
    files = _cached(cache)
    assert files and all(name.startswith(f"vakaudit-{fmt}-") for name in files), files
    mtimes = {p: p.stat().st_mtime_ns for p in cache.glob("_jinja2-cache-*/*")}
    warm = _report(scan, tmp_path / f"warm.{fmt}", cache, fmt)
    assert {p: p.stat().st_mtime_ns for p in cache.glob("_jinja2-cache-*/*")} == mtimes  # read, not rewritten
    none_dir = tmp_path / "none"
    off = _report(scan, tmp_path / f"off.{fmt}", none_dir, fmt, VAKAUDIT_NO_TEMPLATE_CACHE="1")
    assert _cached(none_dir) == []
    assert cold == warm == off
    assert len(cold) > 1000


def test_html_and_markdown_keep_apart_in_one_cache(scan: Path, tmp_path: Path) -> None:
    # jinja2's cache key has no environment settings in it; the HTML templates are compiled with
    # autoescaping and the Markdown ones without, so each flavour has files of its own
    cache = tmp_path / "tmp"
    _report(scan, tmp_path / "a.md", cache, "md")
    _report(scan, tmp_path / "a.html", cache, "html")
    files = _cached(cache)
    assert {n.split("-")[1] for n in files} == {"html", "md"}
    warm = _report(scan, tmp_path / "b.html", cache, "html")
    off = _report(scan, tmp_path / "c.html", tmp_path / "none", "html", VAKAUDIT_NO_TEMPLATE_CACHE="1")
    assert warm == off
