-- Analysis views over the scan's tables, shared by the metric queries. Created by open_scan();
-- statements are separated by a line holding only ';;'. Names here are the analysis vocabulary;
-- scan tables keep their own names.

-- One row per parsed ledger entry, attributed to a turn of its session.
-- A span opens at a turn_capabilities_bound entry, or at a user directive (text, no tool_result,
-- not a control message) with no binding since the previous directive (ledgers written without
-- bindings). A turn is counted by its intent entry (the reference report's definition): a span
-- without an intent joins the turn before it; entries before the first intent-bearing span (the
-- header) have turn_seq 0.
CREATE OR REPLACE VIEW ledger_entry AS
WITH e AS (
    SELECT
        rel_path, session_id, line_no, entry_id, kind, role, size_bytes, ts_at,
        coalesce(tool_use_count, 0) AS tool_use_count,
        coalesce(tool_result_count, 0) AS tool_result_count,
        (kind = 'message' AND role = 'user' AND coalesce(tool_result_count, 0) = 0
            AND coalesce(text_block_count, 0) > 0 AND NOT coalesce(is_control, false)) AS is_directive
    FROM entries
),
w AS (
    SELECT *,
        max(CASE WHEN kind = 'turn_capabilities_bound' THEN line_no END)
            OVER (PARTITION BY rel_path ORDER BY line_no ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
            AS last_binding_line,
        max(CASE WHEN is_directive THEN line_no END)
            OVER (PARTITION BY rel_path ORDER BY line_no ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
            AS last_directive_line
    FROM e
),
s AS (
    SELECT *,
        sum(CASE WHEN kind = 'turn_capabilities_bound'
                   OR (is_directive AND (last_binding_line IS NULL
                        OR (last_directive_line IS NOT NULL AND last_binding_line < last_directive_line)))
            THEN 1 ELSE 0 END) OVER (PARTITION BY rel_path ORDER BY line_no) AS span_seq
    FROM w
),
spans AS (
    SELECT rel_path, span_seq, bool_or(kind = 'intent') AS has_intent
    FROM s GROUP BY rel_path, span_seq
),
numbered AS (
    SELECT rel_path, span_seq,
        sum(CASE WHEN has_intent AND span_seq > 0 THEN 1 ELSE 0 END)
            OVER (PARTITION BY rel_path ORDER BY span_seq) AS turn_seq
    FROM spans
)
SELECT
    s.rel_path, s.session_id, s.line_no, s.entry_id, s.kind, s.role, s.size_bytes, s.ts_at,
    s.tool_use_count, s.tool_result_count, s.is_directive, n.turn_seq
FROM s JOIN numbered n USING (rel_path, span_seq)
;;
-- One row per turn (per intent-bearing span, plus the intent-less spans after it).
CREATE OR REPLACE VIEW ledger_turn AS
SELECT
    rel_path,
    any_value(session_id) AS session_id,
    turn_seq,
    count(*) AS entry_count,
    sum(size_bytes) AS size_bytes,
    sum(tool_use_count) AS tool_call_count,
    count(*) FILTER (WHERE kind = 'intent') AS intent_count,
    min(ts_at) AS started_at
FROM ledger_entry
WHERE turn_seq > 0
GROUP BY rel_path, turn_seq
