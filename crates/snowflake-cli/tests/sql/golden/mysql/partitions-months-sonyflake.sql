-- Partitions of _log by ID range, made by `snowflake sql --partitions`:
-- one a calendar month, 4 in all, from midnight 2024-11-01 to midnight 2025-03-01 in UTC
-- (2024-11-01T00:00:00.000Z to 2025-03-01T00:00:00.000Z).
-- IDs of layout sonyflake (time:39,sequence:8,machine:16).
-- Each bound is the first ID whose time is at or after the start of its period.
-- MySQL and MariaDB partition a table in one statement, which copies its rows. A
-- range partition has no lower bound, so p_before holds the IDs before the
-- first period; an ID after the last has no partition and is refused. To add
-- periods later: ALTER TABLE _log ADD PARTITION (PARTITION ... VALUES LESS THAN (...)).
-- Every unique key of _log must include id.

ALTER TABLE _log PARTITION BY RANGE (id) (
  PARTITION p_before VALUES LESS THAN (255990788259840000),  -- before 2024-11-01 (2024-11-01T00:00:00.000Z)
  PARTITION p202411 VALUES LESS THAN (260339442647040000),  -- 2024-11-01 (2024-11-01T00:00:00.000Z)
  PARTITION p202412 VALUES LESS THAN (264833052180480000),  -- 2024-12-01 (2024-12-01T00:00:00.000Z)
  PARTITION p202501 VALUES LESS THAN (269326661713920000),  -- 2025-01-01 (2025-01-01T00:00:00.000Z)
  PARTITION p202502 VALUES LESS THAN (273385405808640000)  -- 2025-02-01 (2025-02-01T00:00:00.000Z)
);
