#!/bin/bash
# Produces Redis/Redis_raw.log: a real redis-server's own log (loglevel verbose) while
# redis-cli connects, saves, rewrites the AOF, fails to replicate and is shut down.
# Usage: redis.sh OUTDIR   (listens on 127.0.0.1:56379)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-redis.XXXXXX)
start() {
  redis-server --port 56379 --bind 127.0.0.1 --dir "$w" --logfile "$w/redis.log" \
    --loglevel verbose --daemonize yes --pidfile "$w/redis.pid" --save "5 10" \
    --appendonly yes --maxclients 40 --maxmemory 20mb --maxmemory-policy noeviction
  for _ in $(seq 1 50); do redis-cli -p 56379 ping >/dev/null 2>&1 && return; sleep 0.1; done
}
r() { redis-cli -p 56379 "$@" >/dev/null 2>&1 || true; }
start
for i in $(seq 1 60); do
  r set key$i value$i
  r incr counter
  r lpush list "$i"
  r -n $((i % 4)) set db$i $i
  [ $((i % 10)) = 0 ] && r bgsave
  [ $((i % 15)) = 0 ] && r bgrewriteaof
  [ $((i % 20)) = 0 ] && r config set maxmemory-policy allkeys-lru && r config set maxmemory-policy noeviction
  [ $((i % 12)) = 0 ] && r client kill 127.0.0.1:1
  sleep 0.05
done
# too many clients
pids=()
for i in $(seq 1 45); do (sleep 2 | redis-cli -p 56379 >/dev/null 2>&1) & pids+=($!); done
wait "${pids[@]}" || true
# a replica of a master that is not there
r replicaof 127.0.0.1 56399
sleep 6
r replicaof no one
# out of memory
for i in $(seq 1 30); do r set big$i "$(head -c 1000000 /dev/zero | tr '\0' x)"; done
r flushall
r save
sleep 6
r shutdown
sleep 1
start
for i in $(seq 1 20); do r get key$i; sleep 0.05; done
r debug sleep 0
r shutdown nosave
sleep 1
mkdir -p "$out/Redis"
cp "$w/redis.log" "$out/Redis/Redis_raw.log"
rm -rf "$w"
