-- title: Duplicated bytes
-- measured: ledger entries whose payload bytes (everything after the envelope's kind, SHA-256 per entry in the scan) equal an earlier entry's: capability bindings unchanged since the previous binding of the same session, bindings repeating a body first written in another session, system prompts repeated in headers and in bindings that changed otherwise (prompt bytes only), and any other entry kind re-persisting an identical body within its session. Categories do not overlap.
-- order: 65
WITH total AS (SELECT sum(size_bytes) AS ledger_bytes FROM ledger_entry),
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
)
SELECT
    category,
    kind,
    count(*) AS entry_count,
    sum(CASE WHEN category = 'system_prompt_repeated' THEN system_prompt_bytes ELSE size_bytes END) AS repeated_bytes,
    sum(CASE WHEN category = 'system_prompt_repeated' THEN system_prompt_bytes ELSE size_bytes END)
        / nullif(any_value(total.ledger_bytes), 0) AS share_of_ledger
FROM classified, total
WHERE category IS NOT NULL
GROUP BY category, kind
ORDER BY repeated_bytes DESC, category, kind
