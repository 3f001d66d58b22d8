"""The chart process draws exactly what the report's own process draws, and every way it can fail
leaves the chart to the report's process: a real second process each time, never a stand-in."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from vakaudit.report import build_report, chart_process, charts

pytestmark = pytest.mark.chart_process

LINE_ROWS = [
    {"turns": t, "ms": ms, "read": read}
    for read, base in (("open_ledger", 0.5), ("<b>turn_index</b>", 2.0))
    for t, ms in ((10, base), (100, base * 7), (1000, base * 60))
]
BAR_ROWS = [
    {"x": n, "y": y, "s": s}
    for n, y0 in ((2, 5), (3, 9), (7, 1))
    for s, y in (("with tool calls", y0), ("without tool calls", y0 + 2))
]

def _drawn(proc: chart_process.ChartProcess, chart: str, data: list, params: dict) -> str | None:
    """One chart sent to ``proc``, its reply taken at once."""
    ticket = proc.submit(chart, data, params)
    return None if ticket is None else proc.result(ticket)


CASES = [
    ("line log", lambda: charts.line(LINE_ROWS, x="turns", y="ms", series="read", title="t <log>",
                                     x_title="turns", y_title="ms", log=True)),
    ("line", lambda: charts.line(LINE_ROWS, x="turns", y="ms", series="read", title="t",
                                 x_title="turns", y_title="ms", width=400)),
    ("vbar stacked", lambda: charts.vbar(BAR_ROWS, x="x", y="y", stack="s", title="h",
                                         x_title="entries", y_title="turns")),
    ("vbar", lambda: charts.vbar([{"x": "a onerror=x", "y": 1}, {"x": "b", "y": 2.5}], x="x", y="y",
                                 title="h", x_title="x", y_title="y")),
]  # fmt: skip


def test_each_chart_is_drawn_alike_by_the_chart_process_and_in_process() -> None:
    here = {name: str(make()) for name, make in CASES}
    assert all("<svg" in svg for svg in here.values())
    with chart_process.chart_process() as proc:
        assert proc is not None and chart_process.running() is proc
        # every chart is sent before any reply is taken, and the replies are taken last one first
        drawn = {name: make() for name, make in CASES}
        there = {name: str(drawn[name]) for name in reversed(list(drawn))}
        # the process answered every chart (none fell back to this process)
        assert not proc._failed
    assert chart_process.running() is None
    assert there == here


def test_the_process_reports_a_chart_it_cannot_draw_and_goes_on() -> None:
    proc = chart_process.ChartProcess.start()
    assert proc is not None
    try:
        assert _drawn(proc, "pie", [], {}) is None  # not a chart of CHARTS: an error reply
        assert proc._failed
    finally:
        proc.close()
    # drawn here, the same request raises the real error
    with pytest.raises(ValueError, match="unknown chart"):
        charts.chart_spec("pie", [], {})


def test_a_chart_process_that_died_leaves_the_chart_to_this_process() -> None:
    expected = str(CASES[2][1]())
    with chart_process.chart_process() as proc:
        assert proc is not None
        proc._proc.kill()
        proc._proc.wait()
        assert str(CASES[2][1]()) == expected
        assert proc._failed


def test_a_process_that_never_answers_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chart_process, "REPLY_TIMEOUT_S", 0.3)
    silent = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    proc = chart_process.ChartProcess(silent)
    try:
        assert _drawn(proc, "vbar", [], {"x_title": "", "y_title": "", "stacked": False, "width": 1}) is None
        # given up on while it still slept: the client killed it (its own end would be exit 0)
        assert silent.returncode == -signal.SIGKILL
    finally:
        silent.kill()
        proc.close()


def test_a_process_of_another_vakaudit_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    # the process says which charts module it runs; one that is not this file is not asked to draw
    with chart_process.chart_process() as proc:
        assert proc is not None
        monkeypatch.setattr(chart_process, "_charts_file", lambda: "/elsewhere/vakaudit/report/charts.py")
        assert _drawn(proc, "vbar", [{"x": "a", "y": 1.0, "s": ""}],
                      {"x_title": "", "y_title": "", "stacked": False, "width": 100}) is None  # fmt: skip


def test_in_process_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(chart_process.IN_PROCESS_ENV, "1")
    with chart_process.chart_process() as proc:
        assert proc is None and chart_process.running() is None


def test_the_report_is_the_same_with_and_without_the_chart_process(
    tiny_scan: Path, clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_process = build_report(tiny_scan, clock=clock)
    monkeypatch.setenv(chart_process.IN_PROCESS_ENV, "1")
    without = build_report(tiny_scan, clock=clock)
    assert "<svg" in with_process
    assert with_process == without


def test_the_report_process_loads_neither_altair_nor_the_javascript_engine(tiny_scan: Path, tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from vakaudit.report import build_report\n"
        f"html = build_report({str(tiny_scan)!r}, out={str(tmp_path / 'r.html')!r})\n"
        "print('<svg' in html, 'altair' in sys.modules, 'vl_convert' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != chart_process.IN_PROCESS_ENV}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["True", "False", "False"]
    # and with the charts drawn in process, both are there (the check above can fail)
    env[chart_process.IN_PROCESS_ENV] = "1"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["True", "True", "True"]


def test_a_report_that_fails_early_ends_its_chart_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[chart_process.ChartProcess] = []
    start = chart_process.ChartProcess.start

    def spy() -> chart_process.ChartProcess | None:
        proc = start()
        assert proc is not None
        started.append(proc)
        return proc

    monkeypatch.setattr(chart_process.ChartProcess, "start", staticmethod(spy))
    (tmp_path / "scan").mkdir()  # a directory that is neither a home nor a scan: the scan refuses it
    with pytest.raises(Exception):  # noqa: B017, PT011 - whichever usage error it is, the process must end
        build_report(tmp_path / "scan", out=tmp_path / "r.html")
    assert len(started) == 1 and chart_process.running() is None
    # ended (killed while its engine was still starting, or exited), not left running
    assert started[0]._proc.returncode is not None
    assert not (tmp_path / "r.html").exists()


def test_a_chart_the_protocol_cannot_carry_is_drawn_here_and_the_process_goes_on() -> None:
    odd = [{"x": "bad \udcff name", "y": 1}, {"x": "b", "y": 2}]  # a lone surrogate: not JSON text
    try:
        expected: object = str(charts.vbar(odd, x="x", y="y", title="t", x_title="x", y_title="y"))
    except Exception as exc:  # noqa: BLE001 - whatever the engine says of it, the process path must say too
        expected = type(exc)
    plain = str(CASES[3][1]())
    with chart_process.chart_process() as proc:
        assert proc is not None
        try:
            got: object = str(charts.vbar(odd, x="x", y="y", title="t", x_title="x", y_title="y"))
        except Exception as exc:  # noqa: BLE001
            got = type(exc)
        assert got == expected
        assert proc._sent == 0  # never sent: drawn here
        assert str(CASES[3][1]()) == plain  # and the process still draws the next chart
        assert not proc._failed and proc._sent == 1


def test_the_reports_scan_leaves_a_core_to_the_chart_process(
    tiny_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import vakaudit.scan

    asked: list[int | None] = []
    scan_home = vakaudit.scan.scan_home

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(kwargs.get("jobs"))
        return scan_home(*args, **kwargs)

    monkeypatch.setattr(vakaudit.scan, "scan_home", spy)
    build_report(tiny_home, out=tmp_path / "a.html", scan_out=tmp_path / "a")
    monkeypatch.setenv(chart_process.IN_PROCESS_ENV, "1")  # no chart process: the scan's own default
    build_report(tiny_home, out=tmp_path / "b.html", scan_out=tmp_path / "b")
    assert asked == [max(1, (os.cpu_count() or 1) - 1), None]
