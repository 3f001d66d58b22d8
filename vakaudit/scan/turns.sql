-- turns: one row per (rel_path, turn_no) of the entries view (vakaudit.scan.derive); the
-- slice placeholder narrows the query to one slice of those keys
SELECT rel_path, any_value(session_id) AS session_id, any_value(agent_id) AS agent_id,
       any_value(workspace_key) AS workspace_key, turn_no,
       max(CASE WHEN is_directive THEN id END) AS turn_id,
       min(CASE WHEN is_directive THEN ts_at END) AS started_at, max(ts_at) AS ended_at,
       count(*) AS entry_count, sum(size_bytes)::BIGINT AS size_bytes,
       coalesce(sum(CASE WHEN kind = 'turn_capabilities_bound' THEN size_bytes END), 0)::BIGINT AS binding_bytes,
       count(*) FILTER (WHERE kind = 'turn_capabilities_bound') AS binding_count,
       count(*) FILTER (WHERE kind = 'message') AS message_count,
       count(*) FILTER (WHERE role = 'assistant') AS assistant_count,
       count(*) FILTER (WHERE control IS NOT NULL) AS control_count,
       count(*) FILTER (WHERE kind = 'receipt') AS receipt_count,
       count(*) FILTER (WHERE kind = 'activity') AS activity_count,
       coalesce(sum(tool_use_count), 0)::BIGINT AS tool_use_count,
       coalesce(sum(tool_result_count), 0)::BIGINT AS tool_result_count,
       coalesce(sum(tool_result_bytes), 0)::BIGINT AS tool_result_bytes,
       coalesce(sum(input_tokens), 0)::BIGINT AS input_tokens,
       coalesce(sum(output_tokens), 0)::BIGINT AS output_tokens,
       coalesce(sum(cache_read_input_tokens), 0)::BIGINT AS cache_read_input_tokens,
       coalesce(sum(cache_creation_input_tokens), 0)::BIGINT AS cache_creation_input_tokens,
       arg_max(model, line_no) FILTER (WHERE role = 'assistant') AS model,
       count(*) FILTER (WHERE chain_ok = false) AS chain_broken_count
FROM entries WHERE turn_no IS NOT NULL {slice}
GROUP BY rel_path, turn_no ORDER BY rel_path, turn_no
