-- title: Distribution of entries per turn
-- measured: number of turns (intent-counted) by how many ledger entries were attributed to them, split by turns with and without tool calls
-- order: 55
SELECT
    entry_count,
    count(*) AS turns,
    count(*) FILTER (WHERE tool_call_count > 0) AS with_tool_calls,
    count(*) FILTER (WHERE tool_call_count = 0) AS without_tool_calls,
    sum(size_bytes) AS size_bytes
FROM ledger_turn
WHERE intent_count > 0
GROUP BY entry_count
ORDER BY entry_count
