"""Launch and first turn, as-is: what a launch does step by step, each step with what it would
read or write in this home (sizes measured from the scan)."""

from __future__ import annotations

from dataclasses import dataclass

from vakaudit.report.inputs import ReportInputs
from vakaudit.report.sections._common import by_key

TITLE = "Launch and first turn"
ORDER = 90
LISTING_ENTRY_LIMIT = 401


@dataclass(frozen=True, slots=True)
class LaunchStep:
    phase: str  # launch | resume | first turn
    call: str
    what: str
    size_bytes: float | None
    count: int | None
    count_unit: str
    marks: list[str]


@dataclass(frozen=True, slots=True)
class Launch:
    steps: list[LaunchStep]
    resumed: str | None
    barriers_before_dispatch: int


def build(inputs: ReportInputs) -> Launch:
    disk = by_key(inputs.rows("disk_by_kind"), "kind")

    def kb(kind: str) -> tuple[float | None, int | None]:
        d = disk.get(kind)
        return (float(d["size_bytes"]), int(d["writes"])) if d else (None, None)

    listing = inputs.query(
        f"SELECT count(DISTINCT rel_path) AS files, coalesce(sum(size_bytes), 0) AS b FROM ledger_entry "
        f"WHERE line_no <= {LISTING_ENTRY_LIMIT}"
    )[0]
    recent = inputs.query(
        "SELECT rel_path, entry_count, size_bytes FROM sessions ORDER BY last_at DESC NULLS LAST, rel_path LIMIT 1"
    )
    resumed = recent[0] if recent else None
    transcript = None
    if resumed:
        transcript = inputs.query(
            "SELECT coalesce(sum(size_bytes), 0) AS b, count(*) AS n FROM ledger_entry "
            "WHERE rel_path = ? AND kind = 'message'",
            [resumed["rel_path"]],
        )[0]
    prep = inputs.query(
        "SELECT kind, avg(size_bytes) AS mean_bytes FROM ledger_entry "
        "WHERE kind IN ('turn_capabilities_bound', 'intent', 'goal_update') GROUP BY kind ORDER BY kind"
    )
    prep_bytes = sum(float(r["mean_bytes"] or 0) for r in prep)
    ckpt_b, ckpt_n = kb("checkpoints")
    snaps = None
    if inputs.has_table("checkpoints") and ckpt_b:
        snaps = inputs.query("SELECT count(DISTINCT rel_path) AS n FROM checkpoints")[0]["n"]
    store_b, _ = kb("store_db")
    config_b, config_n = kb("config_files")
    route_b, route_n = kb("routing_evidence")
    commit_b, commit_n = kb("commitments")
    steps = [
        LaunchStep(
            "launch",
            "Core::start",
            "Opens store.db (WAL, no rebuild), loads config, tasks and gateway state.",
            (store_b or 0) + (config_b or 0),
            config_n,
            "config files",
            ["read"],
        ),
        LaunchStep(
            "launch",
            "GET /sessions",
            "Walks sessions/ and parses up to 401 entries per file for title and header.",
            float(listing["b"]),
            int(listing["files"]),
            "ledger files opened",
            ["read", "home"],
        ),
        LaunchStep(
            "resume",
            "SessionLog::open",
            "Reads the whole ledger of the session being resumed (here: the most recent one), "
            "SHA-256s every line to verify the chain and deserialises every entry into RAM.",
            float(resumed["size_bytes"]) if resumed else None,
            int(resumed["entry_count"]) if resumed else None,
            "entries",
            ["read", "session"],
        ),
        LaunchStep(
            "resume",
            "derive_transcript",
            "The full transcript goes to the client in one JSON body.",
            float(transcript["b"]) if transcript else None,
            int(transcript["n"]) if transcript else None,
            "messages",
            ["read", "session"],
        ),
        LaunchStep(
            "first turn",
            "checkpoints::capture → store",
            "Walks the workspace and snapshots its content (≤ 64 MB), tmp + rename.",
            (ckpt_b / snaps) if ckpt_b and snaps else None,
            snaps,
            "snapshots in the home (mean size shown)",
            ["write", "atomic", "nobarrier"],
        ),
        LaunchStep(
            "first turn",
            "EvidenceLedger::snapshot",
            "Parses the whole routing-evidence file to order the route ladder.",
            route_b,
            route_n,
            "rows",
            ["read", "home"],
        ),
        LaunchStep(
            "first turn",
            "CommitmentLedger::open",
            "Replays every commitment event in the home.",
            commit_b,
            commit_n,
            "events",
            ["read", "home"],
        ),
        LaunchStep(
            "first turn",
            "append_turn_capabilities · append_intent · append_goal_update",
            "The capability binding, the intent and the goal update are appended before the model is called.",
            prep_bytes or None,
            len(prep),
            "entries, one sync_data() each (mean sizes summed)",
            ["write", "barrier"],
        ),
    ]
    return Launch(
        steps=steps, resumed=resumed["rel_path"] if resumed else None, barriers_before_dispatch=len(prep)
    )
