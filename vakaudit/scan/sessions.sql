-- sessions: one row per ledger (rel_path) of the entries view (vakaudit.scan.derive)
SELECT rel_path, any_value(session_id) AS session_id, any_value(agent_id) AS agent_id,
       any_value(workspace_key) AS workspace_key,
       arg_min(app_version, line_no) FILTER (WHERE kind = 'header') AS app_version,
       arg_min(provider, line_no) FILTER (WHERE kind = 'header') AS provider,
       arg_min(model, line_no) FILTER (WHERE kind = 'header') AS model,
       min(ts_at) AS first_at, max(ts_at) AS last_at,
       count(*) AS entry_count, coalesce(max(turn_no) FILTER (WHERE is_directive), 0) AS turn_count,
       sum(size_bytes)::BIGINT AS size_bytes,
       coalesce(sum(CASE WHEN kind = 'turn_capabilities_bound' THEN size_bytes END), 0)::BIGINT AS binding_bytes,
       count(*) FILTER (WHERE chain_status = 'unparseable') AS unparseable_count,
       count(*) FILTER (WHERE chain_status = 'broken') AS chain_broken_count,
       count(*) FILTER (WHERE chain_status = 'unchained') AS unchained_count,
       count(*) FILTER (WHERE chain_status IN ('broken', 'unparseable')) = 0 AS chain_ok,
       coalesce(sum(input_tokens), 0)::BIGINT AS input_tokens,
       coalesce(sum(output_tokens), 0)::BIGINT AS output_tokens,
       coalesce(sum(cache_read_input_tokens), 0)::BIGINT AS cache_read_input_tokens,
       coalesce(sum(cache_creation_input_tokens), 0)::BIGINT AS cache_creation_input_tokens
FROM entries GROUP BY rel_path ORDER BY rel_path
