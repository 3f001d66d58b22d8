-- title: Disk by artifact kind
-- measured: apparent file sizes (stat st_size) of every file in the home, from the scan's files table, grouped by the artifact kind each file was classified to (shares add up to the whole home); writes = ledger entries, rows of the kind's table, or files
-- order: 40
WITH t AS (SELECT sum(size_bytes) AS total FROM files)
SELECT
    w.kind,
    coalesce(c."group", 'other') AS "group",
    w.file_count,
    w.writes,
    w.size_bytes,
    w.size_bytes / nullif(any_value(t.total), 0) AS share,
    (SELECT max(size_bytes) FROM files f WHERE f.kind = w.kind) AS max_file_bytes
FROM artifact_writes w LEFT JOIN write_cards c ON c.kind = w.kind, t
GROUP BY w.kind, c."group", w.file_count, w.writes, w.size_bytes
ORDER BY size_bytes DESC, kind
