-- title: Sidecar growth per turn, per artifact
-- measured: rows (lines, records or files) and bytes of each artifact kind other than the session ledgers, divided by the home's turn count (intent entries)
-- order: 70
WITH turns AS (SELECT count(*) AS n FROM ledger_entry WHERE kind = 'intent')
SELECT
    w.kind AS artifact,
    w.writes AS rows,
    w.size_bytes,
    w.size_bytes / nullif(w.writes, 0) AS bytes_per_row,
    w.writes / nullif(any_value(turns.n), 0) AS rows_per_turn,
    w.size_bytes / nullif(any_value(turns.n), 0) AS bytes_per_turn
FROM artifact_writes w, turns
WHERE w.kind <> ledger_kind()
GROUP BY w.kind, w.writes, w.size_bytes
ORDER BY size_bytes DESC, artifact
