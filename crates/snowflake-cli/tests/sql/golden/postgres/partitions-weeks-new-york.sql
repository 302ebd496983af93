-- Partitions of app.events by ID range, made by `snowflake sql --partitions`:
-- one a week, Monday to Sunday, 4 in all, from midnight 2025-02-24 to midnight 2025-03-24 in America/New_York
-- (2025-02-24T05:00:00.000Z to 2025-03-24T04:00:00.000Z).
-- IDs of layout twitter (time:41,datacenter:5,machine:5,sequence:12).
-- Each bound is the first ID whose time is at or after the start of its period.
-- app.events must be partitioned by its ID, as in
--   CREATE TABLE app.events (id bigint NOT NULL, ...) PARTITION BY RANGE (id);
-- An ID outside the periods has no partition and is refused; to keep such rows, add
--   CREATE TABLE app.events_default PARTITION OF app.events DEFAULT;
-- Partitions that exist are kept: run again with a later --to to add periods.

CREATE TABLE IF NOT EXISTS app.events_p20250224 PARTITION OF app.events
  FOR VALUES FROM (1893888584709046272) TO (1896425299768246272);  -- 2025-02-24 (2025-02-24T05:00:00.000Z)
CREATE TABLE IF NOT EXISTS app.events_p20250303 PARTITION OF app.events
  FOR VALUES FROM (1896425299768246272) TO (1898946915333046272);  -- 2025-03-03 (2025-03-03T05:00:00.000Z)
CREATE TABLE IF NOT EXISTS app.events_p20250310 PARTITION OF app.events
  FOR VALUES FROM (1898946915333046272) TO (1901483630392246272);  -- 2025-03-10 (2025-03-10T04:00:00.000Z)
CREATE TABLE IF NOT EXISTS app.events_p20250317 PARTITION OF app.events
  FOR VALUES FROM (1901483630392246272) TO (1904020345451446272);  -- 2025-03-17 (2025-03-17T04:00:00.000Z)
