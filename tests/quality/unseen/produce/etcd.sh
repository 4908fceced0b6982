#!/bin/bash
# Produces Etcd/Etcd_raw.log: the log of one member (m1) of a real three-member etcd 3.4 cluster
# (Debian 12 `etcd-server`, `--logger=zap`: JSON lines on stderr) while etcdctl writes, reads,
# deletes and watches keys, runs transactions, grants, renews, revokes and lets leases expire,
# compacts, defragments and snapshots; fills a small backend quota until the NOSPACE alarm and
# disarms it; enables authentication and logs in with good and wrong passwords and users
# without roles; adds a member that never starts and removes it; kills followers and the
# leader (elections), stops m1 cleanly and with SIGKILL and restarts it.
# Usage: etcd.sh OUTDIR   (client ports 52379/52479/52579, peers 52380/52480/52580)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-etcd.XXXXXX)
cluster="m1=http://127.0.0.1:52380,m2=http://127.0.0.1:52480,m3=http://127.0.0.1:52580"
declare -A pid
start() { # start NAME STATE
  local n=$1 p
  case $n in m1) p=523 ;; m2) p=524 ;; m3) p=525 ;; esac
  local debug=""
  [ "$n" = m1 ] && debug="--log-level debug"
  etcd $debug --name "$n" --data-dir "$w/$n" --logger zap --log-outputs stderr \
    --listen-client-urls "http://127.0.0.1:${p}79" --advertise-client-urls "http://127.0.0.1:${p}79" \
    --listen-peer-urls "http://127.0.0.1:${p}80" --initial-advertise-peer-urls "http://127.0.0.1:${p}80" \
    --initial-cluster "$cluster" --initial-cluster-state "$2" --initial-cluster-token unseen \
    --quota-backend-bytes 8388608 --auto-compaction-mode revision --auto-compaction-retention 500 \
    --snapshot-count 400 --heartbeat-interval 100 --election-timeout 1000 \
    2>>"$w/$n.log" &
  pid[$n]=$!
}
export ETCDCTL_API=3
E="etcdctl --endpoints=http://127.0.0.1:52379,http://127.0.0.1:52479,http://127.0.0.1:52579 --command-timeout=4s"
e() { timeout 10 $E "$@" >/dev/null 2>&1 || true; }
start m1 new; start m2 new; start m3 new
for _ in $(seq 1 60); do timeout 3 $E endpoint health >/dev/null 2>&1 && break; sleep 0.5; done
timeout 300 $E watch --prefix /config/ >/dev/null 2>&1 &
watcher=$!
for i in $(seq 1 150); do
  e put "/registry/pods/default/web-$((i % 12))" "{\"phase\":\"Running\",\"n\":$i}"
  e put "/config/app/setting$((i % 5))" "v$i"
  e get --prefix /registry/pods/ --keys-only
  [ $((i % 3)) = 0 ] && e del "/registry/pods/default/web-$(((i + 5) % 12))"
  [ $((i % 4)) = 0 ] && e txn <<T
value("/config/app/setting1") = "v$((i - 3))"

put /config/app/flag on

put /config/app/flag off

T
  [ $((i % 5)) = 0 ] && { lease=$(timeout 5 $E lease grant 3 2>/dev/null | awk '{print $2}'); \
    [ -n "$lease" ] && e put --lease="$lease" "/locks/job$i" held; }
  [ $((i % 7)) = 0 ] && { lease=$(timeout 5 $E lease grant 60 2>/dev/null | awk '{print $2}'); \
    [ -n "$lease" ] && e lease keep-alive --once "$lease" && e lease revoke "$lease"; }
  [ $((i % 11)) = 0 ] && e lease timetolive 1234abcd
  [ $((i % 20)) = 0 ] && { rev=$(timeout 5 $E get / -w json 2>/dev/null | sed -n 's/.*"revision":\([0-9]*\).*/\1/p'); \
    [ -n "$rev" ] && e compaction "$((rev - 10))"; e compaction 1; }
  [ $((i % 25)) = 0 ] && e defrag --endpoints=http://127.0.0.1:52379
  [ $((i % 30)) = 0 ] && e snapshot save "$w/snap$i.db" --endpoints=http://127.0.0.1:52379
  [ $((i % 16)) = 0 ] && e member list
  sleep 0.1
