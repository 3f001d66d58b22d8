-- title: User vs assistant messages
-- measured: message entries by role: count, line bytes and mean line size; tool results ride in user-role entries and are counted separately by block
-- order: 30
SELECT
    role,
    count(*) AS message_count,
    sum(size_bytes) AS size_bytes,
    avg(size_bytes) AS mean_bytes,
    quantile_cont(size_bytes, 0.5) AS p50_bytes,
    count(*) FILTER (WHERE coalesce(tool_result_count, 0) > 0) AS carrying_tool_results,
    count(*) FILTER (WHERE coalesce(tool_use_count, 0) > 0) AS carrying_tool_calls
FROM ledger_entry
WHERE kind = 'message'
GROUP BY role
ORDER BY role
