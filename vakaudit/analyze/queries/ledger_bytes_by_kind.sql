-- title: Ledger bytes by entry kind
-- measured: line sizes (bytes including the LF) of every parsed ledger entry, grouped by envelope kind; share of all entry bytes; quantiles are DuckDB quantile_cont over line sizes; on a 7.0 home the size is each frame's stored bytes (length, compressed and sealed entry, link hash) and a sealed frame scanned without --keys has no kind
-- order: 20
WITH t AS (SELECT sum(size_bytes) AS total FROM ledger_entry)
SELECT
    kind,
    count(*) AS entry_count,
    sum(size_bytes) AS size_bytes,
    sum(size_bytes) / nullif(any_value(t.total), 0) AS share,
    avg(size_bytes) AS mean_bytes,
    quantile_cont(size_bytes, 0.5) AS p50_bytes,
    quantile_cont(size_bytes, 0.95) AS p95_bytes,
    max(size_bytes) AS max_bytes
FROM ledger_entry, t
GROUP BY kind
ORDER BY size_bytes DESC, kind
