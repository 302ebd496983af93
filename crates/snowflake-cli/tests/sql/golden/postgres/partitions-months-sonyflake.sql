-- Partitions of _log by ID range, made by `snowflake sql --partitions`:
-- one a calendar month, 4 in all, from midnight 2024-11-01 to midnight 2025-03-01 in UTC
-- (2024-11-01T00:00:00.000Z to 2025-03-01T00:00:00.000Z).
-- IDs of layout sonyflake (time:39,sequence:8,machine:16).
-- Each bound is the first ID whose time is at or after the start of its period.
-- _log must be partitioned by its ID, as in
--   CREATE TABLE _log (id bigint NOT NULL, ...) PARTITION BY RANGE (id);
-- An ID outside the periods has no partition and is refused; to keep such rows, add
--   CREATE TABLE _log_default PARTITION OF _log DEFAULT;
-- Partitions that exist are kept: run again with a later --to to add periods.

CREATE TABLE IF NOT EXISTS _log_p202411 PARTITION OF _log
  FOR VALUES FROM (255990788259840000) TO (260339442647040000);  -- 2024-11-01 (2024-11-01T00:00:00.000Z)
CREATE TABLE IF NOT EXISTS _log_p202412 PARTITION OF _log
  FOR VALUES FROM (260339442647040000) TO (264833052180480000);  -- 2024-12-01 (2024-12-01T00:00:00.000Z)
CREATE TABLE IF NOT EXISTS _log_p202501 PARTITION OF _log
  FOR VALUES FROM (264833052180480000) TO (269326661713920000);  -- 2025-01-01 (2025-01-01T00:00:00.000Z)
CREATE TABLE IF NOT EXISTS _log_p202502 PARTITION OF _log
  FOR VALUES FROM (269326661713920000) TO (273385405808640000);  -- 2025-02-01 (2025-02-01T00:00:00.000Z)
