"""Measured read scaling: time the Python equivalents of the turn-path reads against home size.

The reference capacity report classifies each read on vak's turn path as *flat*, *session* or
*home* by reading the code. This module measures instead: it builds synthetic homes of growing
size in a temporary directory (no fsync, never a user's home), times a Python equivalent of each
read, fits cost against size and classifies each read from the fit.

The session ledgers are written and read by :mod:`vakaudit.ledger`, the one definition of their
format: :class:`~vakaudit.ledger.SessionLog` appends every entry (envelope, ``prev_hash`` chain,
serde_json serialization) with a seeded id stream and an injected clock, so one seed writes the same
bytes, and every read of a ledger here goes through it or its reader
(:class:`~vakaudit.ledger.records.LedgerReader`); nothing here frames, parses or hashes a ledger line.

Two sweeps are built for every size ``T`` (turns in the home):

- ``home`` sweep: ``T`` turns spread over sessions of a fixed length (23 turns, the reference
  home's 1 386 turns / 60 sessions); the session being resumed stays the same length.
- ``session`` sweep: the same ``T`` turns in one single conversation.

A read whose cost grows with ``T`` in the home sweep scales with the *home*; one that grows only in
the session sweep scales with the *session*; one that grows in neither is *flat*. Growth is judged
by the exponent ``k`` of a log-log fit ``cost ~ T^k`` (``k >= 0.5`` grows); the linear slope
(microseconds per 1 000 turns) is reported beside it.

The synthetic entries are smaller than the reference home's (about 8 KB per turn instead of
66 KB) so that a 20 000-turn sweep stays within a few hundred MB; absolute times therefore
understate vak's, the scaling class does not depend on it. Nothing here prints.
"""

from __future__ import annotations

import json
import math
import os
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from vakaudit.artifacts.store_db import SCHEMA_V1
from vakaudit.errors import UsageError
from vakaudit.ledger.entry import Entry
from vakaudit.ledger.entry import EntryKind as K
from vakaudit.ledger.ids import format_ts, uuid7_from
from vakaudit.ledger.jsonenc import dumps
from vakaudit.ledger.log import SessionLog
from vakaudit.ledger.records import LedgerReader, ts_key
from vakaudit.outputs import write_output

DEFAULT_TURNS = (1000, 5000, 20000)
SESSION_TURNS = 23  # reference home: 1 386 turns over 60 sessions
ROUTING_ROWS_PER_TURN = 2.3  # reference report, routing-evidence rows per turn
COMMITMENT_EVENTS_PER_TURN = 0.5
LISTING_ENTRY_LIMIT = 401  # GET /sessions parses up to 401 entries per file
STORE_LISTING_LIMIT = 100
GROWTH_EXPONENT = 0.5  # k at or above this: the cost grows with the swept size
RESOLUTION_MS = 0.05  # growth smaller than this across a sweep is timer noise, not scaling
RESULT_FILE = "readscale.json"
EVIDENCE_TTL_DAYS = 30
_BASE_NS = 1_787_000_000 * 10**9  # fixed synthetic clock origin (2026-08-17)


@dataclass(frozen=True, slots=True)
class ReadSpec:
    """One read on vak's turn path and the vak function it stands for."""

    name: str
    vak_function: str
    what: str


READS: tuple[ReadSpec, ...] = (
    ReadSpec(
        "ledger_open_verify",
        "SessionLog::open",
        "read the whole ledger, SHA-256 every line, parse every entry",
    ),
    ReadSpec(
        "request_admission_scan",
        "SessionLog::has_request_admission",
        "linear scan of the parsed entries for an activity carrying the request id",
    ),
    ReadSpec(
        "request_admission_set",
        "has_request_admission with a request_ids set",
        "one lookup in a set maintained on append",
    ),
    ReadSpec(
        "turn_index_rebuild",
        "TurnIndex::from_log",
        "vakaudit.ledger TurnIndex over the active chain, rebuilt from the entry vector",
    ),
    ReadSpec(
        "routing_evidence_snapshot",
        "EvidenceLedger::snapshot",
        "parse the whole routing-evidence file, drop rows past the 30-day TTL, aggregate per leg",
    ),
    ReadSpec(
        "commitment_replay", "CommitmentLedger::get / open", "replay every commitment event to project one"
    ),
    ReadSpec(
        "session_listing_parse",
        "GET /sessions (file walk)",
        "open every session file and parse up to 401 entries for title and header",
    ),
    ReadSpec(
        "session_listing_store",
        "GET /sessions (store.db)",
        "one query against store.db for the newest 100 sessions (header rows by ts; store v1 indexes)",
    ),
    ReadSpec(
        "store_import_session",
        "Store::import_session",
        "re-read the whole session JSONL and probe every id with one SELECT",
    ),
)


