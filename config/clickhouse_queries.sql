-- Example queries over logfold.events (the table in config/clickhouse.sql). Each is run by
-- tests/integration/clickhouse_e2e_test.cc. Run one with e.g.
--   clickhouse-client --multiquery < config/clickhouse_queries.sql

-- Top repeating groups in the last hour: the groups whose summaries stand for the most lines,
-- with their latest template. group_id alone is unique only within one daemon run, so the
-- group is keyed by host and app too.
SELECT
    host,
    app,
    group_id,
    argMax(template, last_seen) AS latest_template,
    sum(count) AS repeated_lines,
    min(first_seen) AS since,
    max(last_seen) AS until
FROM logfold.events
WHERE kind = 'summary' AND event_time >= now() - INTERVAL 1 HOUR
GROUP BY host, app, group_id
ORDER BY repeated_lines DESC
LIMIT 10;

-- Lines per host in the last hour: every line logfold received, folded or not (sum of
-- `lines`), and how many of them started a new group.
SELECT
    host,
    sum(lines) AS lines_received,
    countIf(kind = 'first') AS new_groups
FROM logfold.events
WHERE event_time >= now() - INTERVAL 1 HOUR
GROUP BY host
ORDER BY lines_received DESC;

-- Error lines of kinds not seen before, newest first: first events at severity err (3) or
-- worse. Summaries carry no severity; their group's first event has it.
SELECT time, host, app, severity, message
FROM logfold.events
WHERE kind = 'first' AND severity <= 3 AND event_time >= now() - INTERVAL 1 HOUR
ORDER BY time DESC
LIMIT 50;
