"""As messages grow: per-session staircase (RAM for a handle, open time, per-request scans) at this
home's largest sessions and at projected conversation lengths; and what grows across sessions.

On a 7.0 home a session is a conversation directory of segments: its ledger bytes are the frames as
stored, RAM and the hydrated transcript follow the entries' plaintext (what a handle holds), a
request's admission is one ``req/`` ref lookup instead of a scan, and the session list is one
catalog query instead of a parse of every ledger."""

from __future__ import annotations

from dataclasses import dataclass

from vakaudit.artifacts._base import V7_LAYOUTS
from vakaudit.report.inputs import ReportInputs

TITLE = "As messages grow"
ORDER = 80
LARGEST = 3
PROJECTED_TURNS = (1000, 10000)
LISTING_ENTRY_LIMIT = 401  # GET /sessions parses up to 401 entries per file (vak-server)
LISTING_PROJECTED_SESSIONS = 1000
# A live handle holds every entry deserialised; the reference report puts a 66 MB ledger at
# 200-350 MB of RAM (tool schemas become JSON value trees). The ratio is an estimate, labelled.
RAM_FACTOR_LOW = 3.0
RAM_FACTOR_HIGH = 5.3
RAM_METHOD = (
    "ledger bytes × 3.0–5.3, the ratio of resident memory to ledger bytes the reference "
    "report gives for vak's in-memory Vec<Entry> (66 MB → 200–350 MB)"
)


@dataclass(frozen=True, slots=True)
class Step:
    label: str
    measured: bool
    turns: int
    entries: int
    ledger_bytes: float
    transcript_bytes: float
    ram_low: float
    ram_high: float
    open_ms: float | None
    scans_per_request: int


@dataclass(frozen=True, slots=True)
class Staircase:
    steps: list[Step]
    sessions: int
    listing_bytes: int
    listing_entries: int
    listing_projected_bytes: float
    listing_projected_sessions: int
    checkpoint_bytes: int
    checkpoint_sessions: int
    open_rate_ms_per_mb: float | None
    open_method: str | None
    ram_method: str
    bytes_per_turn: float | None
    entries_per_turn: float | None
    v7: bool = False


