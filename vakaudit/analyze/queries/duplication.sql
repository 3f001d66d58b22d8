-- title: Duplicated bytes
-- measured: ledger entries whose payload bytes (everything after the envelope's kind, SHA-256 per entry in the scan) equal an earlier entry's: capability bindings unchanged since the previous binding of the same session, bindings repeating a body first written in another session, system prompts repeated in headers and in bindings that changed otherwise (prompt bytes only), any other entry kind re-persisting an identical body within its session, and checkpoint file contents re-persisted unchanged from the previous snapshot of the same session (same content hash in hashed manifests; same path and decoded size in G1 base64 manifests, whose scan rows carry no content digest: an upper bound). Categories do not overlap; shares are of ledger bytes and of home bytes.
-- order: 65
WITH total AS (
    SELECT (SELECT sum(size_bytes) FROM ledger_entry) AS ledger_bytes, (SELECT sum(size_bytes) FROM files) AS home_bytes
),
b AS (
    SELECT rel_path, line_no, kind, size_bytes, body_sha256, system_prompt_sha256, system_prompt_bytes,
        lag(body_sha256) OVER (PARTITION BY rel_path, kind ORDER BY line_no) AS prev_body_in_session,
        row_number() OVER (PARTITION BY body_sha256, kind ORDER BY ts_at, rel_path, line_no) AS body_rank,
        row_number() OVER (PARTITION BY system_prompt_sha256 ORDER BY ts_at, rel_path, line_no) AS prompt_rank
    FROM ledger_entry
    WHERE body_sha256 IS NOT NULL
),
classified AS (
    SELECT *,
        CASE
            WHEN kind = 'turn_capabilities_bound' AND body_sha256 = prev_body_in_session
                THEN 'binding_unchanged_since_previous_turn'
            WHEN kind = 'turn_capabilities_bound' AND body_rank > 1
                THEN 'binding_repeated_from_another_session'
            WHEN kind IN ('header', 'turn_capabilities_bound') AND system_prompt_sha256 IS NOT NULL AND prompt_rank > 1
                THEN 'system_prompt_repeated'
            WHEN kind NOT IN ('header', 'turn_capabilities_bound') AND body_sha256 = prev_body_in_session
                THEN 'identical_body_repersisted'
        END AS category
    FROM b
),
rows AS (
    SELECT category, kind,
        CASE WHEN category = 'system_prompt_repeated' THEN system_prompt_bytes ELSE size_bytes END AS bytes,
        true AS in_ledger
    FROM classified
    WHERE category IS NOT NULL
    UNION ALL
    SELECT 'checkpoint_file_unchanged_since_previous_snapshot', 'checkpoints', encoded_bytes, false
    FROM (
        SELECT encoded_bytes, hash, content_bytes,
            lag(hash) OVER w AS prev_hash, lag(content_bytes) OVER w AS prev_bytes, lag(seq) OVER w AS prev_seq,
            seq
        FROM checkpoints
        WHERE file_rel_path IS NOT NULL
        WINDOW w AS (PARTITION BY session_id, file_rel_path ORDER BY seq)
    )
    WHERE prev_seq = seq - 1
      AND ((hash IS NOT NULL AND hash = prev_hash) OR (hash IS NULL AND content_bytes = prev_bytes))
)
SELECT
    category,
    kind,
    count(*) AS entry_count,
    sum(bytes) AS repeated_bytes,
    CASE WHEN bool_and(in_ledger) THEN sum(bytes) / nullif(any_value(total.ledger_bytes), 0) END AS share_of_ledger,
    sum(bytes) / nullif(any_value(total.home_bytes), 0) AS share_of_home
FROM rows, total
GROUP BY category, kind
ORDER BY repeated_bytes DESC, category, kind
