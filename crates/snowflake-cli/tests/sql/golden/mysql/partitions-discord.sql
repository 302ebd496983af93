-- Partitions of msgs by ID range, made by `snowflake sql --partitions`:
-- one a day, 5 in all, from midnight 2084-09-01 to midnight 2084-09-06 in UTC
-- (2084-09-01T00:00:00.000Z to 2084-09-06T00:00:00.000Z).
-- IDs of layout discord (time:42,worker:5,process:5,increment:12).
-- Each bound is the first ID whose time is at or after the start of its period.
-- MySQL and MariaDB partition a table in one statement, which copies its rows. A
-- range partition has no lower bound, so p_before holds the IDs before the
-- first period; an ID after the last has no partition and is refused. To add
-- periods later: ALTER TABLE msgs ADD PARTITION (PARTITION ... VALUES LESS THAN (...)).
-- Every unique key of msgs must include id.

ALTER TABLE msgs PARTITION BY RANGE (id) (
  PARTITION p_before VALUES LESS THAN (9221321628057600000),  -- before 2084-09-01 (2084-09-01T00:00:00.000Z)
  PARTITION p20840901 VALUES LESS THAN (9221684015923200000),  -- 2084-09-01 (2084-09-01T00:00:00.000Z)
  PARTITION p20840902 VALUES LESS THAN (9222046403788800000),  -- 2084-09-02 (2084-09-02T00:00:00.000Z)
  PARTITION p20840903 VALUES LESS THAN (9222408791654400000),  -- 2084-09-03 (2084-09-03T00:00:00.000Z)
  PARTITION p20840904 VALUES LESS THAN (9222771179520000000),  -- 2084-09-04 (2084-09-04T00:00:00.000Z)
  PARTITION p20840905 VALUES LESS THAN (9223133567385600000)  -- 2084-09-05 (2084-09-05T00:00:00.000Z)
);
