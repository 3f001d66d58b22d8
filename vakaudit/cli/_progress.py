"""The one progress display of every command: a rich progress bar on standard error.

Library code reports progress through its optional callback: a :class:`~vakaudit.scan.ScanProgress`
from the scan, a :class:`~vakaudit.forensics.VerifyProgress` from ``verify``, a
:class:`~vakaudit.replay.ReplayProgress` from ``replay``, a :class:`~vakaudit.analyze.ScanReused`
when a cached scan answered, a short text for any other step, and ``(stage, done, total)`` from the synth. A :class:`ProgressDisplay` is that
callback. It draws only when standard error is a terminal (never on standard output, which carries
only results); off a terminal it prints nothing but the one line that says a cached scan was reused;
``quiet`` silences that too.
"""

from __future__ import annotations

import sys
from typing import Any


class ProgressDisplay:
    """A context manager and a progress callback (``display(event)``, ``display.count(stage, done, total)``)."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self.live = not quiet and sys.stderr.isatty()
        self._progress: Any = None
        self._tasks: dict[str, Any] = {}

    def __enter__(self) -> ProgressDisplay:
        if self.live:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[detail]}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def __call__(self, event: Any) -> None:
        # each event class is looked up only when its module is loaded: an event of a module that
        # was never imported cannot arrive, and the display does not import it to find that out
        home_mod = sys.modules.get("vakaudit.forensics.home")
        if home_mod is not None and isinstance(event, home_mod.VerifyProgress):
            mb = event.bytes_done / 1e6
            self._update(
                "verifying", event.files_done, max(event.files_total, 1),
                f"{event.files_done}/{event.files_total} files, {mb:.1f} MB",
            )  # fmt: skip
            return
        replay_mod = sys.modules.get("vakaudit.replay")
        if replay_mod is not None and isinstance(event, replay_mod.ReplayProgress):
            self._update(
                "replaying", event.ledgers_done, max(event.ledgers_total, 1),
                f"{event.ledgers_done}/{event.ledgers_total} ledgers, {event.steps_done} steps",
            )  # fmt: skip
            return
        from vakaudit.scan import ScanProgress

        opened = sys.modules.get("vakaudit.analyze._open")
        if isinstance(event, ScanProgress):
            mb = event.bytes_done / 1e6
            self._update(
                "scanning",
                event.bytes_done,
                max(event.bytes_total, 1),
                f"{event.files_done}/{event.files_total} files, {mb:.1f} MB",
            )
        elif opened is not None and isinstance(event, opened.ScanReused):
            self.note(f"scan: reused the cached scan in {event.out} (nothing changed in the home)")
        else:
            self.step(str(event))

    def count(self, stage: str, done: int, total: int) -> None:
        self._update(stage, done, max(total, 1), f"{done}/{total}")

    def step(self, text: str) -> None:
        """A step without a known length: the text of the one 'working' line."""
        self._update("working", None, None, text)

    def note(self, text: str) -> None:
        """One line on standard error, on a terminal or not (unless quiet)."""
        if self.quiet:
            return
        if self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False)
        else:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()

    def _update(self, name: str, done: int | None, total: int | None, detail: str) -> None:
        if self._progress is None:
            return
        task = self._tasks.get(name)
        if task is None:
            task = self._tasks[name] = self._progress.add_task(name, total=total, detail=detail)
        self._progress.update(task, completed=done or 0, total=total, detail=detail)
