#!/bin/bash
# Produces MariaDBError/MariaDBError_raw.log and MariaDBGeneral/MariaDBGeneral_raw.log: a real
# mariadbd's error log (log_warnings=4: aborted connections and access denials too) and general
# query log while the mariadb client logs in well and badly, runs DDL, DML and failing queries,
# kills a query and the server is restarted (once gracefully, once by SIGKILL: crash recovery).
# Usage: mariadb.sh OUTDIR   (run as root; listens on 127.0.0.1:53306)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-mariadb.XXXXXX)
chown mysql "$w" 2>/dev/null || true
mariadb-install-db --user=mysql --datadir="$w/data" --auth-root-authentication-method=normal \
  >/dev/null 2>&1
start() {
  mariadbd --no-defaults --user=mysql --datadir="$w/data" --port=53306 --bind-address=127.0.0.1 \
    --socket="$w/sock" --pid-file="$w/pid" --log-error="$w/error.log" --log-warnings=4 \
    --general-log=1 --general-log-file="$w/general.log" --max-connections=20 --skip-name-resolve \
    --innodb-buffer-pool-size=32M --innodb-lock-wait-timeout=2 --max-allowed-packet=64K &
  for _ in $(seq 1 100); do mariadb -S "$w/sock" -uroot -e 'select 1' >/dev/null 2>&1 && return; sleep 0.2; done
}
stop() { mariadb-admin -S "$w/sock" -uroot shutdown >/dev/null 2>&1 || true; wait || true; }
q() { mariadb -S "$w/sock" -uroot "$@" >/dev/null 2>&1 || true; }
tq() { mariadb -h 127.0.0.1 -P 53306 "$@" >/dev/null 2>&1 || true; }
start
q -e "DELETE FROM mysql.global_priv WHERE User=''; FLUSH PRIVILEGES;"
q -e "CREATE DATABASE shop; CREATE USER 'app'@'%' IDENTIFIED BY 'secret';
      GRANT ALL ON shop.* TO 'app'@'%'; CREATE USER 'ro'@'%' IDENTIFIED BY 'ro';
      GRANT SELECT ON shop.* TO 'ro'@'%';"
q shop -e "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, qty INT CHECK (qty >= 0));
           CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, item INT, FOREIGN KEY (item) REFERENCES items(id)) ENGINE=InnoDB;"
for i in $(seq 1 40); do
  tq -uapp -psecret shop -e "INSERT INTO items VALUES ($i, 'item$i', $((i % 7)))"
  tq -uapp -pwrong$i shop -e "select 1"
  tq -unobody$((i % 5)) -px shop -e "select 1"
  tq -uro -pro shop -e "SELECT name FROM items WHERE id = $i"
  tq -uro -pro shop -e "DELETE FROM items WHERE id = $i"
  tq -uapp -psecret nodb$((i % 3)) -e "select 1"
  case $((i % 10)) in
    0) tq -uapp -psecret shop -e "INSERT INTO items VALUES ($i, 'dup', 1)" ;;
    1) tq -uapp -psecret shop -e "SELECT * FROM missing_$i" ;;
    2) tq -uapp -psecret shop -e "SELEC name FROM items" ;;
    3) tq -uapp -psecret shop -e "INSERT INTO orders (item) VALUES (999$i)" ;;
    4) tq -uapp -psecret shop -e "UPDATE items SET qty = -1 WHERE id = $i" ;;
    5) tq -uapp -psecret shop -e "CREATE TABLE t$i (a INT); DROP TABLE t$i" ;;
    6) tq -uapp -psecret shop -e "ALTER TABLE items ADD COLUMN c$i INT; ALTER TABLE items DROP COLUMN c$i" ;;
    7) tq -uapp -psecret shop -e "SELECT SLEEP(0.1), COUNT(*) FROM items" ;;
    8) tq -uapp -psecret shop -e "SELECT REPEAT('x', 100000)" ;;
    9) tq -uapp -psecret shop -e "INSERT INTO orders (item) VALUES ($i); SELECT LAST_INSERT_ID()" ;;
  esac
  # a connection that goes away without quitting (aborted connection)
  [ $((i % 8)) = 0 ] && (timeout -s KILL 0.5 mariadb -h 127.0.0.1 -P 53306 -uapp -psecret shop -e "SELECT SLEEP(5)" >/dev/null 2>&1 || true)
done
# lock wait timeout and a deadlock
( mariadb -S "$w/sock" -uroot shop -e "BEGIN; UPDATE items SET qty=1 WHERE id=1; SELECT SLEEP(4); COMMIT" >/dev/null 2>&1 & )
sleep 0.5
tq -uapp -psecret shop -e "UPDATE items SET qty=2 WHERE id=1"
sleep 4
q -e "SET GLOBAL innodb_print_all_deadlocks=ON"
( mariadb -S "$w/sock" -uroot shop -e "BEGIN; UPDATE items SET qty=3 WHERE id=2; SELECT SLEEP(1); UPDATE items SET qty=3 WHERE id=3; COMMIT" >/dev/null 2>&1 & )
tq -uapp -psecret shop -e "BEGIN; UPDATE items SET qty=4 WHERE id=3; SELECT SLEEP(1); UPDATE items SET qty=4 WHERE id=2; COMMIT"
sleep 2
# too many connections
pids=()
for i in $(seq 1 24); do (mariadb -h 127.0.0.1 -P 53306 -uapp -psecret -e "SELECT SLEEP(2)" >/dev/null 2>&1 || true) & pids+=($!); done
wait "${pids[@]}" || true
# a killed query
( mariadb -S "$w/sock" -uroot -e "SELECT SLEEP(10)" >/dev/null 2>&1 & )
sleep 0.5
id=$(mariadb -S "$w/sock" -uroot -N -e "SELECT id FROM information_schema.processlist WHERE info LIKE 'SELECT SLEEP(10)%' LIMIT 1" 2>/dev/null || true)
[ -n "$id" ] && q -e "KILL $id"
q -e "FLUSH LOGS; FLUSH TABLES; SET GLOBAL max_connections=30"
stop
start
for i in $(seq 1 15); do tq -uapp -psecret shop -e "SELECT * FROM items WHERE id = $i"; tq -uapp -pbad shop -e "select 1"; done
q shop -e "DROP TABLE orders; CREATE TABLE orders (id INT PRIMARY KEY) ENGINE=MyISAM; OPTIMIZE TABLE items; ANALYZE TABLE items; CHECK TABLE orders"
# a crash: SIGKILL, then crash recovery on start
kill -9 "$(cat "$w/pid")"; wait || true
start
for i in $(seq 1 10); do tq -uapp -psecret shop -e "SELECT COUNT(*) FROM items"; tq -unobody -pnone shop -e "select 1"; done
stop
mkdir -p "$out/MariaDBError" "$out/MariaDBGeneral"
cp "$w/error.log" "$out/MariaDBError/MariaDBError_raw.log"
cp "$w/general.log" "$out/MariaDBGeneral/MariaDBGeneral_raw.log"
rm -rf "$w"
