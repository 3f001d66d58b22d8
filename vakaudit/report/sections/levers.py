"""As-is → to-be: each growth lever of the reference report, with this home's as-is figure
(measured) beside the to-be figure (projected from this home's measurements, with its method).

vakaudit has no lever implementation that applies a lever to a copy of a home and re-measures it,
so every to-be figure here is an estimate and says how it was made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vakaudit.artifacts import LEDGER_KIND, all_kinds
from vakaudit.artifacts._base import V7_LAYOUTS
from vakaudit.report.inputs import ReportInputs
from vakaudit.report.sections._common import by_key

TITLE = "As-is → to-be"
ORDER = 100
SIDECAR_BOUND_BYTES = 5 * 1024 * 1024  # the cost ledger's compact_if_large threshold
EVIDENCE_TTL_DAYS = 30
#: each lever of the reference report, by key: its title (the same lever on either generation of home)
LEVER_TITLES = {
    "binding_once_per_epoch": "Write the capability binding once per epoch, not once per turn",
    "routing_evidence_compaction": "Compact routing-evidence on append and cache its snapshot",
    "store_tail_import": "Tail-import the search index inside one transaction",
    "incremental_commitments": "Project commitments incrementally",
    "checkpoint_dedupe_gc": "Deduplicate checkpoints and collect the ones nobody can rewind to",
    "sidecar_bounds": "Give every append-only sidecar a size bound",
    "in_memory_indexes": "Index the in-memory ledger for the two scans every request performs",
}


def lever_kinds(key: str) -> tuple[str, ...]:
    """The artifact kinds whose write card names the lever ``key`` (``WriteCard.levers``), by name."""
    return tuple(k.name for k in all_kinds() if k.card is not None and key in k.card.levers)


#: the append-only sidecars the size-bound lever caps (ActivityLedger, MisreadLedger, security events,
#: the sandbox execution log and the outbox in the reference report)
SIDECARS = lever_kinds("sidecar_bounds")


@dataclass(frozen=True, slots=True)
class Figure:
    label: str
    value: float | None
    unit: str  # bytes | share | count | ms | ratio | text
    text: str = ""
    high: float | None = None  # the upper end when the figure is a range


@dataclass(frozen=True, slots=True)
class Lever:
    key: str
    title: str
    functions: str
    asis: list[Figure]
    tobe: list[Figure]
    cost_before: str
    cost_after: str
    method: str
    contract: str
    applied: str | None = None  # a 7.0 home: how vak 7.0 applied the lever (its figures are then as-is)
    applied_state: str = "applied"  # "applied", or "partly applied" when 7.0 leaves part of it undone


@dataclass(frozen=True, slots=True)
class ScalePoint:
    label: str
    asis: list[Figure]
    tobe: list[Figure]
    notices: str


@dataclass(frozen=True, slots=True)
class Levers:
    levers: list[Lever]
    projection_turns: int | None
    scale_points: list[ScalePoint]
    scale_method: str
    #: with ``report --compare``: the other home as the measured to-be (its figures beside this home's)
    measured_to_be: MeasuredToBe | None = None
    #: a 7.0 home: every lever is already applied by 7.0's storage; its figures are this home's
    v7: bool = False


@dataclass(frozen=True, slots=True)
class MeasuredToBe:
    name: str
    layout: str
    rows: list[Any]  # vakaudit.report.sections.compare.CompareRow


#: the comparison figures the measured to-be shows
TO_BE_FIGURES = (
    "ledger_bytes_per_turn",
    "record_growth_per_turn",
    "barriers_per_turn",
    "home_bytes_per_turn",
    "projected_home_bytes_100000",
    "read_class_home",
)


def _measured_to_be(inputs: ReportInputs) -> MeasuredToBe | None:
    from vakaudit.report.sections import compare

    ctx = compare.build(inputs)
    if ctx is None:
        return None
    rows = {r.name: r for r in ctx.rows}
    return MeasuredToBe(ctx.other_name, ctx.other_layout, [rows[k] for k in TO_BE_FIGURES if k in rows])


def build(inputs: ReportInputs) -> Levers:
    if inputs.layout in V7_LAYOUTS:
        return _build_v7(inputs)
    h = inputs.analysis.headline
    ov = inputs.one("overview")
    sessions = int(ov.get("sessions") or 0)
    proj = inputs.analysis.projection
    last = str(max(proj.turns)) if proj.turns else None
    projected = {r.artifact: r.projected_bytes.get(last) for r in proj.rows} if last else {}
    disk = by_key(inputs.rows("disk_by_kind"), "kind")
    growth = by_key(inputs.rows("sidecar_growth"), "artifact")
    nlast = int(last) if last else None
    levers: list[Lever] = []

    # 1. binding once per epoch
    w = inputs.one("ledger_without_repeated_bindings")
    wm = inputs.analysis.metrics.get("ledger_without_repeated_bindings")
    levers.append(
        Lever(
            key="binding_once_per_epoch",
            title=LEVER_TITLES["binding_once_per_epoch"],
            functions="Core::run → SessionLog::append (TurnCapabilitiesBound gains a body_digest)",
            asis=[
                Figure("ledger per turn", w.get("bytes_per_turn") or h.get("bytes_per_turn"), "bytes"),
                Figure("bindings", w.get("binding_share"), "share", "of ledger bytes"),
                Figure(
                    f"ledger at {nlast:,} turns" if nlast else "ledger",
                    projected.get(LEDGER_KIND),
                    "bytes",
                ),
            ],
            tobe=[
                Figure("ledger per turn", w.get("bytes_per_turn_without"), "bytes"),
                Figure("repeated bindings removed", w.get("repeated_bindings"), "count"),
                Figure(
                    f"ledger at {nlast:,} turns" if nlast else "ledger",
                    projected.get(f"{LEDGER_KIND}_without_repeated_bindings"),
                    "bytes",
                ),
            ],
            cost_before="one full binding per turn",
            cost_after="one per epoch + a digest line",
            method=(wm.estimate or wm.measured) if wm else "no binding metric",
            contract="signature-neutral · additive serde field; older ledgers parse unchanged",
        )
    )

    # 2. routing evidence compaction + cached snapshot
    re_b = disk.get("routing_evidence", {}).get("size_bytes")
    re_n = disk.get("routing_evidence", {}).get("writes")
    g = growth.get("routing_evidence", {})
    tpd = proj.turns_per_day
    ttl_bytes = (g.get("bytes_per_turn") or 0) * tpd * EVIDENCE_TTL_DAYS if tpd else None
    levers.append(
        Lever(
            key="routing_evidence_compaction",
            title=LEVER_TITLES["routing_evidence_compaction"],
            functions="EvidenceLedger::append (compact_if_large) · EvidenceLedger::snapshot (cached by mtime, len)",
            asis=[
                Figure("parsed every turn, today", re_b, "bytes"),
                Figure("rows scanned every turn", re_n, "count"),
                Figure(
                    f"parsed every turn at {nlast:,} turns" if nlast else "at scale",
                    projected.get("routing_evidence"),
                    "bytes",
                ),
            ],
            tobe=[
                Figure("per-turn read", None, "text", "one stat()"),
                Figure(f"file bounded to the {EVIDENCE_TTL_DAYS}-day TTL", ttl_bytes, "bytes"),
            ],
            cost_before="O(home) parse per turn",
            cost_after="O(1) per turn",
            method=(
                f"estimate: the file keeps only rows inside the {EVIDENCE_TTL_DAYS}-day TTL: measured routing-evidence "
                f"bytes per turn × observed turns per day × {EVIDENCE_TTL_DAYS}"
            ),
            contract="signature-neutral · snapshot() and append() unchanged",
        )
    )

    # 3. tail-import the search index
    mean_session_bytes = (float(ov.get("ledger_bytes") or 0) / sessions) if sessions else None
    mean_session_entries = (float(ov.get("entries") or 0) / sessions) if sessions else None
    ept = h.get("entries_per_turn")
    levers.append(
        Lever(
            key="store_tail_import",
            title=LEVER_TITLES["store_tail_import"],
            functions="Store::import_session (byte offset per file in the meta table)",
            asis=[
                Figure("re-read after every run (mean session)", mean_session_bytes, "bytes"),
                Figure("SELECT probes per run", mean_session_entries, "count"),
            ],
            tobe=[
                Figure("read after every run", h.get("bytes_per_turn"), "bytes"),
                Figure("commits per run", 1, "count"),
                Figure("rows inserted", ept, "count"),
            ],
            cost_before="O(session) per run, one commit per insert",
            cost_after="O(new entries), one transaction",
            method="estimate: as-is = mean session ledger (bytes and entries) measured here; to-be = the measured per-turn bytes and entries",
            contract="signature-neutral · import_session / rebuild unchanged; the index stays rebuildable",
        )
    )

    # 4. incremental commitments
    c_n = disk.get("commitments", {}).get("writes")
    levers.append(
        Lever(
            key="incremental_commitments",
            title=LEVER_TITLES["incremental_commitments"],
            functions="CommitmentLedger::append · CommitmentLedger::open",
            asis=[
                Figure("events replayed per append", c_n, "count"),
                Figure("commitment file", disk.get("commitments", {}).get("size_bytes"), "bytes"),
            ],
            tobe=[Figure("events replayed per append", 1 if c_n else None, "count")],
            cost_before="O(home) replay per append and per scheduler pass",
            cost_after="O(new events)",
            method="estimate: a projection cache invalidated by file length replays only the events appended since",
            contract="signature-neutral",
        )
    )

    # 5. checkpoint dedupe + GC
    ck = disk.get("checkpoints", {})
    dedupe = None
    if inputs.has_table("checkpoints") and ck:
        dedupe = inputs.query(
            "SELECT coalesce(sum(e), 0) AS b, count(*) AS n FROM (SELECT any_value(coalesce(encoded_bytes, content_bytes)) AS e "
            "FROM checkpoints WHERE file_rel_path IS NOT NULL OR hash IS NOT NULL "
            "GROUP BY coalesce(hash, file_rel_path || ':' || coalesce(content_bytes, -1) || ':' || coalesce(mtime_ns, -1)))"
        )[0]
        entries = inputs.query(
            "SELECT count(*) AS n, coalesce(sum(coalesce(encoded_bytes, content_bytes)), 0) AS b FROM checkpoints "
            "WHERE file_rel_path IS NOT NULL OR hash IS NOT NULL"
        )[0]
    else:
        entries = {"n": 0, "b": 0}
    levers.append(
        Lever(
            key="checkpoint_dedupe_gc",
            title=LEVER_TITLES["checkpoint_dedupe_gc"],
            functions="checkpoints::capture · checkpoints::store",
            asis=[
                Figure("checkpoints on disk", ck.get("size_bytes"), "bytes"),
                Figure("file copies in snapshots", entries["n"], "count"),
                Figure("snapshot files", ck.get("file_count"), "count"),
            ],
            tobe=[
                Figure("content stored once", (dedupe or {}).get("b"), "bytes"),
                Figure("distinct file versions", (dedupe or {}).get("n"), "count"),
            ],
            cost_before="every snapshot stores every file; no cross-session GC",
            cost_after="changed content only; dead sessions collected",
            method=(
                "estimate: a file version is stored once when the same workspace path reappears with the same size "
                "and mtime (or the same content hash) in another snapshot; sizes are the snapshot's encoded bytes. "
                "Collection of dead sessions would remove more and is not quantified"
            ),
            contract="format change inside the checkpoint file; capture, store, restore keep their signatures",
        )
    )

    # 6. sidecar size bounds
    asis_total = sum(float(projected.get(k) or 0) for k in SIDECARS)
    tobe_total = sum(min(float(projected.get(k) or 0), float(SIDECAR_BOUND_BYTES)) for k in SIDECARS)
    now_total = sum(float(disk.get(k, {}).get("size_bytes") or 0) for k in SIDECARS)
    levers.append(
        Lever(
            key="sidecar_bounds",
            title=LEVER_TITLES["sidecar_bounds"],
            functions="ActivityLedger · MisreadLedger · security events · sandbox execution log · Outbox sweep",
            asis=[
                Figure("these sidecars today", now_total, "bytes"),
                Figure(f"at {nlast:,} turns" if nlast else "at scale", asis_total, "bytes"),
            ],
            tobe=[Figure(f"at {nlast:,} turns, each ≤ 5 MiB" if nlast else "bounded", tobe_total, "bytes")],
            cost_before="append forever",
            cost_after="one stat, rewrite past the bound",
            method=(
                "estimate: the projection's linear growth of "
                + ", ".join(SIDECARS)
                + " with each capped at 5 MiB, "
                "the cost ledger's compaction threshold"
            ),
            contract="signature-neutral · same pattern as FinOpsLedger::compact_if_large",
        )
    )

    # 7. in-memory indexes
    biggest = inputs.query("SELECT coalesce(max(entry_count), 0) AS n FROM sessions")[0]["n"]
    asis7 = [Figure("entries scanned per request (largest session)", biggest, "count")]
    tobe7 = [Figure("lookups per request", 1, "count")]
    method7 = "estimate: a request_ids set and a cached TurnIndex replace two O(entries) scans per request"
    rs = inputs.readscale
    if rs is not None:
        try:
            scan, setr = rs.read("request_admission_scan"), rs.read("request_admission_set")
            asis7.append(
                Figure(f"admission scan at {rs.turns[-1]:,} session turns", scan.session_ms[-1], "ms")
            )
            tobe7.append(Figure(f"set lookup at {rs.turns[-1]:,} session turns", setr.session_ms[-1], "ms"))
            method7 += "; times measured by readscale for Python equivalents"
        except (KeyError, IndexError):
            pass
    levers.append(
        Lever(
            key="in_memory_indexes",
            title=LEVER_TITLES["in_memory_indexes"],
            functions="SessionLog::has_request_admission · TurnIndex::from_log",
            asis=asis7,
            tobe=tobe7,
            cost_before="O(session) per request",
            cost_after="O(1) per request",
            method=method7,
            contract="signature-neutral · private fields",
        )
    )
    points = _scale_points(inputs, w, projected, nlast, dedupe, entries, ck)
    return Levers(
        measured_to_be=_measured_to_be(inputs),
        levers=levers,
        projection_turns=nlast,
        scale_points=points,
        scale_method=(
            "estimate: conversation sizes are the measured bytes per turn (with and without repeated bindings) "
            "× turns, RAM × 3.0–5.3 as in the staircase; the listing is the measured bytes of the first 401 "
            "entries per ledger × sessions; per-turn reads are the projection's routing-evidence and commitment "
            "sizes; the to-be disk total subtracts the levers' estimated savings from the projected total"
        ),
    )


def _scale_points(
    inputs: ReportInputs,
    w: dict,
    projected: dict,
    nlast: int | None,
    dedupe: dict | None,
    entries: dict,
    ck: dict,
) -> list[ScalePoint]:
    from vakaudit.report.sections.staircase import RAM_FACTOR_HIGH, RAM_FACTOR_LOW

    h = inputs.analysis.headline
    bpt = w.get("bytes_per_turn") or h.get("bytes_per_turn")
    bpt_to = w.get("bytes_per_turn_without") or bpt
    points: list[ScalePoint] = []
    if bpt:
        for n in (1000, 10000):
            points.append(
                ScalePoint(
                    f"{n:,}-turn conversation, resume",
                    [Figure("read + hashed", bpt * n, "bytes"),
                     Figure("RAM", bpt * n * RAM_FACTOR_LOW, "bytes", high=bpt * n * RAM_FACTOR_HIGH)],
                    [Figure("read + hashed", bpt_to * n, "bytes"),
                     Figure("RAM", bpt_to * n * RAM_FACTOR_LOW, "bytes", high=bpt_to * n * RAM_FACTOR_HIGH)],
                    "less to read, hash and hold on every resume",
                )
            )  # fmt: skip
    sessions = int(inputs.one("overview").get("sessions") or 0)
    listing = inputs.query("SELECT coalesce(sum(size_bytes), 0) AS b FROM ledger_entry WHERE line_no <= 401")[
        0
    ]["b"]
    if sessions:
        points.append(
            ScalePoint(
                "Launch with 1,000 sessions in the home",
                [Figure("parsed for the sidebar, every refresh", listing / sessions * 1000, "bytes")],
                [Figure("sidebar", None, "text", "one indexed store.db query")],
                "launch time no longer follows the number of sessions ever created",
            )
        )
    if nlast:
        commit_rows = inputs.query(
            "SELECT coalesce(max(writes), 0) AS n FROM artifact_writes WHERE kind = 'commitments'"
        )[0]["n"]
        turns = int(inputs.one("overview").get("turns") or 0)
        commit_at = commit_rows / turns * nlast if turns else None
        points.append(
            ScalePoint(
                f"Every turn, at {nlast:,} turns of home history",
                [Figure("routing-evidence parsed", projected.get("routing_evidence"), "bytes"),
                 Figure("commitment events replayed", commit_at, "count")],
                [Figure("per turn", None, "text", "two stat() calls")],
                "turn latency stops drifting upward with age",
            )
        )  # fmt: skip
        total = float(inputs.analysis.projection.total_bytes.get(str(nlast)) or 0)
        ledger_save = float(projected.get(LEDGER_KIND) or 0) - float(
            projected.get(f"{LEDGER_KIND}_without_repeated_bindings") or projected.get(LEDGER_KIND) or 0
        )
        ck_proj = float(projected.get("checkpoints") or 0)
        ratio = (dedupe["b"] / entries["b"]) if dedupe and entries.get("b") else 1.0
        ck_save = ck_proj * (1 - ratio)
        side_save = sum(max(0.0, float(projected.get(k) or 0) - SIDECAR_BOUND_BYTES) for k in SIDECARS)
        points.append(
            ScalePoint(
                f"Disk after {nlast:,} turns",
                [Figure("whole home", total, "bytes")],
                [Figure("whole home", max(0.0, total - ledger_save - ck_save - side_save), "bytes")],
                "backups and verification stay quick",
            )
        )
    barriers = h.get("barriers_per_turn")
    points.append(
        ScalePoint(
            "Durability per turn",
            [Figure("barriers per turn", barriers, "ratio")],
            [Figure("barriers per turn", barriers, "ratio")],
            "nothing: the ledger's promise is unchanged",
        )
    )
    return points


def _build_v7(inputs: ReportInputs) -> Levers:
    """The levers on a 7.0 home: vak 7.0's storage applies each one (baseline7.md names how); the
    figures are this home's, measured, for the mechanism that replaced the JSONL-era write or read.
    There is no to-be to estimate: a comparison home (``--compare``) gives a measured other side."""
    h = inputs.analysis.headline
    proj = inputs.analysis.projection
    last = str(max(proj.turns)) if proj.turns else None
    nlast = int(last) if last else None
    projected = {r.artifact: r.projected_bytes.get(last) for r in proj.rows} if last else {}
    disk = by_key(inputs.rows("disk_by_kind"), "kind")

    def size(kind: str) -> float | None:
        v = disk.get(kind, {}).get("size_bytes")
        return float(v) if v is not None else None

    def writes(kind: str) -> int | None:
        v = disk.get(kind, {}).get("writes")
        return int(v) if v is not None else None

    kinds = {r["kind"]: int(r["n"]) for r in inputs.query(
        "SELECT kind, count(*) AS n FROM ledger_entry WHERE segment IS NOT NULL GROUP BY kind")}
    docs: dict[str, int] = {}
    if inputs.has_table("documents"):
        for frag in ("routing-evidence-rollup", "commitments-rollup"):
            docs[frag] = int(inputs.query("SELECT count(*) AS n FROM documents WHERE contains(name, ?)", [frag])[0]["n"])
    admitted = 0
    if inputs.has_table("refs"):
        admitted = int(inputs.query("SELECT count(*) AS n FROM refs WHERE starts_with(name, 'req/')")[0]["n"])
    objects = inputs.query("SELECT count(*) AS n, coalesce(sum(stored_bytes), 0) AS b FROM objects")[0] \
        if inputs.has_table("objects") else {"n": 0, "b": 0}
    biggest = inputs.query("SELECT coalesce(max(entry_count), 0) AS n FROM sessions")[0]["n"]
    sidecars_now = sum(size(k) or 0 for k in SIDECARS)
    sidecars_at = sum(float(projected.get(k) or 0) for k in SIDECARS)
    at = f" at {nlast:,} turns" if nlast else ""
    locked = "; entry kinds need a scan with --keys" if not kinds else ""
    levers = [
        Lever("binding_once_per_epoch", LEVER_TITLES["binding_once_per_epoch"],
              "SessionLog::append_turn_capabilities (7.0: turn_capabilities_bound / turn_capabilities_ref)",
              [Figure("bindings written in full", kinds.get("turn_capabilities_bound"), "count"),
               Figure("refs to an unchanged binding", kinds.get("turn_capabilities_ref"), "count"),
               Figure("ledger per turn (stored)", h.get("bytes_per_turn"), "bytes")],
              [], "—", "—",
              "measured: entry kinds of this home's ledger frames" + locked, "",
              applied="an unchanged binding is a turn_capabilities_ref; a binding's interface is an object "
              "in the tenant store (baseline7.md §8)"),
        Lever("routing_evidence_compaction", LEVER_TITLES["routing_evidence_compaction"],
              "routing-evidence record chain · routing-evidence-rollup Document",
              [Figure("routing-evidence chain", size("routing_evidence"), "bytes"),
               Figure("rows", writes("routing_evidence"), "count"),
               Figure("rollup documents", docs.get("routing-evidence-rollup"), "count"),
               Figure(f"chain{at} (retention applied)", projected.get("routing_evidence"), "bytes")],
              [], "—", "—",
              "measured: the chain's files and rows, the documents table; the projection applies 7.0's retention",
              "", applied="a turn reads the rollup's day buckets per leg from a saved position, never the "
              "whole evidence; its sealed segments age out after 400 days (baseline7.md §7.2, §9.1)"),
        Lever("store_tail_import", LEVER_TITLES["store_tail_import"],
              "vak-catalog ingest (cursors per source)",
              [Figure("catalog.db", size("catalog_db"), "bytes")],
              [], "—", "—", "measured: the catalog's file size", "",
              applied="catalog ingest reads each source from its cursor (frames already taken) in one "
              "transaction per source (baseline7.md §10)"),
        Lever("incremental_commitments", LEVER_TITLES["incremental_commitments"],
              "commitments record chain · commitments-rollup Document",
              [Figure("commitment rows", writes("commitments"), "count"),
               Figure("rollup documents", docs.get("commitments-rollup"), "count")],
              [], "—", "—", "measured: the chain's rows, the documents table", "",
              applied="commitments fold into the commitments-rollup Document from its saved position "
              "(baseline7.md §7.2)"),
        Lever("checkpoint_dedupe_gc", LEVER_TITLES["checkpoint_dedupe_gc"],
              "checkpoints::capture → ObjectStore::put",
              [Figure("checkpoint manifests", size("checkpoints"), "bytes"),
               Figure("manifest files", writes("checkpoints"), "count"),
               Figure("objects in the tenant store (all content)", float(objects["b"]), "bytes"),
               Figure("objects", int(objects["n"]), "count")],
              [], "—", "—", "measured: the checkpoint manifests' files and the objects table", "",
              applied="file contents are content-addressed objects (equal content is one object; an unchanged "
              "size and mtime reuse the object unread); pruned manifests release their grants and an object "
              "without a live grant is collected (baseline7.md §7, §11)"),
        Lever("sidecar_bounds", LEVER_TITLES["sidecar_bounds"],
              "record chains: retention by class of sealed segments",
              [Figure("these chains today", sidecars_now, "bytes"),
               Figure(f"{at.strip() or 'at scale'} (7.0 bounds applied)", sidecars_at, "bytes")],
              [], "—", "—",
              "measured today; the projection applies 7.0's retention windows (not its quotas) to "
              + ", ".join(SIDECARS), "",
              applied=_sidecar_bounds(inputs, [k for k in SIDECARS if k in disk]),
              applied_state="partly applied" if _unbounded(inputs, [k for k in SIDECARS if k in disk])
              else "applied"),
        Lever("in_memory_indexes", LEVER_TITLES["in_memory_indexes"],
              "req/<session>/<sha256> ref · catalog entries",
              [Figure("admission refs in refs.db", admitted, "count"),
               Figure("entries of the largest session", int(biggest), "count")],
              [], "—", "—", "measured: refs named req/ and the sessions table", "",
              applied="a request's admission is one point lookup of its req/ ref; the session's entries are "
              "answered by the catalog's index (baseline7.md §8.3, §10)"),
    ]
    return Levers(levers=levers, projection_turns=nlast, scale_points=[], measured_to_be=_measured_to_be(inputs),
                  scale_method="", v7=True)


def _bound(inputs: ReportInputs, kind: str) -> str:
    card = inputs.card(kind)
    return card.bound if card is not None else "none"


def _unbounded(inputs: ReportInputs, kinds: list[str]) -> list[str]:
    """The kinds whose 7.0 card gives them no bound (``none``, ``not aged``)."""
    return [k for k in kinds if _bound(inputs, k).startswith(("none", "not aged"))]


def _sidecar_bounds(inputs: ReportInputs, kinds: list[str]) -> str:
    """How 7.0 bounds the append-only side chains present: their cards' bounds, and which stay unbounded."""
    bounded, unbounded = [], []
    loose = set(_unbounded(inputs, kinds))
    for k in kinds:
        (unbounded if k in loose else bounded).append(f"{k} ({_bound(inputs, k)})")
    text = "7.0 bounds a chain by the retention class of its sealed segments (baseline7.md §9.1)"
    if bounded:
        text += "; here: " + ", ".join(bounded)
    if unbounded:
        text += "; not bounded by 7.0: " + ", ".join(unbounded)
    return text
