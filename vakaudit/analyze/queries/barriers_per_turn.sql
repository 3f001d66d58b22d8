-- title: Barriers (fsync/fdatasync) per turn, by artifact
-- measured: writes seen in the home (ledger entries; rows, lines or files of each sidecar kind) divided by turns, times the barriers one write costs under the kind's declared write discipline (its WriteCard.barriers_per_write); the ledger costs one sync_data per entry appended
-- order: 60
WITH turns AS (SELECT count(*) AS n FROM ledger_entry WHERE kind = 'intent')
SELECT
    w.kind AS artifact,
    w.writes,
    c.barriers_per_write,
    w.writes * c.barriers_per_write AS barriers,
    w.writes / nullif(any_value(turns.n), 0) AS writes_per_turn,
    w.writes * c.barriers_per_write / nullif(any_value(turns.n), 0) AS barriers_per_turn,
    c.discipline
FROM artifact_writes w JOIN write_cards c ON c.kind = w.kind, turns
WHERE c.barriers_per_write > 0 AND w.writes > 0
GROUP BY w.kind, w.writes, c.barriers_per_write, c.discipline
ORDER BY barriers DESC, artifact
