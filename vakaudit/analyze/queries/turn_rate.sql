-- title: Observed turn rate
-- measured: timestamps of intent entries (first and last turn of the home) and the turn count between them
-- order: 80
SELECT
    count(*) AS turns,
    min(ts_at) AS first_turn_at,
    max(ts_at) AS last_turn_at,
    date_diff('second', min(ts_at), max(ts_at)) / 86400.0 AS span_days,
    count(*) / nullif(date_diff('second', min(ts_at), max(ts_at)) / 86400.0, 0) AS turns_per_day
FROM ledger_entry
WHERE kind = 'intent'
