-- Partitions of posts by ID range, made by `snowflake sql --partitions`:
-- one a day, 4 in all, from midnight 2025-01-30 to midnight 2025-02-03 in UTC
-- (2025-01-30T00:00:00.000Z to 2025-02-03T00:00:00.000Z).
-- IDs of layout twitter (time:41,datacenter:5,machine:5,sequence:12).
-- Each bound is the first ID whose time is at or after the start of its period.
-- MySQL and MariaDB partition a table in one statement, which copies its rows. A
-- range partition has no lower bound, so p_before holds the IDs before the
-- first period; an ID after the last has no partition and is refused. To add
-- periods later: ALTER TABLE posts ADD PARTITION (PARTITION ... VALUES LESS THAN (...)).
-- Every unique key of posts must include id.

ALTER TABLE posts PARTITION BY RANGE (id) (
  PARTITION p_before VALUES LESS THAN (1884753390597046272),  -- before 2025-01-30 (2025-01-30T00:00:00.000Z)
  PARTITION p20250130 VALUES LESS THAN (1885115778462646272),  -- 2025-01-30 (2025-01-30T00:00:00.000Z)
  PARTITION p20250131 VALUES LESS THAN (1885478166328246272),  -- 2025-01-31 (2025-01-31T00:00:00.000Z)
  PARTITION p20250201 VALUES LESS THAN (1885840554193846272),  -- 2025-02-01 (2025-02-01T00:00:00.000Z)
  PARTITION p20250202 VALUES LESS THAN (1886202942059446272)  -- 2025-02-02 (2025-02-02T00:00:00.000Z)
);
