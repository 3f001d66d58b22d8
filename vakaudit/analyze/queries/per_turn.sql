-- title: Per-turn constants
-- measured: ledger entries, bytes and ledger barriers (one sync_data per entry appended) per turn, a turn counted by its intent entry. The means are totals over turns (header and other pre-turn entries included, as the reference report divides); the distributions are over entries attributed to each turn. Split by turns with and without tool calls.
-- order: 50
WITH totals AS (
    SELECT count(*) AS entries, sum(size_bytes) AS bytes,
           count(*) FILTER (WHERE kind = 'intent') AS turns
    FROM ledger_entry
),
t AS (
    SELECT 'all' AS scope, * FROM ledger_turn WHERE intent_count > 0
    UNION ALL SELECT 'with_tool_calls', * FROM ledger_turn WHERE intent_count > 0 AND tool_call_count > 0
    UNION ALL SELECT 'without_tool_calls', * FROM ledger_turn WHERE intent_count > 0 AND tool_call_count = 0
)
SELECT
    scope,
    count(*) AS turns,
    CASE WHEN scope = 'all' THEN any_value(totals.entries) / nullif(any_value(totals.turns), 0)
         ELSE avg(entry_count) END AS entries_per_turn,
    CASE WHEN scope = 'all' THEN any_value(totals.bytes) / nullif(any_value(totals.turns), 0)
         ELSE avg(size_bytes) END AS bytes_per_turn,
    CASE WHEN scope = 'all' THEN any_value(totals.entries) / nullif(any_value(totals.turns), 0)
         ELSE avg(entry_count) END AS ledger_barriers_per_turn,
    avg(entry_count) AS entries_mean_attributed,
    quantile_cont(entry_count, 0.05) AS entries_p05,
    quantile_cont(entry_count, 0.25) AS entries_p25,
    quantile_cont(entry_count, 0.5) AS entries_p50,
    quantile_cont(entry_count, 0.75) AS entries_p75,
    quantile_cont(entry_count, 0.95) AS entries_p95,
    max(entry_count) AS entries_max,
    avg(size_bytes) AS bytes_mean_attributed,
    quantile_cont(size_bytes, 0.05) AS bytes_p05,
    quantile_cont(size_bytes, 0.25) AS bytes_p25,
    quantile_cont(size_bytes, 0.5) AS bytes_p50,
    quantile_cont(size_bytes, 0.75) AS bytes_p75,
    quantile_cont(size_bytes, 0.95) AS bytes_p95,
    max(size_bytes) AS bytes_max,
    avg(tool_call_count) AS tool_calls_mean
FROM t, totals
GROUP BY scope
ORDER BY CASE scope WHEN 'all' THEN 0 WHEN 'with_tool_calls' THEN 1 ELSE 2 END
