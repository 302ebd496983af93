-- Partitions of msgs by ID range, made by `snowflake sql --partitions`:
-- one a day, 5 in all, from midnight 2084-09-01 to midnight 2084-09-06 in UTC
-- (2084-09-01T00:00:00.000Z to 2084-09-06T00:00:00.000Z).
-- IDs of layout discord (time:42,worker:5,process:5,increment:12).
-- Each bound is the first ID whose time is at or after the start of its period.
-- msgs must be partitioned by its ID, as in
--   CREATE TABLE msgs (id bigint NOT NULL, ...) PARTITION BY RANGE (id);
-- An ID outside the periods has no partition and is refused; to keep such rows, add
--   CREATE TABLE msgs_default PARTITION OF msgs DEFAULT;
-- Partitions that exist are kept: run again with a later --to to add periods.

CREATE TABLE IF NOT EXISTS msgs_p20840901 PARTITION OF msgs
  FOR VALUES FROM (9221321628057600000) TO (9221684015923200000);  -- 2084-09-01 (2084-09-01T00:00:00.000Z)
CREATE TABLE IF NOT EXISTS msgs_p20840902 PARTITION OF msgs
  FOR VALUES FROM (9221684015923200000) TO (9222046403788800000);  -- 2084-09-02 (2084-09-02T00:00:00.000Z)
CREATE TABLE IF NOT EXISTS msgs_p20840903 PARTITION OF msgs
  FOR VALUES FROM (9222046403788800000) TO (9222408791654400000);  -- 2084-09-03 (2084-09-03T00:00:00.000Z)
CREATE TABLE IF NOT EXISTS msgs_p20840904 PARTITION OF msgs
  FOR VALUES FROM (9222408791654400000) TO (9222771179520000000);  -- 2084-09-04 (2084-09-04T00:00:00.000Z)
CREATE TABLE IF NOT EXISTS msgs_p20840905 PARTITION OF msgs
  FOR VALUES FROM (9222771179520000000) TO (9223133567385600000);  -- 2084-09-05 (2084-09-05T00:00:00.000Z)
