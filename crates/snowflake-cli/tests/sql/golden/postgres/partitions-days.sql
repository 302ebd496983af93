-- Partitions of posts by ID range, made by `snowflake sql --partitions`:
-- one a day, 4 in all, from midnight 2025-01-30 to midnight 2025-02-03 in UTC
-- (2025-01-30T00:00:00.000Z to 2025-02-03T00:00:00.000Z).
-- IDs of layout twitter (time:41,datacenter:5,machine:5,sequence:12).
-- Each bound is the first ID whose time is at or after the start of its period.
-- posts must be partitioned by its ID, as in
--   CREATE TABLE posts (id bigint NOT NULL, ...) PARTITION BY RANGE (id);
-- An ID outside the periods has no partition and is refused; to keep such rows, add
--   CREATE TABLE posts_default PARTITION OF posts DEFAULT;
-- Partitions that exist are kept: run again with a later --to to add periods.

CREATE TABLE IF NOT EXISTS posts_p20250130 PARTITION OF posts
  FOR VALUES FROM (1884753390597046272) TO (1885115778462646272);  -- 2025-01-30 (2025-01-30T00:00:00.000Z)
CREATE TABLE IF NOT EXISTS posts_p20250131 PARTITION OF posts
  FOR VALUES FROM (1885115778462646272) TO (1885478166328246272);  -- 2025-01-31 (2025-01-31T00:00:00.000Z)
CREATE TABLE IF NOT EXISTS posts_p20250201 PARTITION OF posts
  FOR VALUES FROM (1885478166328246272) TO (1885840554193846272);  -- 2025-02-01 (2025-02-01T00:00:00.000Z)
CREATE TABLE IF NOT EXISTS posts_p20250202 PARTITION OF posts
  FOR VALUES FROM (1885840554193846272) TO (1886202942059446272);  -- 2025-02-02 (2025-02-02T00:00:00.000Z)
