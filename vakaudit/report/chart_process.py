"""A chart process: the report's engine-drawn charts (:data:`vakaudit.report.charts.CHARTS`) drawn
by a second Python process, which imports Altair and starts vl-convert's JavaScript engine as soon
as it starts.

Both cost about a second of CPU and hold the GIL throughout, so in the report's own process they
stall everything else; in a process of their own, started before the report's scan, they run on
another core while the home is scanned and analysed, and the first chart finds the engine warm.
What the process draws is what :func:`vakaudit.report.charts.chart_svg` draws in this one: it runs
that very function (the same source file: a process that imports another one is not used).

The protocol is one JSON object per line each way: first the process's ``{"ready": ...}``, then per
request ``{"chart", "data", "params"}`` the reply ``{"svg"}`` or ``{"error"}``, in order. A chart is
sent when a section asks for it and its reply taken when the page shows it
(:func:`vakaudit.report.charts.draw`), so the process draws while the report builds. Anything that
goes wrong with the process (it cannot start, dies, answers out of turn, takes longer than
:data:`REPLY_TIMEOUT_S`, or reports an error) makes :meth:`ChartProcess.result` return None, and
the chart is drawn in this process instead (where a real error in the chart then raises). The process
reads nothing but its standard input and writes nothing but its replies: no file, nothing of the
home. ``VAKAUDIT_CHARTS_IN_PROCESS=1`` draws every chart in the report's own process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import orjson

import vakaudit.report.charts as charts

#: seconds to wait for the process's ready line or for one chart before drawing in this process
REPLY_TIMEOUT_S = 120.0
IN_PROCESS_ENV = "VAKAUDIT_CHARTS_IN_PROCESS"


def _charts_file() -> str:
    """The source file of the charts module this process runs."""
    return str(Path(charts.__file__).resolve())


class ChartProcess:
    """A started chart process and the client side of its protocol.

    Requests are written as they come (:meth:`submit`); a thread started with the first one reads
    the process's lines, so its replies never wait on a full pipe, and :meth:`result` takes the
    reply of one request when it is needed: the report goes on building meanwhile. The thread
    starts with the first chart, not with the process: the report forks its scan's workers before
    that, never while it runs."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self._proc = proc
        self._failed = False
        self._sent = 0  # requests written; reply k is line k of the output (line 0: ready)
        self._lines: list[dict[str, Any] | None] = []
        self._ended = False
        self._cond = threading.Condition()
        self._reader: threading.Thread | None = None

    @classmethod
    def start(cls) -> ChartProcess | None:
        """Start one (None when it cannot be: no interpreter path, or the start itself failed)."""
        if not sys.executable or os.environ.get(IN_PROCESS_ENV, "") not in ("", "0"):
            return None
        # vakaudit as the environment has it, else from where this one was imported (appended: the
        # standard library stays first); the ready line says whether it is this very one
        root = str(Path(__file__).resolve().parents[2])
        code = f"import sys; sys.path.append({root!r}); from vakaudit.report.chart_process import main; main()"
        try:
            proc = subprocess.Popen(
                [sys.executable, "-c", code],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=os.path.abspath(os.sep),
            )
        except OSError:
            return None
        return cls(proc)

    def submit(self, chart: str, data: list[dict[str, Any]], params: Mapping[str, Any]) -> int | None:
        """Send one chart to be drawn: its ticket for :meth:`result` (None: the process is not usable)."""
        if self._failed:
            return None
        try:
            line = orjson.dumps({"chart": chart, "data": data, "params": dict(params)}) + b"\n"
        except orjson.JSONEncodeError:  # (a lone surrogate, say): this chart is drawn here, as it raises here
            return None
        if self._reader is None:
            self._reader = threading.Thread(target=self._read, name="vakaudit-chart-replies", daemon=True)
            self._reader.start()
        try:
            assert self._proc.stdin is not None
            self._proc.stdin.write(line)
            self._proc.stdin.flush()
        except (OSError, ValueError):
            return self._fail()
        self._sent += 1
        return self._sent

    def result(self, ticket: int) -> str | None:
        """vl-convert's SVG of the chart of ``ticket``, as the process drew it; None when it did not."""
        if self._failed:
            return None
        hello = self._line(0)
        if hello is None or hello.get("ready") != _charts_file():
            return self._fail()
        reply = self._line(ticket)
        if reply is None or not isinstance(reply.get("svg"), str):
            return self._fail()
        return reply["svg"]

    def _read(self) -> None:
        out: IO[bytes] | None = self._proc.stdout
        assert out is not None
        try:
            for raw in out:
                try:
                    value = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    value = None
                with self._cond:
                    self._lines.append(value if isinstance(value, dict) else None)
                    self._cond.notify_all()
        except (OSError, ValueError):  # the pipe closed under the reader (the process was ended)
            pass
        with self._cond:
            self._ended = True
            self._cond.notify_all()

    def _line(self, k: int) -> dict[str, Any] | None:
        """Line ``k`` of the process's output; None after :data:`REPLY_TIMEOUT_S`, at its end or for a
        line that is not a JSON object."""
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        with self._cond:
            while len(self._lines) <= k and not self._ended:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)
            return self._lines[k] if k < len(self._lines) else None

    def _fail(self) -> None:
        self._failed = True
        self.close()
        return None

    def close(self) -> None:
        """End the process: killed, since it holds nothing (no file, no lock), so a report that stops
        early (an error, a text format) never waits for an engine still starting."""
        proc = self._proc
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if self._reader is not None:
            self._reader.join(timeout=5)
        if proc.stdout is not None and (self._reader is None or not self._reader.is_alive()):
            proc.stdout.close()


def running() -> ChartProcess | None:
    """The chart process of the report being built in this process, if any."""
    return charts.PROCESS


@contextmanager
def chart_process() -> Iterator[ChartProcess | None]:
    """Start a chart process for the duration of the block (charts drawn meanwhile go to it)."""
    before = charts.PROCESS
    proc = ChartProcess.start()
    if proc is not None:
        charts.PROCESS = proc
    try:
        yield proc
    finally:
        charts.PROCESS = before
        if proc is not None:
            proc.close()


def main() -> None:
    """The process's side: warm the engine, say ready, then draw each request."""
    out = sys.stdout.buffer
    try:
        charts.warm_up()
        out.write(orjson.dumps({"ready": _charts_file()}) + b"\n")
    except Exception as exc:  # noqa: BLE001 - the report then draws in its own process
        out.write(orjson.dumps({"error": f"{type(exc).__name__}: {exc}"}) + b"\n")
        out.flush()
        return
    out.flush()
    for line in sys.stdin.buffer:
        try:
            req = orjson.loads(line)
            reply = {"svg": charts.chart_svg(req["chart"], req["data"], req["params"])}
        except Exception as exc:  # noqa: BLE001 - reported; the report draws that chart itself
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        out.write(orjson.dumps(reply) + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
