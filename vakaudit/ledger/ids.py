"""Entry ids and timestamps as vak writes them (spec ledger.md §2.2).

- ids: UUIDv7, lowercase hyphenated, 36 characters;
- ``ts``: RFC 3339 UTC with ``Z`` in chrono's ``SecondsFormat::AutoSi`` layout: no fraction for whole
  seconds, otherwise 3, 6 or 9 fraction digits, the fewest that are exact.
"""

from __future__ import annotations

import os
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["new_uuid7", "uuid7_from", "format_ts", "parse_ts", "ts_ns", "now_ns"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def now_ns() -> int:
    """Wall clock in Unix nanoseconds (the default ledger clock)."""
    return time.time_ns()


def uuid7_from(unix_ms: int, rand: bytes) -> str:
    """Build a UUIDv7 string from a millisecond timestamp and 10 random bytes."""
    if len(rand) != 10:
        raise ValueError("uuid7 needs exactly 10 random bytes")
    ra = int.from_bytes(rand[:2], "big") & 0x0FFF
    rb = int.from_bytes(rand[2:], "big") & 0x3FFF_FFFF_FFFF_FFFF
    value = ((unix_ms & 0xFFFF_FFFF_FFFF) << 80) | (0x7 << 76) | (ra << 64) | (0b10 << 62) | rb
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def new_uuid7() -> str:
    """A fresh random UUIDv7 (current time)."""
    return uuid7_from(time.time_ns() // 1_000_000, os.urandom(10))


def format_ts(unix_ns: int) -> str:
    """Render Unix nanoseconds like chrono's ``to_rfc3339_opts(SecondsFormat::AutoSi, true)``."""
    secs, nanos = divmod(unix_ns, 1_000_000_000)
    dt = _EPOCH + timedelta(seconds=secs)
    base = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if nanos == 0:
        frac = ""
    elif nanos % 1_000_000 == 0:
        frac = f".{nanos // 1_000_000:03d}"
    elif nanos % 1_000 == 0:
        frac = f".{nanos // 1_000:06d}"
    else:
        frac = f".{nanos:09d}"
    return f"{base}{frac}Z"


_TS_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|z|[+-]\d{2}:\d{2})$")


def parse_ts(ts: str) -> int:
    """Parse any RFC 3339 timestamp (with ``Z`` or an offset) into Unix nanoseconds.

    Raises ``ValueError`` when ``ts`` is not RFC 3339.
    """
    m = _TS_RE.match(ts)
    if m is None:
        raise ValueError(f"not an RFC 3339 timestamp: {ts!r}")
    y, mo, d, h, mi, s, frac, off = m.groups()
    dt = datetime(int(y), int(mo), int(d), int(h), int(mi), min(int(s), 59), tzinfo=UTC)
    secs = int((dt - _EPOCH).total_seconds()) + (int(s) - min(int(s), 59))
    if off not in ("Z", "z"):
        sign = 1 if off[0] == "+" else -1
        secs -= sign * (int(off[1:3]) * 3600 + int(off[4:6]) * 60)
    nanos = int((frac or "0")[:9].ljust(9, "0"))
    return secs * 1_000_000_000 + nanos


def ts_ns(value: Any) -> int | None:
    """:func:`parse_ts` of any value: None when it is not an RFC 3339 string or names no instant (a
    day that does not exist). The one reading of a timestamp that every table, check and timeline
    uses (the compiled and Arrow fast paths of :mod:`vakaudit.artifacts._timestamps` are tested
    against it)."""
    if not isinstance(value, str):
        return None
    try:
        return parse_ts(value)
    except ValueError:
        return None
