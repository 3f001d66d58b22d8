-- Analysis views over the scan's tables, shared by the metric queries. Created by open_scan();
-- statements are separated by a line holding only ';;'. Names here are the analysis vocabulary;
-- scan tables keep their own names. A /*keys*/ mark is where the partition columns of a fleet lake
-- (home_id) go, so the same views serve one scan and a lake of many homes. A /*ledger_kind*/ mark is
-- where the session ledger's artifact kind name goes (vakaudit.artifacts.LEDGER_KIND, the one place it
-- is spelled): views and metric queries call ledger_kind() instead of naming it.

CREATE OR REPLACE MACRO ledger_kind() AS /*ledger_kind*/
;;
-- The rows of files that are session ledgers: one row per ledger file.
CREATE OR REPLACE VIEW ledger_file AS
SELECT *
FROM files
WHERE kind = ledger_kind()
;;

-- Parsed ledger entries only (blank and unparseable lines have no kind).
CREATE OR REPLACE VIEW ledger_entry AS
SELECT *
FROM entries
WHERE kind IS NOT NULL
;;
-- One row per turn of a session, as the scan attributes entries to turns (file order: a directive
-- opens a turn; the binding, goal update and intent written just before it belong to it). A turn
-- carries intent_count so metrics can count turns by their intent entry.
CREATE OR REPLACE VIEW ledger_turn AS
SELECT
    /*keys*/rel_path,
    any_value(session_id) AS session_id,
    turn_no,
    count(*) AS entry_count,
    sum(size_bytes) AS size_bytes,
    sum(coalesce(tool_use_count, 0)) AS tool_call_count,
    count(*) FILTER (WHERE kind = 'intent') AS intent_count,
    min(ts_at) AS started_at
FROM ledger_entry
WHERE turn_no IS NOT NULL
GROUP BY /*keys*/rel_path, turn_no