@dataclass(frozen=True, slots=True)
class ReadFit:
    """Fitted cost of one read in both sweeps, and the class derived from them."""

    name: str
    vak_function: str
    what: str
    read_class: str  # flat | session | home
    home_exponent: float  # k of cost ~ T^k, home sweep
    session_exponent: float  # k of cost ~ T^k, session sweep
    home_slope_us_per_kturn: float  # linear fit, microseconds per 1 000 home turns
    session_slope_us_per_kturn: float
    home_ms: list[float]  # measured cost per size, milliseconds (best of repeats)
    session_ms: list[float]


@dataclass(slots=True)
class ReadScaleResult:
    """Measurements of every read at every size, plus the fits. JSON-serializable via ``to_dict``."""

    turns: list[int]
    session_turns: int
    repeats: int
    reads: list[ReadFit]
    method: str
    sizes: list[dict[str, Any]] = field(default_factory=list)  # bytes and counts of each built home
    stored_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReadScaleResult:
        reads = [ReadFit(**r) for r in data["reads"]]
        return cls(
            turns=list(data["turns"]),
            session_turns=int(data["session_turns"]),
            repeats=int(data["repeats"]),
            reads=reads,
            method=data["method"],
            sizes=list(data.get("sizes", [])),
            stored_at=data.get("stored_at"),
        )

    def read(self, name: str) -> ReadFit:
        for r in self.reads:
            if r.name == name:
                return r
        raise KeyError(name)


METHOD = (
    "measured: synthetic homes built per size (home sweep: sessions of {s} turns; session sweep: one "
    "session); each read timed as the best of {r} samples with time.perf_counter_ns, a sample looping a "
    "fast read until it lasts 2 ms; class from the "
    "log-log exponent k of cost against turns (k >= {g} grows): home if it grows in the home sweep, "
    "session if only in the session sweep, else flat"
)


# ---------------------------------------------------------------------------------------------
# synthetic homes


ENTRY_STEP_NS = 1_500_000_000  # the synthetic clock moves 1.5 s per entry appended


