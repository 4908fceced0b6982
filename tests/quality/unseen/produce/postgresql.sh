#!/bin/bash
# Produces PostgreSQL/PostgreSQL_raw.log: a real PostgreSQL 15 server's own log (stderr,
# default prefix '%m [%p] ') while psql and pgbench drive it with good and failing work.
# Usage: postgresql.sh OUTDIR   (run as root; the server runs as user postgres on port 55432)
set -eu
out=$1
work=$(mktemp -d /tmp/unseen-pg.XXXXXX)
chown postgres "$work"
bin=/usr/lib/postgresql/15/bin
su postgres -c "$bin/initdb -D $work/data -A trust -U postgres" >/dev/null
cat >>"$work/data/postgresql.conf" <<CONF
port = 55432
listen_addresses = '127.0.0.1'
unix_socket_directories = '$work'
log_connections = on
log_disconnections = on
log_checkpoints = on
log_lock_waits = on
log_temp_files = 0
log_autovacuum_min_duration = 0
log_min_duration_statement = 50
log_statement = 'ddl'
autovacuum_naptime = 1
deadlock_timeout = 100ms
checkpoint_timeout = 30s
CONF
cat >"$work/data/pg_hba.conf" <<HBA
local all postgres trust
host all postgres 127.0.0.1/32 trust
host all all 127.0.0.1/32 scram-sha-256
HBA
su postgres -c "$bin/pg_ctl -D $work/data -l $work/server.log -w start" >/dev/null
psql() { command psql -h "$work" -p 55432 -U postgres -v ON_ERROR_STOP=0 -q "$@" ; }
psql -c "CREATE ROLE app LOGIN PASSWORD 'secret'" postgres
psql -c "CREATE DATABASE shop OWNER app" postgres
export PGPASSWORD=secret
for i in $(seq 1 12); do
  # good and bad logins over TCP
  command psql -h 127.0.0.1 -p 55432 -U app -d shop -c "select $i" >/dev/null 2>&1 || true
  PGPASSWORD=wrong$i command psql -h 127.0.0.1 -p 55432 -U app -d shop -c "select 1" >/dev/null 2>&1 || true
  command psql -h 127.0.0.1 -p 55432 -U ghost$i -d shop -c "select 1" >/dev/null 2>&1 || true
  command psql -h 127.0.0.1 -p 55432 -U app -d nodb$i -c "select 1" >/dev/null 2>&1 || true
done
command psql -h 127.0.0.1 -p 55432 -U app -d shop -q >/dev/null 2>&1 <<SQL || true
CREATE TABLE items (id int PRIMARY KEY, name text, price numeric);
CREATE TABLE orders (id serial PRIMARY KEY, item int REFERENCES items(id), qty int CHECK (qty > 0));
CREATE INDEX orders_item ON orders(item);
INSERT INTO items SELECT g, 'item' || g, g * 1.5 FROM generate_series(1, 20000) g;
SQL
for i in $(seq 1 25); do
  command psql -h 127.0.0.1 -p 55432 -U app -d shop -q >/dev/null 2>&1 <<SQL || true
INSERT INTO items VALUES ($i, 'dup', 1);
INSERT INTO orders (item, qty) VALUES ($((i * 7)), $i);
INSERT INTO orders (item, qty) VALUES ($((90000 + i)), 1);
INSERT INTO orders (item, qty) VALUES ($i, -$i);
SELECT * FROM missing_table_$((i % 4));
SELECT nosuchcol$((i % 3)) FROM items;
SELECT $i / 0;
SELEC $i;
SELECT pg_sleep(0.0$((i % 9 + 1)));
UPDATE items SET price = price + 1 WHERE id % $((i + 2)) = 0;
DELETE FROM orders WHERE id % 5 = $((i % 5));
SELECT count(*) FROM items a JOIN items b ON a.id = b.id WHERE a.price > $i;
CREATE TABLE t$i (a int);
DROP TABLE t$i;
DROP TABLE nothere$i;
ALTER TABLE items ADD COLUMN c$i int;
ALTER TABLE items DROP COLUMN c$i;
SELECT 'abc'::int + $i;
SET work_mem = '64kB';
SELECT * FROM items ORDER BY name DESC LIMIT 1 OFFSET $((i * 100));
SQL
done
# lock waits and a deadlock
command psql -h 127.0.0.1 -p 55432 -U app -d shop -q -c "BEGIN; UPDATE items SET price=1 WHERE id=1; SELECT pg_sleep(0.3); UPDATE items SET price=1 WHERE id=2; COMMIT;" >/dev/null 2>&1 &
command psql -h 127.0.0.1 -p 55432 -U app -d shop -q -c "BEGIN; UPDATE items SET price=2 WHERE id=2; SELECT pg_sleep(0.3); UPDATE items SET price=2 WHERE id=1; COMMIT;" >/dev/null 2>&1 &
wait
su postgres -c "command psql -h $work -p 55432 -d shop -q -c 'CHECKPOINT'" >/dev/null
pgbench -h 127.0.0.1 -p 55432 -U app -i -s 1 shop >/dev/null 2>&1 || true
pgbench -h 127.0.0.1 -p 55432 -U app -c 4 -T 8 shop >/dev/null 2>&1 || true
sleep 3
psql -c "CHECKPOINT" postgres
su postgres -c "$bin/pg_ctl -D $work/data -m fast -w stop" >/dev/null
mkdir -p "$out/PostgreSQL"
cp "$work/server.log" "$out/PostgreSQL/PostgreSQL_raw.log"
rm -rf "$work"
