#!/bin/bash
# Produces ClickHouse/ClickHouse_raw.log: a real clickhouse-server's own log (level debug) while
# clickhouse-client creates tables, inserts (merges follow), runs good and failing queries, logs
# in with a wrong password, kills a query and the server is restarted.
# Usage: clickhouse.sh OUTDIR   (run as root; the server runs as clickhouse on 127.0.0.1:59000)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-ch.XXXXXX)
chown clickhouse "$w"
start() {
  su -s /bin/bash clickhouse -c "clickhouse-server --config-file=/etc/clickhouse-server/config.xml \
    -- --path=$w/data/ --tmp_path=$w/tmp/ --user_files_path=$w/files/ \
    --format_schema_path=$w/schemas/ --logger.log=$w/server.log --logger.errorlog=$w/err.log \
    --logger.level=debug --logger.console=0 --tcp_port=59000 --http_port=58123 \
    --listen_host=127.0.0.1 --mysql_port= --postgresql_port= --interserver_http_port=59009" \
    >/dev/null 2>&1 &
  for _ in $(seq 1 150); do c -q 'SELECT 1' >/dev/null 2>&1 && return; sleep 0.2; done
}
stop() {
  local pid
  pid=$(pgrep -u clickhouse -f -- "--path=$w/data/" | head -1)
  kill "$pid"
  for _ in $(seq 1 150); do [ -e "/proc/$pid" ] || break; sleep 0.2; done
}
c() { clickhouse-client --port 59000 "$@"; }
q() { c "$@" >/dev/null 2>&1 || true; }
start
q -q "CREATE DATABASE shop"
q -q "CREATE TABLE shop.events (t DateTime, user UInt32, kind String, v Float64) ENGINE = MergeTree ORDER BY (kind, t)"
q -q "CREATE TABLE shop.totals (kind String, n UInt64) ENGINE = SummingMergeTree ORDER BY kind"
q -q "CREATE USER app IDENTIFIED BY 'secret'"
q -q "GRANT SELECT ON shop.* TO app"
kinds=(click view buy refund)
for i in $(seq 1 24); do
  q -q "INSERT INTO shop.events SELECT now() - number, number % 100, ['click','view','buy','refund'][number % 4 + 1], rand() / 1e6 FROM numbers($((i * 500)))"
  q -q "INSERT INTO shop.totals VALUES ('${kinds[$((i % 4))]}', $i)"
  q -q "SELECT kind, count(), avg(v) FROM shop.events GROUP BY kind"
  q --user app --password secret -q "SELECT count() FROM shop.events WHERE user = $i"
  q --user app --password wrong$i -q "SELECT 1"
  q --user ghost$((i % 3)) --password x -q "SELECT 1"
  q --user app --password secret -q "INSERT INTO shop.totals VALUES ('x', 1)"
  case $((i % 8)) in
    0) q -q "SELECT * FROM shop.missing_$i" ;;
    1) q -q "SELEC 1" ;;
    2) q -q "SELECT throwIf(number = 3, 'boom $i') FROM numbers(10)" ;;
    3) q -q "SELECT toDate('not a date $i')" ;;
    4) q -q "INSERT INTO shop.events VALUES ('bad', 1, 'x', 1)" ;;
    5) q -q "SELECT sum(number) FROM numbers(100000000) SETTINGS max_execution_time = 0.2" ;;
    6) q -q "SELECT count() FROM system.parts WHERE database = 'shop'" ;;
    7) q -q "OPTIMIZE TABLE shop.events FINAL" ;;
  esac
  [ $((i % 10)) = 0 ] && q -q "ALTER TABLE shop.events DELETE WHERE user = $i"
  [ $((i % 13)) = 0 ] && q -q "CREATE TABLE shop.tmp$i (a UInt8) ENGINE = Memory" && q -q "DROP TABLE shop.tmp$i"
  curl -s "http://127.0.0.1:58123/?query=SELECT%20$i" >/dev/null || true
  [ $((i % 5)) = 0 ] && { curl -s "http://127.0.0.1:58123/?query=SELECT%20nosuch$i" >/dev/null || true; }
  [ $((i % 7)) = 0 ] && { curl -s "http://127.0.0.1:58123/nothing/here" >/dev/null || true; }
done
# a long query killed from another session
( c -q "SELECT sleepEachRow(1) FROM numbers(10) SETTINGS max_block_size = 1" >/dev/null 2>&1 || true ) &
k=$!
sleep 1.5
q -q "KILL QUERY WHERE query LIKE 'SELECT sleepEachRow%' SYNC"
wait $k
q -q "SYSTEM FLUSH LOGS"
q -q "SYSTEM DROP MARK CACHE"
stop
start
for i in $(seq 1 15); do
  q -q "SELECT kind, sum(n) FROM shop.totals GROUP BY kind"
  q -q "INSERT INTO shop.events VALUES (now(), $i, 'view', $i)"
done
q -q "DROP TABLE shop.totals"
q -q "DROP DATABASE shop"
stop
mkdir -p "$out/ClickHouse"
cp "$w/server.log" "$out/ClickHouse/ClickHouse_raw.log"
rm -rf "$w"
