-- title: Findings by code per home
-- measured: rows of each home's findings table (the scan's data problems, with their severity), counted per home, code and severity
SELECT home_id, code, severity, count(*) AS finding_count
FROM findings
GROUP BY home_id, code, severity
ORDER BY home_id, finding_count DESC, code
