"""Launch and first turn, as-is: what a launch does step by step, each step with what it would
read or write in this home (sizes measured from the scan). A 7.0 home gets 7.0's launch path: the
catalog answers the session list, a resume walks the conversation's segments, rollup Documents
replace the whole-file replays and the ledger syncs by group commit (baseline7.md §7.2, §8.3, §10)."""

from __future__ import annotations

from dataclasses import dataclass

from vakaudit.artifacts._base import V7_LAYOUTS
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
    v7: bool = False


def build(inputs: ReportInputs) -> Launch:
    if inputs.layout in V7_LAYOUTS:
        return _build_v7(inputs)
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


def _build_v7(inputs: ReportInputs) -> Launch:
    """The launch path of a 7.0 home, each step sized from the scan (stored bytes on disk, plaintext
    bytes of entries when the scan had keys)."""
    disk = by_key(inputs.rows("disk_by_kind"), "kind")

    def kb(kind: str) -> tuple[float | None, int | None]:
        d = disk.get(kind)
        return (float(d["size_bytes"]), int(d["writes"])) if d else (None, None)

    def doc(fragment: str) -> tuple[float | None, int]:
        if not inputs.has_table("documents"):
            return None, 0
        r = inputs.query(
            "SELECT sum(content_bytes) AS b, count(*) AS n FROM documents WHERE contains(name, ?)", [fragment]
        )[0]
        return (float(r["b"]) if r["b"] is not None else None), int(r["n"] or 0)

    config_b, config_n = kb("config_files")
    catalog_b, _ = kb("catalog_db")
    refs_b, _ = kb("refs")
    sessions = inputs.query("SELECT count(*) AS n FROM sessions")[0]["n"]
    recent = inputs.query(
        "SELECT rel_path, entry_count, size_bytes FROM sessions ORDER BY last_at DESC NULLS LAST, rel_path LIMIT 1"
    )
    resumed = recent[0] if recent else None
    transcript = None
    seg_bytes = None
    if resumed:
        # the segment files as they lie on disk (a sealed one has its header besides its frames)
        seg_bytes = inputs.query(
            "SELECT sum(size_bytes) AS b FROM files WHERE starts_with(rel_path, ?) "
            "AND regexp_matches(rel_path, '/seg-[0-9]+[.](log|sealed)$')",
            [resumed["rel_path"] + "/"],
        )[0]["b"]
        transcript = inputs.query(
            "SELECT sum(plain_bytes) AS b, count(*) AS n FROM ledger_entry "
            "WHERE starts_with(rel_path, ?) AND kind = 'message'",
            [resumed["rel_path"] + "/"],
        )[0]
    mean = {
        r["what"]: float(r["b"]) if r["b"] is not None else None
        for r in inputs.query(
            "SELECT CASE WHEN kind = 'activity' THEN 'admission' WHEN kind = 'message' THEN 'directive' "
            "ELSE 'prep' END AS what, avg(plain_bytes) AS b FROM ledger_entry "
            "WHERE segment IS NOT NULL AND ((kind = 'activity' AND commit_point) "
            "OR (kind = 'message' AND role = 'user' AND commit_point AND coalesce(tool_result_count, 0) = 0) "
            "OR kind IN ('turn_capabilities_bound', 'turn_capabilities_ref', 'intent', 'goal_update')) GROUP BY 1"
        )
    }
    prep = inputs.query(
        "SELECT kind, avg(plain_bytes) AS b FROM ledger_entry WHERE segment IS NOT NULL AND kind IN "
        "('turn_capabilities_bound', 'turn_capabilities_ref', 'intent', 'goal_update') GROUP BY kind"
    )
    ckpt_b, snaps = kb("checkpoints")  # one manifest file per checkpoint (§11): its writes are its files
    route_b, route_n = doc("routing-evidence-rollup")
    commit_b, commit_n = doc("commitments-rollup")
    # a sealed home scanned without keys: the entries' kinds and plaintext are not known
    locked = inputs.locked
    need = "(needs --keys)"
    refs_card = inputs.card("refs")
    ref_barriers = int(refs_card.barriers_per_write) if refs_card is not None else 1
    steps = [
        LaunchStep("launch", "Core::start",
                   "Loads config and opens the tenant store: refs.db and catalog.db (both SQLite WAL).",
                   (config_b or 0) + (catalog_b or 0) + (refs_b or 0), config_n, "config files", ["read"]),
        LaunchStep("launch", "GET /sessions (catalog nodes)",
                   "One indexed query on catalog.db (nodes_kind: the newest sessions); no ledger is opened.",
                   None, int(sessions), "sessions in the home", ["read", "flat"]),
        LaunchStep("resume", "SessionLog::open",
                   "Walks every segment of the conversation being resumed (here: the most recent one): the "
                   "keyless chain check of every frame, then each sealed frame decrypted and decompressed.",
                   float(seg_bytes) if seg_bytes is not None else None,
                   int(resumed["entry_count"]) if resumed else None, "frames", ["read", "session"]),
        LaunchStep("resume", "derive_transcript",
                   "The full transcript goes to the client in one JSON body (plaintext bytes).",
                   float(transcript["b"]) if transcript and transcript["b"] is not None else None,
                   None if locked or not transcript else int(transcript["n"]),
                   f"messages {need}" if locked else "messages", ["read", "session"]),
        LaunchStep("first turn", "checkpoints::capture → ObjectStore::put",
                   "Puts changed workspace files into the tenant store as objects granted to the conversation "
                   "(a file whose size and mtime are unchanged reuses its object unread), then writes the plain "
                   "JSON manifest, tmp + rename, no fsync.",
                   (ckpt_b / snaps) if ckpt_b and snaps else None, snaps,
                   "manifests in the home (mean manifest size shown)", ["write", "atomic", "nobarrier"]),
        LaunchStep("first turn", "routing-evidence-rollup Document",
                   "Reads the rollup's day buckets per leg to order the route ladder (no replay of the evidence).",
                   route_b, route_n, "rollup documents", ["read", "flat"]),
        LaunchStep("first turn", "commitments-rollup Document",
                   "Reads the commitments' folded state from its saved position (no replay of every event).",
                   commit_b, commit_n, "rollup documents", ["read", "flat"]),
        LaunchStep("first turn", "append_activity (request admitted) · RefStore::cas req/",
                   "The admission activity is a commit point (one fdatasync); its req/<session>/<sha256> ref is "
                   "then created by compare-and-swap in refs.db.",
                   mean.get("admission"), 1 + ref_barriers, "barriers", ["write", "barrier"]),
        LaunchStep("first turn", "append_turn_capabilities · append_intent · append_goal_update",
                   "The capability binding (or a ref to an unchanged one), the intent and the goal update are "
                   "appended unsynced: they reach the disk with the next commit point.",
                   sum(float(r["b"] or 0) for r in prep) or None, None if locked else len(prep),
                   f"entry kinds {need}" if locked else "entry kinds, appended unsynced (mean sizes summed)",
                   ["write", "nobarrier"]),
        LaunchStep("first turn", "append_message (user)",
                   "The directive is a commit point: one fdatasync for it and every frame appended before it.",
                   mean.get("directive"), 1, "barrier", ["write", "barrier"]),
    ]
    return Launch(steps=steps, resumed=resumed["rel_path"] if resumed else None,
                  barriers_before_dispatch=2 + ref_barriers, v7=True)
