-- title: Homes in the lake
-- measured: the lake's homes table (one row per home, written by its last fleet scan)
SELECT home_id, home_path, layout, scanned_at, home_bytes, file_count, bytes_read, scan_duration_ms
FROM homes
ORDER BY home_id
