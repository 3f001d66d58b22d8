-- title: Overview
-- measured: counts over the scan's parsed ledger entries (a turn = one intent entry; directives = user messages with text and no tool result, not control messages, for ledgers written without intents; user-role messages include the ones carrying tool results); bytes are file sizes from the scan's files table
-- order: 10
SELECT
    -- a JSONL ledger is one file; a 7.0 ledger (frames in entries) a directory of segment files
    CASE WHEN EXISTS (SELECT 1 FROM entries WHERE segment IS NOT NULL)
         THEN (SELECT count(DISTINCT regexp_replace(rel_path, '/[^/]*$', '')) FROM ledger_file)
         ELSE (SELECT count(DISTINCT rel_path) FROM ledger_file) END AS sessions,
    (SELECT count(*) FROM ledger_entry WHERE kind = 'intent') AS turns,
    (SELECT count(*) FROM ledger_entry WHERE is_directive) AS directives,
    (SELECT count(*) FROM ledger_entry) AS entries,
    (SELECT count(*) FROM ledger_entry WHERE kind = 'message' AND role = 'user') AS user_messages,
    (SELECT count(*) FROM ledger_entry WHERE kind = 'message' AND role = 'assistant') AS assistant_messages,
    (SELECT coalesce(sum(tool_result_count), 0) FROM ledger_entry WHERE kind = 'message') AS tool_result_blocks,
    (SELECT coalesce(sum(size_bytes), 0) FROM ledger_file) AS ledger_bytes,
    (SELECT coalesce(sum(size_bytes), 0) FROM files) AS home_bytes,
    (SELECT count(*) FROM files) AS home_files
