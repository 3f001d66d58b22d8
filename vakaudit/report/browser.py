"""Open a rendered report in headless Chromium over the DevTools protocol (no third-party client).

Used by the browser tests and by ``reports/make.py`` to check that a report opens from a file URL
without console errors, that every chart rendered, that no script from the data ran, and to take
full-page screenshots in light and dark schemes and at narrow widths. A minimal WebSocket client
(RFC 6455, client-masked frames) speaks to the browser; nothing here touches a home.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vakaudit.errors import VakauditError

CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "headless_shell")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--hide-scrollbars",
    "--mute-audio",
)
_LISTENING = re.compile(r"DevTools listening on (ws://[^\s]+)")


class BrowserError(VakauditError):
    """Chromium is missing, did not start, or did not answer."""


def find_chromium() -> str | None:
    for name in CHROMIUM_CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass(slots=True)
class PageResult:
    """What a page did: console errors, exceptions, evaluated values and screenshots (PNG bytes)."""

    console_errors: list[str] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)
    screenshots: dict[str, bytes] = field(default_factory=dict)


class _WebSocket:
    def __init__(self, url: str, timeout: float) -> None:
        m = re.match(r"ws://([^/:]+):(\d+)(/.*)", url)
        if not m:
            raise BrowserError(f"unexpected DevTools URL {url!r}")
        host, port, path = m.group(1), int(m.group(2)), m.group(3)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        req = (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(req.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise BrowserError("DevTools closed the connection during the handshake")
            head += chunk
        status, _, rest = head.partition(b"\r\n\r\n")
        if b" 101 " not in status.split(b"\r\n", 1)[0]:
            raise BrowserError(f"DevTools refused the WebSocket: {status[:80]!r}")
        self.buf = rest

    def send(self, text: str) -> None:
        data = text.encode()
        header = bytearray([0x81])
        n = len(data)
        if n < 126:
            header.append(0x80 | n)
        elif n < 1 << 16:
            header.append(0x80 | 126)
            header += struct.pack(">H", n)
        else:
            header.append(0x80 | 127)
            header += struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(bytes(header) + mask + masked)

    def _read(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buf)))
            if not chunk:
                raise BrowserError("DevTools closed the connection")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self) -> str:
        parts: list[bytes] = []
        while True:
            b0, b1 = self._read(2)
            opcode, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                raise BrowserError("DevTools closed the WebSocket")
            if opcode in (0x9, 0xA):
                continue
            parts.append(payload)
            if b0 & 0x80:
                return b"".join(parts).decode()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class Session:
    """One page target attached with a flat session id."""

    def __init__(self, ws: _WebSocket, timeout: float) -> None:
        self.ws = ws
        self.timeout = timeout
        self.next_id = 0
        self.session_id: str | None = None
        self.events: list[dict[str, Any]] = []

    def call(
        self, method: str, params: dict[str, Any] | None = None, *, session: bool = True
    ) -> dict[str, Any]:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session_id:
            msg["sessionId"] = self.session_id
        self.ws.send(json.dumps(msg))
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)
        raise BrowserError(f"{method}: no answer within {self.timeout} s")

    def wait_event(self, name: str) -> dict[str, Any]:
        for i, ev in enumerate(self.events):
            if ev.get("method") == name:
                return self.events.pop(i)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            ev = json.loads(self.ws.recv())
            if ev.get("method") == name:
                return ev
            if "method" in ev:
                self.events.append(ev)
        raise BrowserError(f"no {name} event within {self.timeout} s")

    def evaluate(self, expression: str) -> Any:
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in r:
            raise BrowserError(f"evaluate failed: {r['exceptionDetails'].get('text')}")
        return r.get("result", {}).get("value")


@contextmanager
def chromium(binary: str | None = None, *, timeout: float = 60.0) -> Iterator[Session]:
    """Start headless Chromium with remote debugging on a free port and yield a page session."""
    exe = binary or find_chromium()
    if exe is None:
        raise BrowserError("no chromium found on PATH (Debian: apt-get install chromium)")
    profile = tempfile.mkdtemp(prefix="vakaudit-chromium-")
    proc = subprocess.Popen(
        [exe, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    ws = None
    try:
        url = None
        deadline = time.monotonic() + timeout
        assert proc.stderr is not None
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                if proc.poll() is not None:
                    break
                continue
            m = _LISTENING.search(line)
            if m:
                url = m.group(1)
                break
        if url is None:
            raise BrowserError(f"chromium did not start (exit {proc.poll()})")
        ws = _WebSocket(url, timeout)
        s = Session(ws, timeout)
        target = s.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        s.session_id = s.call("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)[
            "sessionId"
        ]
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            s.call(domain)
        yield s
    finally:
        if ws is not None:
            ws.close()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


def _errors(events: list[dict[str, Any]]) -> list[str]:
    out = []
    for ev in events:
        m, p = ev.get("method"), ev.get("params", {})
        if m == "Runtime.exceptionThrown":
            out.append("exception: " + str(p.get("exceptionDetails", {}).get("text")))
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert", "warning"):
            out.append(
                "console: " + " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", []))
            )
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
            out.append("log: " + str(p["entry"].get("text")))
    return out


def open_report(
    path: str | os.PathLike[str],
    *,
    checks: dict[str, str] | None = None,
    screenshots: dict[str, tuple[int, str]] | None = None,
    binary: str | None = None,
    settle_ms: int = 300,
    width: int = 1280,
    scheme: str = "light",
) -> PageResult:
    """Open ``path`` from a file URL, evaluate ``checks`` (name -> JS expression) and take the full-page
    ``screenshots`` (name -> (viewport width, "light" | "dark")). Console errors, failed loads and
    exceptions of the page are collected from the first load on. ``width`` and ``scheme`` set the
    viewport and ``prefers-color-scheme`` the checks run under."""
    url = Path(path).resolve().as_uri()
    result = PageResult()
    with chromium(binary) as s:
        s.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False},
        )
        s.call("Page.navigate", {"url": url})
        s.wait_event("Page.loadEventFired")
        time.sleep(settle_ms / 1000)
        for name, expr in (checks or {}).items():
            result.values[name] = s.evaluate(expr)
        for name, (width, scheme) in (screenshots or {}).items():
            s.call(
                "Emulation.setEmulatedMedia",
                {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
            )
            s.call(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600},
            )
            time.sleep(settle_ms / 1000)
            height = int(s.evaluate("Math.ceil(document.documentElement.scrollHeight)") or 900)
            s.call(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
            )
            time.sleep(settle_ms / 1000)
            shot = s.call(
                "Page.captureScreenshot",
                {
                    "format": "png",
                    "captureBeyondViewport": True,
                    "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
                },
            )
            result.screenshots[name] = base64.b64decode(shot["data"])
        # drain events that arrived meanwhile
        s.call("Runtime.evaluate", {"expression": "0"})
        result.console_errors = _errors(s.events)
    return result


__all__ = ["BrowserError", "PageResult", "chromium", "find_chromium", "open_report"]
