"""Timestamp columns: RFC 3339 text as vakaudit reads it, to ``timestamp[us, UTC]``.

What a timestamp is, and which instant it names, is :func:`vakaudit.ledger.ids.ts_ns` (RFC 3339 with
``T``, ``t`` or a space, ``Z`` or an offset, any number of fraction digits, a leap second read as the
next second); every ``*_at`` column of every table takes it from here, value by value or a column at a
time. Microseconds are the instant's nanoseconds floored (the fraction's first six digits); an instant
outside the years 1-9999 (which a datetime cannot hold) is null, like text that is no timestamp.

A column whose every value is in vak's own form (``YYYY-MM-DDTHH:MM:SS[.f{1,9}]``, then ``Z`` as the
ledger writes it or ``±hh:mm`` as chrono's ``to_rfc3339`` does in other files) is converted by the
compiled rule (``linescan.ts_column``; the ledger reader applies it to ``ts_at``), with no Python per
value. Else it is cast by Arrow when every value has the form below, where Arrow's
ISO-8601 cast is known to name the same instant: seconds written 00-59, a valid month and day
number, at most nine fraction digits, ``Z`` or a ``±hh:mm`` offset, years 1000-9998 (so that no
offset moves the instant out of a datetime's range). Any other column is read value by value. Each
of the three is tested against the value-by-value reading. No I/O here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from vakaudit._native import linescan as _linescan
from vakaudit.artifacts import _declare as decl
from vakaudit.ledger.ids import ts_ns

if TYPE_CHECKING:
    import pyarrow as pa


__all__ = ["TIMESTAMP", "timestamp", "timestamps", "ts_us"]

#: every ``*_at`` column's type, declared (``TIMESTAMP.arrow()`` is the pyarrow type)
TIMESTAMP = decl.timestamp("us", "UTC")

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MIN_US = (datetime(1, 1, 1, tzinfo=UTC) - _EPOCH) // timedelta(microseconds=1)
_MAX_US = (datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC) - _EPOCH) // timedelta(microseconds=1)

_FORM = (
    r"^(?:[1-8]\d{3}|9[0-8]\d{2}|99[0-8]\d)-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])[T ](?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d"
    r"(?:\.\d{%s})?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$"
)
_ARROW_FORM = _FORM % "1,6"  # Arrow casts these to microseconds as they are
_ARROW_FORM_NS = _FORM % "1,9"  # these once the fraction is cut to six digits
_PAST_MICROS = r"(\.\d{6})\d+"


def ts_us(value: Any) -> int | None:
    """The instant ``value`` names in microseconds since the epoch (floored), else None."""
    ns = ts_ns(value)
    if ns is None:
        return None
    us = ns // 1000
    return us if _MIN_US <= us <= _MAX_US else None


def timestamp(value: Any) -> datetime | None:
    """:func:`ts_us` as an aware UTC datetime (one value, for readers that build rows one by one)."""
    us = ts_us(value)
    return None if us is None else _EPOCH + timedelta(microseconds=us)


def timestamps(values: pa.Array | Sequence[Any]) -> pa.Array:
    """:func:`ts_us` of every value (a string array, or a list of any values) as a ``TIMESTAMP`` array."""
    import pyarrow as pa

    ts_type = TIMESTAMP.arrow()
    if not isinstance(values, pa.Array):
        if not all(v is None or type(v) is str for v in values):
            return pa.array([ts_us(v) for v in values], ts_type)
        values = pa.array(values, pa.string())
    if values.null_count == len(values):
        return pa.nulls(len(values), ts_type)
    if _linescan is not None and values.type == pa.string():  # vak's own form, by the compiled reader's rule
        valid, offsets, data = values.buffers()
        got = _linescan.ts_column(offsets, b"" if data is None else data, valid, values.offset, len(values))
        if got is not None:
            return pa.Array.from_buffers(ts_type, len(values), [valid, pa.py_buffer(got)],
                                         null_count=values.null_count, offset=values.offset)  # fmt: skip
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        import pyarrow.compute as pc

        try:
            if pc.all(pc.match_substring_regex(values, _ARROW_FORM)).as_py() is not False:
                return values.cast(ts_type)
            if pc.all(pc.match_substring_regex(values, _ARROW_FORM_NS)).as_py() is not False:
                return pc.replace_substring_regex(values, _PAST_MICROS, r"\1").cast(ts_type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass  # a day the month does not have: value by value, which gives null for it
    return pa.array([ts_us(v) for v in values.to_pylist()], ts_type)
