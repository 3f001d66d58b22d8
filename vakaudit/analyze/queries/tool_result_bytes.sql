-- title: Tool-result bytes
-- measured: tool_result blocks inside user-role message entries: block count, their serialized bytes, and the line bytes of the entries that carry them
-- order: 35
SELECT
    coalesce(sum(tool_result_count), 0) AS tool_result_blocks,
    coalesce(sum(tool_result_bytes), 0) AS tool_result_bytes,
    count(*) AS carrying_entries,
    coalesce(sum(size_bytes), 0) AS carrying_entry_bytes,
    coalesce(sum(tool_result_bytes), 0) / nullif(sum(tool_result_count), 0) AS mean_block_bytes
FROM ledger_entry
WHERE kind = 'message' AND coalesce(tool_result_count, 0) > 0
