"""Cross-artifact checks ("fsck for a home"): do the sidecars and the index agree with the ledgers?

The session ledgers are the one rich original; the side ledgers and ``store.db`` are written from the
same events by other code paths. This module compares them after the per-file pass:

- Receipts vs routing evidence (home.md §4.1): every attempt of an ``execute`` receipt settled
  ``ok``/``failed``/``unknown`` is one routing row, credited to the leg that served it; ``cancelled``
  attempts write nothing. Compared home-wide as a multiset of (provider, model, outcome,
  latency_ms) (routing rows carry no session id).
- Receipts vs the cost log (§4.2): one row per settled paid dispatch. Compared per root session
  (worker sessions are folded into the session that spawned them, which is how runs are billed) as
  token totals of the winning attempts: fewer tokens in the cost log = a dispatch not accounted,
  more = accounted twice (or a row for a session with no ledger). The cost log compacts itself at
  5 MB keeping 90 days, so receipts older than the oldest row a cost-log file still holds are not
  expected to have rows (they still count against double accounting); the rest: warning.
- ``store.db`` vs the ledgers (§8.1): the index is derived and may lag, so ledger entries of the
  kinds its schema indexes (v1: header, message, compaction, receipt, goal, activity, work; v2 adds
  intent and turn_card) missing from it are info; index rows naming an entry no ledger holds (extra) or holding another session or
  kind for it (stale) are warnings.

Summarize/verify receipts are not required to have sidecar rows (whether vak records them is
unconfirmed). A check runs only when both of its sides exist in the home. No writes; SQLite is opened
read-only and immutable (no lock, no WAL replay).
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from vakaudit._sqlite import ROW_LIMIT, TIME_BUDGET_S, open_private_copy
from vakaudit.artifacts.delivery_jobs import FIRST_DELIVERY_STATE, SETTLED_DELIVERY_STATES
from vakaudit.findings import Finding, FindingCode
from vakaudit.ledger.evidence import open_evidence
from vakaudit.ledger.ids import ts_ns
from vakaudit.ledger.policy import severity_of

__all__ = ["CrossCollector", "RAW_KINDS", "ROW_KINDS"]

C = FindingCode
#: The entry kinds whose line bytes the ledger hook reads; for every other kind it uses only the envelope.
RAW_KINDS = frozenset({"receipt", "header"})
_OUTCOME = {"ok": "success", "failed": "failure", "unknown": "unknown"}
# entry kinds store.db indexes (home.md §8.1): schema v1, and v2 which adds intent and turn_card
_INDEXED_KINDS_V1 = frozenset({"header", "message", "compaction", "receipt", "goal", "activity", "work"})
_INDEXED_KINDS_V2 = _INDEXED_KINDS_V1 | {"intent", "turn_card"}


#: side-file kind -> the name of the :class:`CrossCollector` method that takes its files' rows; each
#: such method declares its kind with :func:`_rows_of`, so a cross-checked kind is added in one place
_SINKS: dict[str, str] = {}


def _rows_of(kind: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Marks a :class:`CrossCollector` method as the one taking the rows of every ``kind`` file (the
    kind's registered name); verify's per-file pass hands them to it (:meth:`CrossCollector.sink`)."""

    def mark(method: Callable[..., None]) -> Callable[..., None]:
        if kind in _SINKS:
            raise ValueError(f"the rows of {kind!r} already go to CrossCollector.{_SINKS[kind]}")
        _SINKS[kind] = method.__name__
        return method

    return mark


_CKPT_SEQ = re.compile(rb'"seq"\s*:\s*(\d+)')
_CKPT_SID = re.compile(rb'"session_id"\s*:\s*"([^"\\]*)"')


def _checkpoint_head(path: Path) -> tuple[int | None, str | None]:
    """``seq`` and ``session_id`` from the first 4 KiB of a manifest (serde writes them first)."""
    try:
        fd = open_evidence(path)
    except OSError:
        return None, None
    try:
        head = os.read(fd, 4096)
    finally:
        os.close(fd)
    m1, m2 = _CKPT_SEQ.search(head), _CKPT_SID.search(head)
    return (int(m1.group(1)) if m1 else None), (m2.group(1).decode("utf-8", "replace") if m2 else None)


