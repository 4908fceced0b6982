-- ClickHouse table for logfold's output events (config/README.md, "Output events"), as written by
-- an `http` output with `"format": "clickhouse"`. Written for ClickHouse 18.16 (Debian 12).
--
-- Apply with:  clickhouse-client --multiquery < config/clickhouse.sql
-- and point the output at it with "table": "logfold.events".
--
-- One row per event. The output inserts logfold's NDJSON unchanged (JSONEachRow with
-- input_format_skip_unknown_fields=1 and date_time_input_format=best_effort), so:
--   * a field an event does not carry gets its column type's default (0, '', empty array,
--     NULL for Nullable) -- never the column's DEFAULT expression, which 18.16 ignores for
--     JSONEachRow; that is why `lines` and `event_time` are MATERIALIZED (computed from the
--     stored columns on insert) rather than DEFAULT;
--   * the nested `samples` and JSON-input `fields` objects and annotate's `cluster_id` are
--     skipped (the summary's `template`, `host` and `app` describe the group);
--   * times lose their microseconds (DateTime has whole seconds), and a time outside
--     1970..2105 -- a sender's clock far off -- is stored as a wrong date, not refused.
--
-- A table made before message_base64 existed takes it with
--   ALTER TABLE logfold.events ADD COLUMN message_base64 String AFTER message
-- and, before event_id existed, with
--   ALTER TABLE logfold.events ADD COLUMN event_id String AFTER kind
-- and, before tag existed, with
--   ALTER TABLE logfold.events ADD COLUMN tag String AFTER app
--
-- Retention: 18.16 has no TTL. Partitions are days, so old data is dropped a day at a time,
-- e.g. from cron:  ALTER TABLE logfold.events DROP PARTITION 20261101

CREATE DATABASE IF NOT EXISTS logfold;

CREATE TABLE IF NOT EXISTS logfold.events
(
    -- every event
    kind            String,            -- 'first', 'summary', 'new_value' (or 'annotate' in annotate mode)
    event_id        String,            -- events from a kafka input: the same after a replay ('' otherwise)
    group_id        String,            -- 16 hex digits; unique per daemon run, reused after a restart
    fingerprint     String,            -- the group's 64-bit SimHash, 16 hex digits
    host            String,            -- '' when the line had none
    app             String,            -- the program name: an RFC 3164 tag up to '[' or '/'
    tag             String,            -- the whole tag when it is more than app
                                       -- ('postfix/smtpd' for app 'postfix'); '' otherwise
    -- first (and annotate): the line itself
    time            DateTime('UTC'),   -- syslog timestamp, else when logfold received it
    received        DateTime('UTC'),
    procid          String,
    msgid           String,
    facility        Nullable(UInt8),   -- NULL when the line had no PRI
    severity        Nullable(UInt8),   -- 0 emerg .. 7 debug; NULL when the line had no PRI
    structured_data String,
    format          String,            -- rfc5424, rfc3164, json, raw
    parse_error     String,            -- '' when the header parsed
    message         String,            -- JSON carries Unicode only: an invalid UTF-8 byte shows as U+FFFD
    message_base64  String,            -- such a message's exact bytes, base64 (RFC 4648); '' when
                                       -- the message is UTF-8
    -- summary: what the group absorbed since its previous event
    reason          String,            -- idle, max_hold, evicted, shutdown
    closed          UInt8,
    count           UInt64,            -- lines this summary stands for
    count_total     UInt64,            -- lines in the group so far, its first included
    first_seen      DateTime('UTC'),
    last_seen       DateTime('UTC'),
    max_distance    UInt8,
    template        String,            -- the message with every varying token replaced by <*>
    hosts           Array(String),     -- only when host is not in engine.scope
    hosts_truncated UInt8,

    -- Derived on insert. Lines this row stands for: sum(lines) over any set of rows is the
    -- number of syslog lines they account for (1 per first event, `count` per summary).
    -- (a new_value notice stands for none: its line is counted in the group's next summary).
    lines           UInt64 MATERIALIZED multiIf(kind = 'summary', count, kind = 'new_value', 0, 1),
    -- When the row's lines happened: the line's time, or the summary's last_seen.
    event_time      DateTime('UTC') MATERIALIZED if(kind = 'summary', last_seen, time)
)
ENGINE = MergeTree
PARTITION BY toYYYYMMDD(event_time)
-- Hour first, so that time-range queries read few granules; then host and app, so that
-- one host's rows within an hour are stored (and compressed) together.
ORDER BY (toStartOfHour(event_time), host, app, event_time);