done
# a member added that never starts, then removed
e member add m4 --peer-urls=http://127.0.0.1:52680
sleep 6
id=$(timeout 5 $E member list 2>/dev/null | awk -F', ' '$3 == "m4" || $4 == "http://127.0.0.1:52680" {print $1}' | head -1)
[ -n "$id" ] && e member remove "$id"
e member add l5 --learner --peer-urls=http://127.0.0.1:52780
sleep 3
id=$(timeout 5 $E member list 2>/dev/null | awk -F', ' '$4 == "http://127.0.0.1:52780" {print $1}' | head -1)
[ -n "$id" ] && { e member promote "$id"; e member remove "$id"; }
# leadership moves to m1; a follower dies under it and comes back; leadership moves away;
# then the leader dies
mid() { timeout 5 $E member list 2>/dev/null | awk -F', ' -v n="$1" '$3 == n {print $1}' | head -1; }
e move-leader "$(mid m1)"
sleep 2
kill -9 "${pid[m3]}"; wait "${pid[m3]}" 2>/dev/null || true
for i in $(seq 1 15); do e put "/registry/nodes/node$i" ready; sleep 0.3; done
start m3 existing
sleep 4
for i in $(seq 1 10); do e put "/registry/nodes/node$i" ready2; sleep 0.1; done
e move-leader "$(mid m2)" --endpoints=http://127.0.0.1:52379
sleep 2
for n in m1 m2 m3; do
  case $n in m1) p=52379 ;; m2) p=52479 ;; m3) p=52579 ;; esac
  if timeout 5 $E endpoint status --endpoints=http://127.0.0.1:$p 2>/dev/null | grep -q ', true, '; then
    kill -9 "${pid[$n]}"; wait "${pid[$n]}" 2>/dev/null || true
    sleep 3
    for i in $(seq 1 10); do e put "/registry/events/e$i" x; sleep 0.2; done
    start $n existing
    break
  fi
done
sleep 4
# the backend quota fills: NOSPACE, then compaction, defragmentation and disarm
big=$(head -c 400000 /dev/urandom | base64 -w0)
for i in $(seq 1 40); do echo -n "$big" | timeout 10 $E put "/blobs/b$((i % 30))" >/dev/null 2>&1 || true; done
e alarm list
rev=$(timeout 5 $E get / -w json 2>/dev/null | sed -n 's/.*"revision":\([0-9]*\).*/\1/p')
e del --prefix /blobs/
[ -n "$rev" ] && e compaction "$rev"
e defrag
e alarm disarm
e put /registry/after-alarm ok
# authentication
e user add root:rootpw
e user add ops:opspw
e user add viewer:viewerpw
e role add reader
e role grant-permission reader read /registry/ --prefix=true
e user grant-role viewer reader
e user grant-role root root
e auth enable
A="--user root:rootpw"
for i in $(seq 1 20); do
  e put /registry/secure/k$i v $A
  e get /registry/secure/k$i --user viewer:viewerpw
  e put /registry/secure/k$i v --user viewer:viewerpw
  [ $((i % 3)) = 0 ] && e get /registry/x --user root:badpw
  [ $((i % 4)) = 0 ] && e get /registry/x --user ghost:pw
  [ $((i % 5)) = 0 ] && e get /registry/x --user ops:opspw
  [ $((i % 6)) = 0 ] && e get /registry/x
  sleep 0.1
done
e auth disable $A
e put /registry/open v
# m1 stops cleanly, then is killed
kill "${pid[m1]}"; wait "${pid[m1]}" 2>/dev/null || true
for i in $(seq 1 10); do e put "/registry/pods/default/web-$i" y; sleep 0.2; done
start m1 existing
sleep 4
for i in $(seq 1 20); do e put "/registry/pods/default/api-$i" y; e get /registry/ --prefix --limit 5; sleep 0.1; done
kill -9 "${pid[m1]}"; wait "${pid[m1]}" 2>/dev/null || true
sleep 2
start m1 existing
sleep 4
for i in $(seq 1 15); do e put "/config/app/setting$i" z; sleep 0.1; done
kill "${pid[m1]}" "${pid[m2]}" "${pid[m3]}" "$watcher" 2>/dev/null || true
wait || true
mkdir -p "$out/Etcd"
cp "$w/m1.log" "$out/Etcd/Etcd_raw.log"
rm -rf "$w"