def build(inputs: ReportInputs) -> Staircase:
    h = inputs.analysis.headline
    bpt = h.get("bytes_per_turn")
    ept = h.get("entries_per_turn")
    v7 = inputs.layout in V7_LAYOUTS
    # a 7.0 entry lies in a segment file of its conversation directory (the sessions table's rel_path)
    owner = "regexp_replace(rel_path, '/[^/]*$', '')" if v7 else "rel_path"
    plain = "coalesce(plain_bytes, size_bytes)" if v7 else "size_bytes"
    largest = inputs.query(
        f"""
        SELECT s.rel_path, s.turn_count, s.entry_count, s.size_bytes,
               coalesce(m.message_bytes, 0) AS message_bytes, coalesce(m.plain, s.size_bytes) AS plain
        FROM sessions s LEFT JOIN (
            SELECT {owner} AS rel_path, sum({plain}) FILTER (WHERE kind = 'message') AS message_bytes,
                   sum({plain}) AS plain
            FROM ledger_entry GROUP BY 1
        ) m USING (rel_path)
        ORDER BY s.size_bytes DESC, s.rel_path LIMIT {LARGEST}
        """
    )
    totals = inputs.query(
        f"SELECT coalesce(sum({plain}), 0) AS p, coalesce(sum(size_bytes), 0) AS b, "
        f"coalesce(sum({plain}) FILTER (WHERE kind = 'message'), 0) AS m FROM ledger_entry"
    )[0]
    message_share = (totals["m"] / totals["b"]) if totals["b"] else 0.0  # of stored bytes
    plain_ratio = (totals["p"] / totals["b"]) if totals["b"] else 1.0  # what a handle holds per stored byte
    rate, method = _open_rate(inputs)

    def step(label: str, measured: bool, turns: int, entries: int, b: float, transcript: float,
             held: float | None = None) -> Step:
        held = b if held is None else held
        return Step(
            label=label,
            measured=measured,
            turns=turns,
            entries=entries,
            ledger_bytes=b,
            transcript_bytes=transcript,
            ram_low=held * RAM_FACTOR_LOW,
            ram_high=held * RAM_FACTOR_HIGH,
            open_ms=(b / 1e6 * rate) if rate else None,
            scans_per_request=0 if v7 else entries,  # 7.0: one req/ ref lookup per request
        )

    steps = [
        step(
            f"largest session #{i + 1}",
            True,
            int(r["turn_count"]),
            int(r["entry_count"]),
            float(r["size_bytes"]),
            float(r["message_bytes"]),
            float(r["plain"]) if v7 else None,
        )
        for i, r in enumerate(largest)
    ]
    if bpt and ept:
        m_share = (totals["m"] / totals["p"]) * plain_ratio if totals["p"] else message_share
        for n in PROJECTED_TURNS:
            steps.append(
                step(f"{n:,}-turn conversation", False, n, round(ept * n), bpt * n, bpt * n * m_share,
                     bpt * n * plain_ratio)
            )
    listing = inputs.query(
        f"SELECT count(DISTINCT rel_path) AS files, count(*) AS entries, coalesce(sum(size_bytes), 0) AS b "
        f"FROM ledger_entry WHERE line_no <= {LISTING_ENTRY_LIMIT}"
    )[0]
    sessions = int(inputs.one("overview").get("sessions") or 0)
    ckpt = {"b": 0, "s": 0}
    if v7:  # 7.0: <agent>/checkpoints/<session id>/<seq>.json manifests (baseline7.md §11)
        ckpt = inputs.query(
            "SELECT coalesce(sum(size_bytes), 0) AS b, count(DISTINCT regexp_replace(rel_path, '/[^/]*$', '')) AS s "
            "FROM files WHERE kind = 'checkpoints'"
        )[0]
    elif inputs.has_table("checkpoints"):
        ckpt = inputs.query(
            "SELECT coalesce((SELECT sum(size_bytes) FROM files WHERE kind = 'checkpoints'), 0) AS b, "
            "(SELECT count(DISTINCT session_id) FROM checkpoints) AS s"
        )[0]
    per_file = (listing["b"] / sessions) if sessions else 0.0
    return Staircase(
        steps=steps,
        sessions=sessions,
        listing_bytes=int(listing["b"]),
        listing_entries=int(listing["entries"]),
        listing_projected_bytes=per_file * LISTING_PROJECTED_SESSIONS,
        listing_projected_sessions=LISTING_PROJECTED_SESSIONS,
        checkpoint_bytes=int(ckpt["b"] or 0),
        checkpoint_sessions=int(ckpt["s"] or 0),
        open_rate_ms_per_mb=rate,
        open_method=method,
        ram_method=("on a 7.0 home the entries' plaintext bytes (what a handle holds, decrypted and "
                    "decompressed) × 3.0–5.3 instead of the stored bytes; " + RAM_METHOD) if v7 else RAM_METHOD,
        bytes_per_turn=bpt,
        entries_per_turn=ept,
        v7=v7,
    )


def _open_rate(inputs: ReportInputs) -> tuple[float | None, str | None]:
    """ms per MB of ledger for open + verify, from the stored readscale session sweep."""
    rs = inputs.readscale
    if rs is None:
        return None, None
    try:
        fit = rs.read("ledger_open_verify")
    except KeyError:
        return None, None
    sizes = [s for s in rs.sizes if s.get("sweep") == "session"]
    if not sizes or not fit.session_ms:
        return None, None
    biggest = max(sizes, key=lambda s: s.get("turns", 0))
    b = biggest.get("current_session_bytes") or biggest.get("ledger_bytes")
    ms = fit.session_ms[-1]
    if not b:
        return None, None
    rate = ms / (b / 1e6)
    return rate, (
        f"bytes × {rate:.1f} ms/MB, the rate readscale measured for a Python equivalent of "
        f"SessionLog::open (read, SHA-256 every line, parse) on a {b / 1e6:.1f} MB session"
    )
