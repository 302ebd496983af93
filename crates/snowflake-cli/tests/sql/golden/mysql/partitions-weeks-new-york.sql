-- Partitions of app.events by ID range, made by `snowflake sql --partitions`:
-- one a week, Monday to Sunday, 4 in all, from midnight 2025-02-24 to midnight 2025-03-24 in America/New_York
-- (2025-02-24T05:00:00.000Z to 2025-03-24T04:00:00.000Z).
-- IDs of layout twitter (time:41,datacenter:5,machine:5,sequence:12).
-- Each bound is the first ID whose time is at or after the start of its period.
-- MySQL and MariaDB partition a table in one statement, which copies its rows. A
-- range partition has no lower bound, so p_before holds the IDs before the
-- first period; an ID after the last has no partition and is refused. To add
-- periods later: ALTER TABLE app.events ADD PARTITION (PARTITION ... VALUES LESS THAN (...)).
-- Every unique key of app.events must include id.

ALTER TABLE app.events PARTITION BY RANGE (id) (
  PARTITION p_before VALUES LESS THAN (1893888584709046272),  -- before 2025-02-24 (2025-02-24T05:00:00.000Z)
  PARTITION p20250224 VALUES LESS THAN (1896425299768246272),  -- 2025-02-24 (2025-02-24T05:00:00.000Z)
  PARTITION p20250303 VALUES LESS THAN (1898946915333046272),  -- 2025-03-03 (2025-03-03T05:00:00.000Z)
  PARTITION p20250310 VALUES LESS THAN (1901483630392246272),  -- 2025-03-10 (2025-03-10T04:00:00.000Z)
  PARTITION p20250317 VALUES LESS THAN (1904020345451446272)  -- 2025-03-17 (2025-03-17T04:00:00.000Z)
);