@dataclass(slots=True)
class _Receipt:
    rel_path: str
    line_no: int
    entry_id: str
    session_id: str
    body: dict


@dataclass(slots=True)
class CrossCollector:
    """Collects what the cross checks need while the per-file pass runs, then compares."""

    receipts: list[_Receipt] = field(default_factory=list)
    parent_session: dict[str, str | None] = field(default_factory=dict)
    entries: dict[str, tuple[str, str, str, int]] = field(
        default_factory=dict
    )  # id -> (session, kind, rel, line)
    routing_rows: list[tuple[str, int, tuple]] = field(default_factory=list)  # (rel, line, key)
    cost_rows: list[tuple[str, int, dict]] = field(default_factory=list)
    store_dbs: list[tuple[str, Path]] = field(default_factory=list)
    outbox_rows: list[tuple[str, dict]] = field(default_factory=list)
    commitment_rows: list[tuple[str, dict]] = field(default_factory=list)
    checkpoints: list[tuple[str, Path]] = field(default_factory=list)
    has_routing_file: bool = False
    has_cost_file: bool = False

    def ledger_hook(
        self, rel_path: str, session_id: str
    ) -> Callable[[int, str, str, str | None, bytes], None]:
        """An ``on_entry`` callback for :func:`~vakaudit.forensics.verify_ledger` of one ledger."""
        entries = self.entries

        def on_entry(line_no: int, entry_id: str, kind: str, parent_id: str | None, raw: bytes) -> None:
            entries.setdefault(entry_id, (session_id, kind, rel_path, line_no))
            if kind in RAW_KINDS:
                try:
                    body = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    return
                if not isinstance(body, dict):
                    return
                if kind == "header":
                    psid = body.get("parent_session_id")
                    self.parent_session.setdefault(session_id, psid if isinstance(psid, str) else None)
                else:
                    self.receipts.append(_Receipt(rel_path, line_no, entry_id, session_id, body))

        return on_entry

    def sink(self, kind: str) -> Callable[[str, Iterable[dict[str, Any]]], None] | None:
        """The method taking the rows of a ``kind`` file (``(rel_path, rows)``), None when no cross
        check reads that kind."""
        name = _SINKS.get(kind)
        return None if name is None else getattr(self, name)

    @_rows_of("routing_evidence")
    def add_routing_rows(self, rel_path: str, rows: Iterable[dict[str, Any]]) -> None:
        self.has_routing_file = True
        for r in rows:
            key = (r.get("provider") or "", r.get("model") or "", r.get("outcome") or "", r.get("latency_ms"))
            self.routing_rows.append((rel_path, r.get("line_no") or 0, key))

    @_rows_of("cost_log")
    def add_cost_rows(self, rel_path: str, rows: Iterable[dict[str, Any]]) -> None:
        self.has_cost_file = True
        for r in rows:
            if r.get("session_id") is None and r.get("ts") is None:
                continue  # nothing _cost reads (an unparseable row: its own finding); not kept
            self.cost_rows.append((rel_path, r.get("line_no") or 0, r))

    @_rows_of("delivery_jobs")
    def add_outbox_rows(self, rel_path: str, rows: Iterable[dict[str, Any]]) -> None:
        self.outbox_rows.extend((rel_path, r) for r in rows)

    @_rows_of("commitments")
    def add_commitment_rows(self, rel_path: str, rows: Iterable[dict[str, Any]]) -> None:
        self.commitment_rows.extend((rel_path, r) for r in rows)

    def add_checkpoint(self, rel_path: str, path: Path) -> None:
        self.checkpoints.append((rel_path, path))

    # -- comparisons --------------------------------------------------------------------------------

    def findings(self) -> list[Finding]:
        out: list[Finding] = []
        if self.receipts and self.has_routing_file:
            out += self._routing()
        if self.receipts and self.has_cost_file:
            out += self._cost()
        for rel, path in self.store_dbs:
            out += self._store(rel, path)
        out += self._outbox()
        out += self._commitments()
        out += self._checkpoints()
        return out

    def ran(self) -> list[str]:
        """Names of the cross checks whose inputs were present."""
        names = []
        if self.receipts and self.has_routing_file:
            names.append("receipts_vs_routing_evidence")
        if self.receipts and self.has_cost_file:
            names.append("receipts_vs_cost_log")
        if self.store_dbs:
            names.append("store_db_vs_ledgers")
        if self.checkpoints:
            names.append("checkpoint_sequences")
        if self.commitment_rows:
            names.append("commitment_replay")
        if self.outbox_rows:
            names.append("outbox_jobs")
        return names

    def _outbox(self) -> list[Finding]:
        """Each job file: one job id (its file name, hex), schema 1, starts pending, nothing after a
        final state, attempts and updated_at_ms never go back (home.md §6.4)."""
        out = []
        by_file: dict[str, list[dict]] = defaultdict(list)
        for rel, row in self.outbox_rows:
            by_file[rel].append(row)
        for rel, rows in sorted(by_file.items()):
            rows.sort(key=lambda r: r.get("line_no") or 0)
            problems: list[tuple[int, str, str | None, str | None]] = []
            first = rows[0]
            if first.get("state") != FIRST_DELIVERY_STATE:
                problems.append((first.get("line_no") or 1, "the first record of a job is not pending",
                                 FIRST_DELIVERY_STATE, first.get("state")))  # fmt: skip
            prev = None
            for r in rows:
                line = r.get("line_no") or 0
                fid = r.get("file_job_id")
                if fid is not None and r.get("job_id") != fid:
                    problems.append(
                        (line, "the job id differs from the one the file name encodes", fid, r.get("job_id"))
                    )
                if r.get("schema_version") not in (1, None):
                    problems.append(
                        (
                            line,
                            "schema_version is not 1 (vak refuses the job)",
                            "1",
                            str(r.get("schema_version")),
                        )
                    )
                if prev is not None:
                    if prev.get("state") in SETTLED_DELIVERY_STATES:
                        problems.append(
                            (
                                line,
                                f"a record after the final state {prev.get('state')}",
                                None,
                                r.get("state"),
                            )
                        )
                    for k in ("attempts", "updated_at_ms"):
                        a, b = prev.get(k), r.get(k)
                        if isinstance(a, int) and isinstance(b, int) and b < a:
                            problems.append((line, f"{k} went back", f">= {a}", str(b)))
                prev = r
            for line, msg, exp, act in problems[:1] + [p for p in problems[1:] if p[1] != problems[0][1]]:
                out.append(self._f(C.OUTBOX_JOB_INVALID, rel, f"outbox job: {msg}", line, None, exp, act))
        return out

    def _commitments(self) -> list[Finding]:
        """Replay each commitment's events in file order: opened first and once, nothing after closed,
        episodes ended only when started, event ids unique (home.md §4.8)."""
        out = []
        state: dict[str, dict] = {}
        seen_events: set[str] = set()
        for rel, r in self.commitment_rows:
            cid, kind, line = r.get("commitment_id"), r.get("kind"), r.get("line_no")
            eid = r.get("event_id")
            if not isinstance(cid, str) or not isinstance(kind, str):
                continue
            why = None
            if isinstance(eid, str):
                if eid in seen_events:
                    why = f"event id {eid} used twice"
                seen_events.add(eid)
            st = state.get(cid)
            if why is None:
                if kind == "opened":
                    if st is not None:
                        why = "opened again"
                    else:
                        state[cid] = {"closed": False, "episodes": set()}
                elif st is None:
                    why = f"{kind} before the commitment was opened"
                elif st["closed"]:
                    why = f"{kind} after the commitment was closed"
                elif kind == "closed":
                    st["closed"] = True
                elif kind == "episode-started":
                    st["episodes"].add(r.get("episode_id"))
                elif kind == "episode-ended":
                    if r.get("episode_id") not in st["episodes"]:
                        why = f"episode {r.get('episode_id')} ended but never started"
                    st["episodes"].discard(r.get("episode_id"))
            if why is not None:
                out.append(self._f(C.COMMITMENT_EVENT_ILLEGAL, rel, f"commitment {cid}: {why}", line, eid,
                                   None, kind))  # fmt: skip
        return out

    def _checkpoints(self) -> list[Finding]:
        """Each manifest ``<session>/NNNN.json``: its seq and session id match its name and directory,
        and the session has a ledger in the home (home.md §5.1)."""
        out = []
        known = set(self.parent_session) | {e[0] for e in self.entries.values()}
        for rel, path in sorted(self.checkpoints):
            name_seq = int(path.stem) if path.stem.isdigit() else None
            dir_sid = path.parent.name
            seq, sid = _checkpoint_head(path)
            if seq is not None and name_seq is not None and seq != name_seq:
                out.append(self._f(C.CHECKPOINT_MISMATCH, rel, f"manifest seq {seq} in a file named for seq "
                                   f"{name_seq}", None, None, str(name_seq), str(seq)))  # fmt: skip
            if sid is not None and sid != dir_sid:
                out.append(self._f(C.CHECKPOINT_MISMATCH, rel, f"manifest of session {sid} in the directory of "
                                   f"session {dir_sid}", None, None, dir_sid, sid))  # fmt: skip
            if known and (sid or dir_sid) not in known:
                out.append(self._f(C.SIDECAR_ROW_UNMATCHED, rel, f"checkpoint of session {sid or dir_sid}, which has "
                                   "no ledger in this home", None, None, "a session ledger", None))  # fmt: skip
        return out

    def _execute_receipts(self) -> Iterable[_Receipt]:
        return (r for r in self.receipts if r.body.get("purpose", "execute") == "execute")

    def _routing(self) -> list[Finding]:
        expected: Counter = Counter()
        where: dict[tuple, _Receipt] = {}
        for rc in self._execute_receipts():
            b = rc.body
            attempts = b.get("attempts")
            if not isinstance(attempts, list):
                continue
            for a in attempts:
                if not isinstance(a, dict):
                    continue
                outcome = _OUTCOME.get(a.get("settlement"))
                if outcome is None:
                    continue  # cancelled: writes nothing
                key = (a.get("provider") or b.get("provider") or "", a.get("model") or b.get("model") or "",
                       outcome, a.get("latency_ms"))  # fmt: skip
                expected[key] += 1
                where.setdefault(key, rc)
        actual: Counter = Counter(k for _, _, k in self.routing_rows)
        first_row = {}
        for rel, line, k in self.routing_rows:
            first_row.setdefault(k, (rel, line))
        out = []
        for key in sorted(set(expected) | set(actual), key=repr):
            e, a = expected[key], actual[key]
            label = f"{key[0]}/{key[1]} {key[2]} {key[3]} ms"
            if a < e:
                rc = where[key]
                out.append(self._f(C.RECEIPT_UNACCOUNTED, rc.rel_path,
                                   f"{e - a} settled attempt(s) ({label}) have no routing-evidence row",
                                   rc.line_no, rc.entry_id, f"{e} row(s)", f"{a} row(s)"))  # fmt: skip
            elif a > e:
                rel, line = first_row[key]
                code = C.SIDECAR_ROW_DUPLICATE if e else C.SIDECAR_ROW_UNMATCHED
                what = "recorded more than once" if e else "matching no receipt attempt in any ledger"
                out.append(self._f(code, rel, f"{a - e} routing-evidence row(s) ({label}) {what}", line, None,
                                   f"{e} row(s)", f"{a} row(s)"))  # fmt: skip
        return out

    def _root(self, sid: str) -> str:
        seen = set()
        while sid not in seen:
            seen.add(sid)
            parent = self.parent_session.get(sid)
            if not parent:
                return sid
            sid = parent
        return sid

    def _cost(self) -> list[Finding]:
        # The cost log compacts itself (rows older than 90 days dropped at 5 MB): receipts older than
        # the oldest row a cost-log file still holds may have lost their rows legitimately, so they
        # count towards "accounted twice" but not towards "missing".
        oldest: dict[str, int] = {}
        for rel, _, row in self.cost_rows:
            t = ts_ns(row.get("ts"))
            if t is not None and (rel not in oldest or t < oldest[rel]):
                oldest[rel] = t
        horizon = max(oldest.values(), default=None)
        want: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        want_recent: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        first_receipt: dict[str, _Receipt] = {}
        for rc in self._execute_receipts():
            b = rc.body
            attempts = b.get("attempts") if isinstance(b.get("attempts"), list) else []
            win = b.get("winning_attempt")
            usage = None
            for a in attempts:
                if isinstance(a, dict) and a.get("ordinal") == win and a.get("settlement") == "ok":
                    usage = a.get("usage")
            if not isinstance(usage, dict):
                continue  # no settled usage: not a paid dispatch
            root = self._root(rc.session_id)
            tin, tout = int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
            w = want[root]
            w[0] += tin
            w[1] += tout
            t = ts_ns(b.get("ts"))
            if horizon is None or t is None or t >= horizon:
                r = want_recent[root]
                r[0] += tin
                r[1] += tout
                first_receipt.setdefault(root, rc)
        have: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        first_row: dict[str, tuple[str, int]] = {}
        seen_rows: Counter = Counter()
        dup_at: dict[str, tuple[str, int]] = {}
        known_sessions = set(self.parent_session) | {r.session_id for r in self.receipts}
        out = []
        for rel, line, row in self.cost_rows:
            sid = row.get("session_id")
            if not isinstance(sid, str):
                continue
            root = self._root(sid)
            h = have[root]
            h[0] += int(row.get("input_tokens") or 0)
            h[1] += int(row.get("output_tokens") or 0)
            first_row.setdefault(root, (rel, line))
            key = (row.get("ts"), sid, row.get("model"), row.get("input_tokens"), row.get("output_tokens"))
            seen_rows[key] += 1
            if seen_rows[key] == 2:
                dup_at.setdefault(root, (rel, line))
            if sid not in known_sessions and root not in known_sessions:
                out.append(self._f(C.SIDECAR_ROW_UNMATCHED, rel, f"cost row for session {sid}, which has no ledger "
                                   "in this home", line, None, "a session ledger", None))  # fmt: skip
        for root in sorted(set(want) | set(have)):
            w, h = want.get(root, [0, 0]), have.get(root, [0, 0])
            if root not in want and root not in known_sessions:
                continue  # reported row by row above
            wr = want_recent.get(root, [0, 0])
            if h[0] < wr[0] or h[1] < wr[1]:
                w = wr
                rc = first_receipt[root]
                out.append(self._f(C.RECEIPT_UNACCOUNTED, rc.rel_path,
                                   f"session {root}: receipts settled {w[0]} input / {w[1]} output tokens, the cost "
                                   f"log accounts {h[0]} / {h[1]} (dispatches missing, or compacted away after 90 days)",
                                   rc.line_no, rc.entry_id, f"{w[0]}/{w[1]}", f"{h[0]}/{h[1]}"))  # fmt: skip
            elif h[0] > w[0] or h[1] > w[1]:
                rel, line = dup_at.get(root) or first_row[root]
                code = C.SIDECAR_ROW_DUPLICATE if root in dup_at else C.SIDECAR_ROW_UNMATCHED
                out.append(self._f(code, rel,
                                   f"session {root}: the cost log accounts {h[0]} input / {h[1]} output tokens, its "
                                   f"receipts settled only {w[0]} / {w[1]} (a dispatch accounted twice?)",
                                   line, None, f"{w[0]}/{w[1]}", f"{h[0]}/{h[1]}"))  # fmt: skip
        return out

    def _store(self, rel: str, path: Path) -> list[Finding]:
        out = []
        try:
            with open_private_copy(path) as db:
                try:
                    if db.kind("entries") != "table":
                        what = db.kind("entries")
                        if what is not None:
                            out.append(self._f(C.DATABASE_NOT_TABLE, rel, f"'entries' is a {what}, not the table "
                                               "vak writes; not read", None, None, "table", what))  # fmt: skip
                        return out
                    cols = {r[1] for r in db.rows("PRAGMA table_info(entries)")}
                    if not {"entry_id", "session_id", "kind"} <= cols:
                        return out
                    rows = db.rows("SELECT entry_id, session_id, kind FROM entries")
                    meta = {}
                    if db.kind("meta") == "table":
                        try:
                            meta = dict(db.rows("SELECT key, value FROM meta", limit=1_000))
                        except (sqlite3.Error, ValueError, TypeError):
                            meta = {}
                except sqlite3.Error as exc:
                    if db.timed_out:
                        return out + [self._f(C.DATABASE_TIME_LIMIT, rel, f"reading the index took longer than "
                                              f"{TIME_BUDGET_S:g} s; stopped, not compared")]  # fmt: skip
                    return out + [self._f(C.UNREADABLE_FILE, rel, f"cannot read the entries table: {exc}")]
                limited = db.row_limited
                if limited:
                    out.append(self._f(C.DATABASE_ROW_LIMIT, rel, f"the index holds more than {ROW_LIMIT:,} rows; "
                                       "the first ones were compared, extra and missing rows are not exact",
                                       None, None, f"<= {ROW_LIMIT}", None))  # fmt: skip
        except (OSError, sqlite3.Error) as exc:
            return [self._f(C.UNREADABLE_FILE, rel, f"cannot open the index read-only: {exc}")]
        indexed: set[str] = set()
        extra = stale = 0
        first_extra = first_stale = None
        for entry_id, session_id, kind in rows:
            indexed.add(entry_id)
            e = self.entries.get(entry_id)
            if e is None:
                extra += 1
                first_extra = first_extra or entry_id
            elif e[0] != session_id or e[1] != kind:
                stale += 1
                first_stale = first_stale or (entry_id, e, session_id, kind)
        if extra:
            out.append(self._f(C.INDEX_EXTRA_ROW, rel, f"{extra} index row(s) name entries no ledger holds "
                               f"(first: {first_extra}); deleted or rewritten ledgers?", None, first_extra,
                               "0", str(extra)))  # fmt: skip
        if stale:
            eid, e, sid, kind = first_stale
            out.append(self._f(C.INDEX_STALE_ROW, rel, f"{stale} index row(s) disagree with the ledger line they "
                               f"index (first: {eid} is {e[1]} in session {e[0]}, indexed as {kind} in {sid})",
                               None, eid, f"{e[0]}/{e[1]}", f"{sid}/{kind}"))  # fmt: skip
        missing: Counter = Counter()
        first_missing: dict[str, tuple[str, int, str]] = {}
        indexed_kinds = _INDEXED_KINDS_V2 if meta.get("schema") == "2" else _INDEXED_KINDS_V1
        for entry_id, (sid, kind, lrel, line) in () if limited else self.entries.items():
            if entry_id not in indexed and kind in indexed_kinds:
                missing[sid] += 1
                first_missing.setdefault(sid, (lrel, line, entry_id))
        for sid in sorted(missing):
            lrel, line, eid = first_missing[sid]
            out.append(self._f(C.INDEX_MISSING_ROW, lrel, f"{missing[sid]} entr(ies) of session {sid} are not in "
                               f"{rel} yet (the index is derived and may lag)", line, eid, "indexed", "absent"))  # fmt: skip
        return out

    @staticmethod
    def _f(code: FindingCode, rel: str, message: str, line_no: int | None = None, entry_id: str | None = None,
           expected: str | None = None, actual: str | None = None) -> Finding:  # fmt: skip
        return Finding(code, severity_of(code), rel, message, line_no, None, entry_id, expected, actual)


#: The side-file kinds whose rows the cross checks read (each one's method declared with :func:`_rows_of`).
ROW_KINDS = frozenset(_SINKS)
