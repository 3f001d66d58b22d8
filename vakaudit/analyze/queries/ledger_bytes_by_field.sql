-- title: Ledger bytes by payload field, inside each entry kind
-- measured: bytes of each top-level payload member as written (`,"key":value`) summed per (entry kind, field) by the scan's entry_fields table; the pseudo-field (envelope) holds id, parent_id, ts, prev_hash, kind, braces and the LF; on a 7.0 home the bytes are of each entry's plaintext JSON (a frame is compressed and sealed whole, so a field has no stored size of its own) and shares are of the kind's plaintext bytes; a locked home has no plaintext, so no rows (scan with --keys)
-- order: 25
WITH k AS (SELECT kind, sum(coalesce(plain_bytes, size_bytes)) AS kind_bytes FROM ledger_entry GROUP BY kind),
f AS (
    SELECT kind, field, sum(entry_count) AS entry_count, sum(size_bytes) AS size_bytes
    FROM entry_fields WHERE kind IS NOT NULL GROUP BY kind, field
)
SELECT
    f.kind,
    f.field,
    f.entry_count,
    f.size_bytes,
    f.size_bytes / nullif(k.kind_bytes, 0) AS share_of_kind,
    f.size_bytes / nullif(f.entry_count, 0) AS mean_bytes
FROM f JOIN k USING (kind)
ORDER BY kind, size_bytes DESC, field
