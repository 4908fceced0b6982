-- ClickHouse table for events from a kafka input in at-least-once mode: after a crash the
-- next owner of a partition reads again from its last commit, and the events it emits again
-- carry the same `event_id` (topic, partition and offset of the first line they cover), so a
-- ReplacingMergeTree keyed by it keeps one row per event. Apply after config/clickhouse.sql:
--   clickhouse-client --multiquery < config/clickhouse_kafka.sql
-- and point the output at it with "table": "logfold.kafka_events".
--
-- Rows of a replay are removed when ClickHouse merges parts (at some time of its choosing);
-- queries that must count exactly read the table with FINAL:
--   SELECT sum(lines) FROM logfold.kafka_events FINAL
-- A replayed event lands in the same partition as the first copy (its event_time is the same),
-- so the merge finds both. The bound on what FINAL cannot remove is in config/README.md
-- ("kafka only").

CREATE TABLE IF NOT EXISTS logfold.kafka_events AS logfold.events
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(event_time)
ORDER BY event_id;
