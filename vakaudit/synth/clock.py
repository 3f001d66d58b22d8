"""Deterministic time and ids for synthetic homes.

Every timestamp and id in a synthetic home comes from here, never from the wall clock or the OS
random source, so one seed and one set of options always give the same bytes.
"""

from __future__ import annotations

import random

from vakaudit.ledger.ids import format_ts, uuid7_from

__all__ = ["SynthClock", "IdSource", "DEFAULT_START_NS"]

DEFAULT_START_NS = 1_785_571_200_000_000_000
"""2026-08-01T08:00:00Z: the first instant of a synthetic home's history."""


class SynthClock:
    """A monotonic clock that only moves when told to, in nanoseconds on whole microseconds.

    Calling the instance (the ``clock=`` hook of ``SessionLog``) returns the current instant and then
    moves it forward by a small deterministic step, the time vak spends between two appends. The
    measured home is a macOS home, whose system clock has microsecond resolution, so chrono writes six
    fraction digits there (``…02.481220Z``, as home.md's examples); a Linux vak writes nine.
    """

    __slots__ = ("ns", "_rng")

    def __init__(self, start_ns: int = DEFAULT_START_NS, seed: int = 0) -> None:
        self.ns = start_ns
        self._rng = random.Random(f"clock:{seed}")

    def __call__(self) -> int:
        now = self.ns
        self.ns += (90 + self._rng.randrange(400)) * 1_000
        return now

    def advance_ms(self, ms: float) -> None:
        """Let ``ms`` milliseconds pass (model latency, tool run time, the user thinking)."""
        self.ns += (int(ms * 1_000) + self._rng.randrange(2)) * 1_000

    def advance_to(self, ns: int) -> None:
        """Jump forward to ``ns`` (never backwards)."""
        ns = -(-ns // 1_000) * 1_000
        if ns > self.ns:
            self.ns = ns

    def ts(self) -> str:
        """The current instant as vak writes it (RFC 3339, ``Z``)."""
        return format_ts(self.ns)

    def ts_plus00(self) -> str:
        """The current instant with a ``+00:00`` offset (memory headers, store.db ``ts``)."""
        return ts_plus00(self.ns)

    @property
    def ms(self) -> int:
        return self.ns // 1_000_000


def ts_plus00(unix_ns: int) -> str:
    """RFC 3339 with ``+00:00`` and 9 fraction digits, like chrono's ``to_rfc3339()``."""
    base = format_ts(unix_ns)[:-1]
    if "." not in base:
        base += ".000000000"
    else:
        head, frac = base.split(".")
        base = f"{head}.{frac.ljust(9, '0')}"
    return base + "+00:00"


class IdSource:
    """UUIDv7-shaped ids from a seeded stream, stamped with the clock's milliseconds."""

    __slots__ = ("_clock", "_rng")

    def __init__(self, clock: SynthClock, seed: int = 0) -> None:
        self._clock = clock
        self._rng = random.Random(f"ids:{seed}")

    def __call__(self) -> str:
        return uuid7_from(self._clock.ms, self._rng.randbytes(10))

    def hex(self, n: int) -> str:
        """``n`` lowercase hex digits (span ids, incident ids, …)."""
        return self._rng.randbytes((n + 1) // 2).hex()[:n]

    def nonzero_hex16(self) -> str:
        """A 16-hex-digit span id, never all zero (home.md §0.4)."""
        while True:
            h = self.hex(16)
            if h.strip("0"):
                return h
