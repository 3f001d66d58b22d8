"""One reading of a timestamp for every table: the value-by-value reference, the Arrow fast path of a
column, the sidecar readers and the ledger's ``ts_at`` all name the same instant for the same text.

Expectations are written out by hand (datetimes computed here from the text's parts), never taken
from the code under test.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pytest
from artifact_kind_helpers import run_reader

import vakaudit.artifacts._timestamps as T
from vakaudit.artifacts._timestamps import TIMESTAMP, timestamp, timestamps


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


VECTORS: list[tuple[object, datetime | None]] = [
    ("2026-01-01T00:00:00.123Z", utc(2026, 1, 1, 0, 0, 0, 123_000)),
    ("2026-11-30T23:59:59Z", utc(2026, 11, 30, 23, 59, 59)),
    ("2026-01-01T00:00:00.123456789Z", utc(2026, 1, 1, 0, 0, 0, 123_456)),  # digits past µs cut
    ("2026-01-01T00:00:00.1234567891234Z", utc(2026, 1, 1, 0, 0, 0, 123_456)),  # any number of digits
    ("2026-01-01T02:00:00+02:00", utc(2026, 1, 1)),
    ("2026-01-01T00:30:00.5-01:30", utc(2026, 1, 1, 2, 0, 0, 500_000)),
    ("2026-01-01T00:00:00-00:00", utc(2026, 1, 1)),
    ("2026-01-01 00:00:00Z", utc(2026, 1, 1)),  # RFC 3339 allows a space
    ("2026-01-01t00:00:00z", utc(2026, 1, 1)),  # and lower case
    ("2026-12-31T23:59:60Z", utc(2027, 1, 1)),  # a leap second: the next second, as the ledger check reads it
    ("1969-12-31T23:59:59.9999999Z", utc(1969, 12, 31, 23, 59, 59, 999_999)),  # floored, not rounded
    ("0999-03-04T05:06:07Z", utc(999, 3, 4, 5, 6, 7)),
    ("2024-02-29T12:00:00Z", utc(2024, 2, 29, 12)),
    # no instant, or not RFC 3339: null
    ("2026-02-30T00:00:00Z", None),
    ("2025-02-29T00:00:00Z", None),
    ("2026-01-01T00:00:00", None),  # no zone
    ("2026-01-01T00:00Z", None),  # no seconds
    ("2026-01-01T00:00:00+0200", None),  # offset without its colon
    ("2026-01-01T00:00:00+02", None),
    ("2026-01-01", None),
    ("20260101T000000Z", None),
    ("2026-01-01T00:00:00.Z", None),
    ("2026-01-01T24:00:00Z", None),
    ("0000-01-01T00:00:00Z", None),
    ("9999-12-31T23:59:59-01:00", None),  # year 10000 in UTC
    ("garbage", None),
    ("", None),
    (None, None),
]


@pytest.mark.parametrize(("text", "want"), VECTORS, ids=[repr(v) for v, _ in VECTORS])
def test_each_form_names_the_instant_written_out_by_hand(text: object, want: datetime | None) -> None:
    assert timestamp(text) == want
    assert timestamps([text]).to_pylist() == [want]
    assert timestamps(pa.array([text], pa.string())).to_pylist() == [want]


def test_a_column_of_every_form_is_each_value_read_alone() -> None:
    texts = [t for t, _ in VECTORS]
    got = timestamps(pa.array(texts, pa.string()))
    assert got.type == pa.timestamp("us", tz="UTC") == TIMESTAMP.arrow()
    assert got.to_pylist() == [w for _, w in VECTORS]


def test_values_that_are_not_text_are_null() -> None:
    assert timestamps([1_700_000_000, 1.5, True, {"ts": "x"}, "2026-01-01T00:00:00Z"]).to_pylist() == [
        None, None, None, None, utc(2026, 1, 1)
    ]  # fmt: skip
    assert timestamp(1_700_000_000) is None


def _random_text(rnd: random.Random) -> str:
    """A timestamp in or near the form Arrow casts: real and impossible days, 0-12 fraction digits,
    Z, z or offsets, T, t or a space, leap seconds, hour 24."""
    def pick(common: int, rare: list[int], p: float = 0.1) -> int:
        return rnd.choice(rare) if rnd.random() < p else common

    y = rnd.choice([rnd.randint(1000, 9999), rnd.randint(1, 999), 9999, 1970, 2000, 2100, 2024])
    mo = pick(rnd.randint(1, 12), [2, 0, 13])
    d = pick(rnd.randint(1, 28), [29, 30, 31, 0, 32], 0.25)
    h = pick(rnd.randint(0, 23), [23, 24])
    mi, se = rnd.randint(0, 59), pick(rnd.randint(0, 59), [59, 60])
    sep = rnd.choice("TTTTt ")
    frac = "" if rnd.random() < 0.3 else "." + "".join(rnd.choice("0123456789") for _ in range(rnd.randint(1, 12)))
    zone = rnd.choice(["Z", "Z", "z", "+00:00", f"{rnd.choice('+-')}{rnd.randint(0, 23):02d}:{rnd.randint(0, 59):02d}"])
    return f"{y:04d}-{mo:02d}-{d:02d}{sep}{h:02d}:{mi:02d}:{se:02d}{frac}{zone}"


def _by_hand(text: str) -> datetime | None:
    """The instant of ``text`` worked out from its parts (RFC 3339; a leap second is the next second)."""
    date, rest = text[:10], text[11:]
    y, mo, d = int(date[:4]), int(date[5:7]), int(date[8:10])
    h, mi, se = int(rest[0:2]), int(rest[3:5]), int(rest[6:8])
    tail = rest[8:]
    micros = 0
    if tail.startswith("."):
        n = 1
        while n < len(tail) and tail[n].isdigit():
            n += 1
        digits = tail[1:n]
        micros = int((digits + "000000")[:6])
        tail = tail[n:]
    if h > 23 or mi > 59 or se > 60:
        return None
    try:
        base = datetime(y, mo, d, h, mi, min(se, 59), tzinfo=UTC)
    except ValueError:
        return None
    offset = timedelta(0)
    if tail not in ("Z", "z"):
        sign = 1 if tail[0] == "+" else -1
        offset = sign * timedelta(hours=int(tail[1:3]), minutes=int(tail[4:6]))
    try:
        return base + timedelta(seconds=se - min(se, 59), microseconds=micros) - offset
    except OverflowError:
        return None


@pytest.fixture(params=["compiled", "arrow"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Columns converted with the compiled rule for vak's form first (when built), or without it."""
    if request.param == "compiled":
        if T._linescan is None:
            pytest.skip("the compiled extension is not built")  # the arrow run covers this build
    else:
        monkeypatch.setattr(T, "_linescan", None)
    return request.param


