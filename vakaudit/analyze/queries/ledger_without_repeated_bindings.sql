-- title: Ledger without repeated bindings
-- measured: ledger bytes minus every capability binding whose body equals the previous binding of the same session, plus for each of them a reference line holding only the envelope (ids, ts, prev_hash, kind), the epoch (their mean size in that file, from entry_fields) and a 64-hex body_digest field (81 bytes, ~0.3 KB a line in all). The _any_binding_body columns apply the same reference line to every binding (the reference report's 66 KB - 48 KB arithmetic, which ignores the first binding of each epoch).
-- estimate: what the ledger would weigh if a binding body were written once per epoch (the report's "without repeated bindings" row); the reference-line size is modelled, the removed bytes are measured
-- order: 66
WITH total AS (
    SELECT sum(size_bytes) AS ledger_bytes, count(*) FILTER (WHERE kind = 'intent') AS turns,
           sum(size_bytes) FILTER (WHERE kind = 'turn_capabilities_bound') AS binding_bytes,
           count(*) FILTER (WHERE kind = 'turn_capabilities_bound') AS bindings
    FROM ledger_entry
),
b AS (
    SELECT rel_path, size_bytes,
        body_sha256 = lag(body_sha256) OVER (PARTITION BY rel_path ORDER BY line_no) AS unchanged
    FROM ledger_entry
    WHERE kind = 'turn_capabilities_bound'
),
kept AS (
    SELECT rel_path,
        sum(size_bytes) FILTER (WHERE field IN ('(envelope)', 'epoch'))
            / nullif(max(entry_count) FILTER (WHERE field = '(envelope)'), 0) AS ref_bytes
    FROM entry_fields
    WHERE kind = 'turn_capabilities_bound'
    GROUP BY rel_path
),
allref AS (
    SELECT coalesce(sum(kept.ref_bytes + 81), 0) AS reference_bytes
    FROM ledger_entry e JOIN kept USING (rel_path)
    WHERE e.kind = 'turn_capabilities_bound'
),
rep AS (
    SELECT count(*) AS repeated, coalesce(sum(b.size_bytes), 0) AS repeated_bytes,
           coalesce(sum(kept.ref_bytes + 81), 0) AS reference_bytes
    FROM b LEFT JOIN kept USING (rel_path)
    WHERE b.unchanged
)
SELECT
    total.ledger_bytes,
    total.turns,
    total.bindings,
    total.binding_bytes,
    total.binding_bytes / nullif(total.ledger_bytes, 0) AS binding_share,
    total.binding_bytes / nullif(total.bindings, 0) AS mean_binding_bytes,
    rep.repeated AS repeated_bindings,
    rep.repeated_bytes AS repeated_binding_bytes,
    rep.reference_bytes / nullif(rep.repeated, 0) AS mean_reference_line_bytes,
    round(total.ledger_bytes - rep.repeated_bytes + rep.reference_bytes)::BIGINT AS ledger_bytes_without,
    total.ledger_bytes / nullif(total.turns, 0) AS bytes_per_turn,
    (total.ledger_bytes - rep.repeated_bytes + rep.reference_bytes) / nullif(total.turns, 0) AS bytes_per_turn_without,
    round(total.ledger_bytes - total.binding_bytes + allref.reference_bytes)::BIGINT AS ledger_bytes_without_any_binding_body,
    (total.ledger_bytes - total.binding_bytes + allref.reference_bytes) / nullif(total.turns, 0)
        AS bytes_per_turn_without_any_binding_body
FROM total, rep, allref