class _Clock:
    """The scratch home's clock (the ``clock=`` hook of :class:`~vakaudit.ledger.SessionLog`): each call
    returns the current instant and moves it on by one entry's step; :meth:`new_id` stamps a UUIDv7
    with it from a seeded stream, so one seed always writes the same bytes."""

    __slots__ = ("ns", "_rng")

    def __init__(self, seed: int) -> None:
        self.ns = _BASE_NS
        self._rng = random.Random(seed)

    def __call__(self) -> int:
        now = self.ns
        self.ns += ENTRY_STEP_NS
        return now

    def new_id(self) -> str:
        return uuid7_from(self.ns // 1_000_000, self._rng.randbytes(10))


_TOOL_SCHEMAS = [
    {"name": f"tool_{i}", "description": "d" * 120, "input_schema": {"type": "object", "properties": {}}}
    for i in range(12)
]


def _write_turn(log: SessionLog, n: int) -> None:
    """One turn of the reference shape: binding, goal update, prompt, intent, 2 assistant messages,
    one tool result, 2 receipts, 3 activities (13 entries; the binding is shrunk to ~3 KB)."""
    log.append(
        K.TURN_CAPABILITIES_BOUND,
        {
            "epoch": 1,
            "capability_ids": ["Tool:read", "Tool:bash"],
            "excluded_ids": [],
            "system_prompt": "You are Vak. " * 40,
            "tool_schemas": _TOOL_SCHEMAS,
        },
    )
    log.append(K.GOAL_UPDATE, {"revision": n, "relation": "new", "request": f"request {n}"})
    directive = log.append_message({"role": "user", "content": [{"type": "text", "text": f"turn {n}"}]}).id
    log.append(
        K.INTENT,
        {"reading": {"act": "answer", "domains": []}, "strands": [], "engagement": {}, "provenance": {}},
    )
    log.append_activity(f"adm-{n}", "run", "succeeded", "admitted", turn=n, data={"request_id": f"req-{n}"})
    log.append_message(
        {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{n}", "name": "read", "input": {}}]}
    )
    log.append_message(
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": "x" * 600}]}
    )
    for a in range(2):
        log.append_activity(f"a{n}-{a}", "diagnostic", "succeeded", "l", turn=n)
    log.append(
        K.RECEIPT,
        {
            "purpose": "execute",
            "provider": "p",
            "model": "m",
            "attempts": [{"ordinal": 0, "settlement": "ok"}],
        },
    )
    log.append_message(
        {"role": "assistant", "content": [{"type": "text", "text": "answer " * 40}]}, meta={"turn": directive}
    )
    log.append(
        K.RECEIPT,
        {
            "purpose": "summarize",
            "provider": "p",
            "model": "m",
            "attempts": [{"ordinal": 0, "settlement": "ok"}],
        },
    )
    log.append(K.PRESENTATION, {"turn_id": directive, "payload": {}})


@dataclass(frozen=True, slots=True)
class _Home:
    root: Path
    sessions_dir: Path
    current: Path  # the session being resumed
    current_id: str
    routing: Path
    commitments: Path
    store: Path
    commitment_probe: str
    now_ns: int  # the end of the home's history: the instant its reads are timed at
    info: dict[str, Any]


def build_scale_home(root: Path, turns: int, session_turns: int, *, seed: int = 7) -> _Home:
    """Write a synthetic agent home of ``turns`` turns in sessions of ``session_turns`` turns."""
    clock = _Clock(seed)
    agent = root / "agents" / "vak"
    sessions_dir = agent / "sessions" / "0123456789abcdef"
    store_dir = root / "cache"
    store_dir.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(store_dir / "store.db")
    db.executescript(SCHEMA_V1)
    remaining = turns
    n = 0
    sessions = 0
    current: Path | None = None
    current_id = ""
    while remaining > 0:
        # the remainder goes first, so the session being resumed (the last) always has full length
        length = remaining % session_turns or session_turns
        sid = clock.new_id()
        path = sessions_dir / f"{sid}.jsonl"
        header = {
            "session_id": sid,
            "created_at": format_ts(clock.ns),
            "cwd": "/w",
            "contract": {"app_version": "3.5.1"},
        }
        with SessionLog.create(path, header, clock=clock, new_id=clock.new_id, fsync=False) as log:
            for _ in range(length):
                n += 1
                _write_turn(log, n)
            db.executemany(
                "INSERT INTO entries(entry_id, session_id, project_hash, ts, kind) VALUES (?,?,?,?,?)",
                [(e.id, sid, "0123456789abcdef", e.ts, e.kind) for e in log.entries],
            )
        sessions += 1
        remaining -= length
        current, current_id = path, sid
    db.commit()
    db.close()
    assert current is not None
    # routing evidence: 2.3 rows per turn, spread over the clock so part of it is past the TTL
    routing = agent / "routing-evidence.jsonl"
    end_ns = clock.ns
    span = max(end_ns - _BASE_NS, 1)
    rows = int(round(turns * ROUTING_ROWS_PER_TURN))
    with open(routing, "wb") as fh:
        for i in range(rows):
            ts_ns = _BASE_NS + span * i // max(rows, 1) - 40 * 86400 * 10**9 * (i % 3 == 0)
            row = {"ts": format_ts(ts_ns), "provider": "p", "model": f"m{i % 3}", "outcome": "success",
                   "latency_ms": 900 + i % 700}  # fmt: skip
            fh.write(dumps(row) + b"\n")
    commitments = agent / "commitments.jsonl"
    events = max(1, int(turns * COMMITMENT_EVENTS_PER_TURN))
    cids = [clock.new_id() for _ in range(max(1, events // 10))]
    with open(commitments, "wb") as fh:
        for i in range(events):
            event = {"event_id": clock.new_id(), "commitment_id": cids[i % len(cids)], "ts": format_ts(_BASE_NS + i),
                     "kind": "opened" if i < len(cids) else "episode-ended", "spend_usd": 0.01}  # fmt: skip
            fh.write(dumps(event) + b"\n")
    info = {
        "turns": turns,
        "sessions": sessions,
        "ledger_bytes": sum(p.stat().st_size for p in sessions_dir.glob("*.jsonl")),
        "current_session_bytes": current.stat().st_size,
        "routing_rows": rows,
        "commitment_events": events,
    }
    store = store_dir / "store.db"
    return _Home(root, sessions_dir, current, current_id, routing, commitments, store, cids[0], end_ns, info)


# ---------------------------------------------------------------------------------------------
# the reads (Python equivalents)


def _admission_scan(entries: list[Entry], rid: str) -> bool:
    """vak's ``has_request_admission`` before a set: every parsed entry of the file, in order, until an
    activity whose ``data.request_id`` is ``rid`` (O(entries))."""
    activity = K.ACTIVITY.value
    for e in entries:
        if e.kind == activity:
            data = e.payload.get("data")
            if isinstance(data, dict) and data.get("request_id") == rid:
                return True
    return False


def _routing_snapshot(path: Path, now_ns: int) -> dict[tuple[str, str], tuple[int, float]]:
    cutoff = ts_key(format_ts(now_ns - EVIDENCE_TTL_DAYS * 86400 * 10**9))
    lat: dict[tuple[str, str], list[int]] = {}
    with open(path, "rb") as fh:
        for raw in fh:
            try:
                row = json.loads(raw)
            except ValueError:
                continue
            key = ts_key(row["ts"])
            if key is None or key < cutoff:
                continue
            leg = (row["provider"], row["model"])
            if row["outcome"] == "success":
                lat.setdefault(leg, []).append(row["latency_ms"])
    return {k: (len(v), statistics.median(v)) for k, v in lat.items()}


def _commitment_replay(path: Path, cid: str) -> int:
    state = 0
    with open(path, "rb") as fh:
        for raw in fh:
            try:
                ev = json.loads(raw)
            except ValueError:
                continue
            if ev.get("commitment_id") == cid:
                state += 1
    return state


def _iter_entries(path: Path) -> Iterator[Entry]:
    """The entries of one ledger file in file order, read by the ledger's one reader (a line that is
    no entry is left out); each payload is decoded when first read."""
    with open(path, "rb") as fh:
        for rec in LedgerReader(fh.read).records():
            if rec.envelope is not None:
                yield Entry.lazy(rec.raw, rec.envelope)


def _listing_parse(sessions_dir: Path) -> list[tuple[str, str]]:
    header, message = K.HEADER.value, K.MESSAGE.value
    out = []
    for path in sorted(sessions_dir.glob("*.jsonl")):
        title = ""
        header_ts = ""
        for i, e in enumerate(_iter_entries(path)):
            if i >= LISTING_ENTRY_LIMIT:
                break
            if e.kind == header:
                header_ts = e.ts
            elif not title and e.kind == message and e.role == "user":
                title = str((e.message.get("content") or [{}])[0].get("text", ""))[:80]
        out.append((header_ts, title))
    return out


def _listing_store(db: sqlite3.Connection) -> list[tuple[str, str]]:
    return db.execute(
        "SELECT session_id, ts FROM entries WHERE kind = ? ORDER BY ts DESC LIMIT ?",
        (K.HEADER.value, STORE_LISTING_LIMIT),
    ).fetchall()


def _store_import(path: Path, db: sqlite3.Connection) -> int:
    known = 0
    for e in _iter_entries(path):
        if db.execute("SELECT 1 FROM entries WHERE entry_id = ?", (e.id,)).fetchone():
            known += 1
    return known


MIN_SAMPLE_NS = 2_000_000  # a timed sample loops a fast read until it lasts at least 2 ms


def _time_best(fn: Callable[[], Any], repeats: int) -> float:
    """Milliseconds per call: best of ``repeats`` samples, each looping the read enough times to last
    ``MIN_SAMPLE_NS`` (timeit's autorange idea), so microsecond reads are not lost in timer noise."""
    loops = 1
    while True:
        t0 = time.perf_counter_ns()
        for _ in range(loops):
            fn()
        took = time.perf_counter_ns() - t0
        if took >= MIN_SAMPLE_NS or loops >= 1 << 20:
            break
        loops *= 10 if took * 10 < MIN_SAMPLE_NS else 2
    best = took / loops
    for _ in range(repeats - 1):
        t0 = time.perf_counter_ns()
        for _ in range(loops):
            fn()
        best = min(best, (time.perf_counter_ns() - t0) / loops)
    return best / 1e6


def _measure(home: _Home, repeats: int) -> dict[str, float]:
    log = SessionLog.open_read_only(home.current)
    for e in log.entries:  # vak's entries are parsed in memory: decode what the admission scan reads once
        if e.kind == K.ACTIVITY:
            e.payload  # noqa: B018 - decoded and kept
    rid = "req-absent"  # a retry of a new request: the scan reads every entry
    db = sqlite3.connect(f"file:{quote(str(home.store))}?mode=ro", uri=True)  # a store this module wrote
    try:
        fns: dict[str, Callable[[], Any]] = {
            "ledger_open_verify": lambda: SessionLog.open_read_only(home.current),
            "request_admission_scan": lambda: _admission_scan(log.entries, rid),
            "request_admission_set": lambda: log.has_request_admission(rid),
            "turn_index_rebuild": lambda: log.turn_index(),
            "routing_evidence_snapshot": lambda: _routing_snapshot(home.routing, home.now_ns),
            "commitment_replay": lambda: _commitment_replay(home.commitments, home.commitment_probe),
            "session_listing_parse": lambda: _listing_parse(home.sessions_dir),
            "session_listing_store": lambda: _listing_store(db),
            "store_import_session": lambda: _store_import(home.current, db),
        }
        return {name: _time_best(fn, repeats) for name, fn in fns.items()}
    finally:
        db.close()


# ---------------------------------------------------------------------------------------------
# fitting


def _loglog_exponent(xs: list[int], ys: list[float]) -> float:
    pts = [(math.log(x), math.log(max(y, 1e-6))) for x, y in zip(xs, ys, strict=True) if x > 0]
    if len(pts) < 2:
        return 0.0
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    if sxx == 0:
        return 0.0
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx


def _linear_slope(xs: list[int], ys: list[float]) -> float:
    """Least-squares slope of milliseconds against turns, as microseconds per 1 000 turns."""
    if len(xs) < 2:
        return 0.0
    mx = sum(xs) / len(xs)
    my = sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx * 1000 * 1000


def classify(
    home_exponent: float,
    session_exponent: float,
    threshold: float = GROWTH_EXPONENT,
    *,
    home_growth_ms: float = math.inf,
    session_growth_ms: float = math.inf,
    resolution_ms: float = RESOLUTION_MS,
) -> str:
    """flat / session / home from the two fitted exponents.

    A sweep only counts as growth when its cost also rose by more than ``resolution_ms`` from the
    smallest to the largest size: a read that costs nanoseconds (a set lookup) fits any exponent on
    timer noise alone.
    """
    if home_exponent >= threshold and home_growth_ms > resolution_ms:
        return "home"
    if session_exponent >= threshold and session_growth_ms > resolution_ms:
        return "session"
    return "flat"


def _r(x: float, digits: int = 4) -> float:
    return float(f"{x:.{digits}g}") if x else 0.0


def run(
    turns: Iterable[int] = DEFAULT_TURNS,
    out: str | os.PathLike[str] | None = None,
    *,
    session_turns: int = SESSION_TURNS,
    repeats: int = 3,
    workdir: str | os.PathLike[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> ReadScaleResult:
    """Build synthetic homes of each size, time every read, fit and classify.

    ``out``: when given, the result is stored there as JSON (a directory gets ``readscale.json``;
    a scan directory is the usual place, so the report shows it without re-running). Homes are
    written under ``workdir`` (a fresh temporary directory by default) and removed afterwards.
    """
    sizes = sorted({int(t) for t in turns})
    if len(sizes) < 2 or sizes[0] < 1:
        raise UsageError("readscale needs at least two distinct positive sizes, e.g. --turns 1000,5000")
    if repeats < 1:
        raise UsageError("repeats must be at least 1")
    measured: dict[str, dict[str, list[float]]] = {r.name: {"home": [], "session": []} for r in READS}
    built: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="vakaudit-readscale-", dir=workdir) as tmp:
        for size in sizes:
            for sweep, length in (("home", session_turns), ("session", size)):
                if progress:
                    progress(f"building {sweep} sweep home of {size} turns")
                home = build_scale_home(Path(tmp) / f"{sweep}-{size}", size, length)
                if progress:
                    progress(f"timing reads on {sweep} sweep home of {size} turns")
                for name, ms in _measure(home, repeats).items():
                    measured[name][sweep].append(ms)
                built.append({"sweep": sweep, **home.info})
                _rmtree(home.root)
    fits = []
    for spec in READS:
        hm, sm = measured[spec.name]["home"], measured[spec.name]["session"]
        hk, sk = _loglog_exponent(sizes, hm), _loglog_exponent(sizes, sm)
        fits.append(
            ReadFit(
                name=spec.name,
                vak_function=spec.vak_function,
                what=spec.what,
                read_class=classify(hk, sk, home_growth_ms=hm[-1] - hm[0], session_growth_ms=sm[-1] - sm[0]),
                home_exponent=round(hk, 3),
                session_exponent=round(sk, 3),
                home_slope_us_per_kturn=_r(_linear_slope(sizes, hm)),
                session_slope_us_per_kturn=_r(_linear_slope(sizes, sm)),
                home_ms=[_r(v) for v in hm],
                session_ms=[_r(v) for v in sm],
            )
        )
    result = ReadScaleResult(
        turns=sizes,
        session_turns=session_turns,
        repeats=repeats,
        reads=fits,
        method=METHOD.format(s=session_turns, r=repeats, g=GROWTH_EXPONENT),
        sizes=built,
    )
    if out is not None:
        store(result, out)
    return result


def _rmtree(path: Path) -> None:
    for p in sorted(path.rglob("*"), key=lambda q: len(q.parts), reverse=True):
        if p.is_dir() and not p.is_symlink():
            p.rmdir()
        else:
            p.unlink()
    path.rmdir()


def store(result: ReadScaleResult, out: str | os.PathLike[str]) -> Path:
    """Write ``result`` as JSON to ``out`` (a ``.json`` path, or a directory that gets readscale.json)."""
    path = Path(os.fspath(out)).expanduser()
    if path.suffix != ".json":
        path = path / RESULT_FILE
    result.stored_at = str(path)
    return write_output(path, result.to_json())


def load(path: str | os.PathLike[str]) -> ReadScaleResult:
    """Read a stored result (a ``.json`` file, or a directory holding readscale.json)."""
    p = Path(path)
    if p.is_dir():
        p = p / RESULT_FILE
    if not p.is_file():
        raise UsageError(
            f"no stored readscale result at {p}; run `vakaudit readscale --out {p.parent}` first"
        )
    return ReadScaleResult.from_dict(json.loads(p.read_text(encoding="utf-8")))


__all__ = [
    "DEFAULT_TURNS",
    "READS",
    "RESULT_FILE",
    "ReadFit",
    "ReadScaleResult",
    "ReadSpec",
    "build_scale_home",
    "classify",
    "load",
    "run",
    "store",
]
