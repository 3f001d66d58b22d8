-- title: Ledger bytes by payload field, inside each entry kind
-- measured: serialized size of each top-level payload field (its JSON value as written) per entry, from the scan's entry_fields table, summed per (entry kind, field)
-- order: 25
WITH k AS (SELECT kind, sum(size_bytes) AS kind_bytes FROM entries GROUP BY kind)
SELECT
    f.entry_kind AS kind,
    f.field,
    count(*) AS entry_count,
    sum(f.size_bytes) AS size_bytes,
    sum(f.size_bytes) / nullif(any_value(k.kind_bytes), 0) AS share_of_kind,
    avg(f.size_bytes) AS mean_bytes,
    max(f.size_bytes) AS max_bytes
FROM entry_fields f JOIN k ON k.kind = f.entry_kind
GROUP BY f.entry_kind, f.field
ORDER BY kind, size_bytes DESC, field