def test_random_texts_agree_with_the_hand_reading_alone_and_in_columns(path: str) -> None:
    rnd = random.Random(20261203)
    texts = [_random_text(rnd) for _ in range(3000)]
    want = [_by_hand(t) for t in texts]
    assert sum(w is not None for w in want) > 1000 and sum(w is None for w in want) > 300
    assert [timestamp(t) for t in texts] == want
    for t, w in zip(texts, want, strict=True):  # alone: a value Arrow casts goes through the cast
        assert timestamps(pa.array([t], pa.string())).to_pylist() == [w], t
    for i in range(0, len(texts), 250):  # in columns: one impossible day sends a column value by value
        assert timestamps(pa.array(texts[i : i + 250], pa.string())).to_pylist() == want[i : i + 250]


def test_the_compiled_rule_takes_vak_form_columns_and_declines_any_other() -> None:
    if T._linescan is None:
        pytest.skip("the compiled extension is not built")
    rnd = random.Random(7)
    texts = [t for t in (_random_text(rnd) for _ in range(4000)) if t[10] == "T" and not t.endswith("z")]
    # vak's form: seconds 00-59, at most nine fraction digits, Z or an offset
    real = [t for t in texts if _by_hand(t) is not None and int(t[17:19]) < 60
            and len(t) <= (30 if t.endswith("Z") else 35)]  # fmt: skip
    assert sum(t.endswith("Z") for t in real) > 300 and sum(not t.endswith("Z") for t in real) > 300
    assert len(real) > 500
    arr = pa.array([None, *real], pa.string())
    valid, offsets, data = arr.buffers()
    got = T._linescan.ts_column(offsets, data, valid, arr.offset, len(arr))
    epoch = utc(1970, 1, 1)
    want = [0] + [(_by_hand(t) - epoch) // timedelta(microseconds=1) for t in real]
    assert [int.from_bytes(got[i * 8 : i * 8 + 8], "little", signed=True) for i in range(len(arr))] == want
    sliced = arr.slice(3, 100)
    assert timestamps(sliced).to_pylist() == [_by_hand(t) for t in real[2:102]]
    for other in ("2026-01-01T00:00:00+0000", "2026-01-01T00:00:00+24:00", "2026-01-01 00:00:00Z",
                  "0001-01-01T00:30:00+01:00", "9999-12-31T23:59:59-00:01", "2026-02-30T00:00:00Z",
                  "2026-01-01T00:00:60Z", "2026-01-01T00:00:00.1234567891Z", "2026-01-01T00:00:00z"):  # fmt: skip
        bad = pa.array(["2026-01-01T00:00:00Z", other], pa.string())
        v, o, d = bad.buffers()
        assert T._linescan.ts_column(o, d, v, 0, 2) is None, other


def test_a_column_in_the_cast_form_is_cast_not_read_value_by_value(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    real = T.ts_us
    monkeypatch.setattr(T, "ts_us", lambda v: calls.append(v) or real(v))
    texts = ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.123456789+05:30", None, "2026-07-01 12:00:00.5Z"]
    got = timestamps(pa.array(texts, pa.string())).to_pylist()
    assert calls == []
    assert got == [utc(2026, 1, 1), utc(2025, 12, 31, 18, 30, 0, 123_456), None, utc(2026, 7, 1, 12, 0, 0, 500_000)]
    timestamps(pa.array(["2026-01-01T00:00:00Z", "2026-02-30T00:00:00Z"], pa.string()))
    assert calls == ["2026-01-01T00:00:00Z", "2026-02-30T00:00:00Z"]  # the cast refused: value by value


ODD = ["2026-12-31T23:59:60Z", "2026-01-01T00:00Z", "2026-01-01T05:00:00+05:00", "2026-02-30T00:00:00Z"]
ODD_WANT = [utc(2027, 1, 1), None, utc(2026, 1, 1), None]


def test_a_sidecar_and_a_ledger_read_the_same_text_as_the_same_instant(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "agents" / "vak" / "sessions" / "ws").mkdir(parents=True)
    cost = b"".join(
        b'{"ts":"%s","model":"m","session_id":"s","input_tokens":1,"output_tokens":1}\n' % t.encode() for t in ODD
    )
    (home / "agents" / "vak" / "cost-log.jsonl").write_bytes(cost)
    rows, _ = run_reader("cost_log", home, "agents/vak/cost-log.jsonl")
    assert [r["ts_at"] for r in rows] == ODD_WANT
    ledger = b"".join(
        b'{"id":"0199a8c2-4b10-7000-8000-00000000000%d","parent_id":null,"ts":"%s","kind":"activity",'
        b'"activity":{"kind":"note"}}\n' % (i, t.encode())
        for i, t in enumerate(ODD)
    )
    (home / "agents" / "vak" / "sessions" / "ws" / "s.jsonl").write_bytes(ledger)
    rows, _ = run_reader("session_ledger", home, "agents/vak/sessions/ws/s.jsonl", session_id="s")
    # an envelope whose ts is not RFC 3339 is no entry (ledger.md §2.2): that line's row has no ts
    assert [r["ts"] for r in rows] == [ODD[0], None, ODD[2], ODD[3]]
    assert [r["ts_at"] for r in rows] == ODD_WANT
