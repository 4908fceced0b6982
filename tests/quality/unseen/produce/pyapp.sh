#!/bin/bash
# Produces PyApp/PyApp_raw.log: produce/pyapp_server.py (a threaded key-value HTTP service
# logging through Python's `logging`, asctime,ms + level + [thread name] + logger) under curl
# load: good and failing PUT/GET/DELETE, bad tokens, malformed and oversized bodies, queued
# jobs (one failing with a traceback), crashes, two restarts.
# Usage: pyapp.sh OUTDIR   (listens on 127.0.0.1:58080)
set -eu
out=$1
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/PyApp"
logf="$out/PyApp/PyApp_raw.log"
: >"$logf"
u=http://127.0.0.1:58080
start() {
  python3 "$here/pyapp_server.py" 58080 "$logf" & pid=$!
  for _ in $(seq 1 50); do curl -fs $u/health >/dev/null 2>&1 && return; sleep 0.1; done
}
stop() { kill -TERM $pid; wait $pid || true; }
c() { curl -s -m 3 -o /dev/null "$@" || true; }
users=(alice bob)
for round in 1 2 3; do
  start
  for i in $(seq 1 70); do
    who=${users[$((i % 2))]}
    tok=$who:$([ $who = alice ] && echo s3cret || echo hunter2)
    c -X PUT -H "Authorization: Bearer $tok" -d "{\"v\": $i}" $u/kv/k$((i % 23))
    c $u/kv/k$((i % 31))
    [ $((i % 3)) = 0 ] && c -X DELETE -H "Authorization: Bearer $tok" $u/kv/k$((i % 29))
    [ $((i % 7)) = 0 ] && c -X PUT -d '{"v": 1}' $u/kv/nokey$i
    [ $((i % 9)) = 0 ] && c -X PUT -H "Authorization: Bearer mallory:guess$i" -d '1' $u/kv/k1
    [ $((i % 11)) = 0 ] && c -X PUT -H "Authorization: Bearer $tok" -d '{bad json' $u/kv/k2
    [ $((i % 13)) = 0 ] && c -X PUT -H "Authorization: Bearer $tok" --data-binary @<(head -c 5000 /dev/zero | tr '\0' a) $u/kv/big
    [ $((i % 5)) = 0 ] && c -X POST -d "{\"id\": \"j$round-$i\", \"kind\": \"$(echo compact export sleep fail reindex | cut -d' ' -f$((i / 5 % 5 + 1)))\"}" $u/jobs
    [ $((i % 4)) = 0 ] && c -X POST -d "{\"id\": \"s$round-$i\", \"kind\": \"sleep\", \"seconds\": 0.0$((i % 9))}" $u/jobs
    [ $((i % 17)) = 0 ] && c $u/crash
    [ $((i % 19)) = 0 ] && c $u/admin/stats$i
    [ $((i % 21)) = 0 ] && c -X POST $u/upload
    [ $((i % 10)) = 0 ] && c -X PATCH $u/kv/k1
    [ $((i % 16)) = 0 ] && c $u/health
    [ $((i % 25)) = 0 ] && printf 'BROKEN\r\n\r\n' | nc -q1 127.0.0.1 58080 >/dev/null 2>&1 || true
  done
  sleep 0.5
  stop
done
