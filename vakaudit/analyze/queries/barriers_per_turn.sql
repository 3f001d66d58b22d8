-- title: Barriers (fsync/fdatasync) per turn, by artifact
-- measured: writes seen in the home (ledger entries; rows, lines or files of each sidecar kind) divided by turns, times the barriers one write costs under the kind's declared write discipline (its WriteCard.barriers_per_write); the ledger costs one sync_data per entry appended, or on a 7.0 home the syncs of group commit (one per commit point and request admission, one per segment's unsynced tail, four per sealed segment: the ledger_syncs view); a 7.0 side record chain costs one sync_data per row appended, none for a row appended relaxed (telemetry), one per segment with an unsynced tail and four per sealed segment (the chain_syncs view)
-- order: 60
WITH turns AS (SELECT count(*) AS n FROM ledger_entry WHERE kind = 'intent'),
b AS (
    SELECT
        w.kind,
        w.writes,
        c.discipline,
        CASE WHEN w.kind = ledger_kind() AND ls.syncs IS NOT NULL THEN ls.syncs
             WHEN cs.syncs IS NOT NULL THEN cs.syncs
             ELSE w.writes * c.barriers_per_write END AS barriers
    FROM artifact_writes w JOIN write_cards c ON c.kind = w.kind
    LEFT JOIN ledger_syncs ls ON w.kind = ledger_kind()
    LEFT JOIN chain_syncs cs ON cs.kind = w.kind
    WHERE (c.barriers_per_write > 0 OR coalesce(cs.syncs, 0) > 0) AND w.writes > 0
)
SELECT
    b.kind AS artifact,
    b.writes,
    b.barriers / b.writes AS barriers_per_write,
    b.barriers,
    b.writes / nullif(any_value(turns.n), 0) AS writes_per_turn,
    b.barriers / nullif(any_value(turns.n), 0) AS barriers_per_turn,
    b.discipline
FROM b, turns
GROUP BY b.kind, b.writes, b.barriers, b.discipline
ORDER BY barriers DESC, artifact
