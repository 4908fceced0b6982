#!/bin/bash
# Produces ZooKeeper/ZooKeeper_raw.log: a Java coordination service's log, Apache ZooKeeper 3.8
# (Debian 12 `zookeeper`), server 3 of a three-server ensemble on loopback (the leader while it
# is up, having the highest id), through Debian's
# log4j layout (`%d{ISO8601} - %-5p [%t:%C{1}@%L] - %m%n`) at INFO, while Python clients
# (Debian's `python3-kazoo`) and zkCli.sh drive it: sessions opened, closed and
# expired; znodes created (persistent, ephemeral, sequential, under quotas), read, watched,
# changed with right and stale versions, deleted (with and without children, missing); digest
# ACLs with right, wrong and no credentials; four-letter words allowed and not; garbage and
# oversized packets on the client port; snapshots and log
# rolls; the leader killed (elections), a follower stopped and back, quorum lost and regained,
# server 3 restarted.
# Usage: zookeeper.sh OUTDIR   (clients 127.0.0.1:52181-52183, quorum 52881-52883 and
#                               53881-53883)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-zookeeper.XXXXXX)
cd "$w"
cp /etc/zookeeper/conf/log4j.properties "$w/log4j.properties"
sed -i 's/MaxFileSize=10MB/MaxFileSize=500MB/' "$w/log4j.properties"
for i in 1 2 3; do
  mkdir -p "$w/data$i" "$w/log$i"
  echo "$i" >"$w/data$i/myid"
  cat >"$w/zoo$i.cfg" <<C
tickTime=1000
initLimit=10
syncLimit=5
dataDir=$w/data$i
clientPort=5218$i
clientPortAddress=127.0.0.1
maxClientCnxns=12
minSessionTimeout=2000
maxSessionTimeout=20000
snapCount=60
autopurge.snapRetainCount=3
autopurge.purgeInterval=1
4lw.commands.whitelist=srvr,ruok,stat,mntr,conf
admin.enableServer=false
server.1=127.0.0.1:52881:53881
server.2=127.0.0.1:52882:53882
server.3=127.0.0.1:52883:53883
C
done
declare -A pid
fourlw() {  # a four-letter word to server $1; its answer on stdout
  /usr/bin/python3 -c 'import socket,sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2); s.sendall(sys.argv[2].encode())
    print(s.recv(4096).decode(errors="replace"))
except Exception: pass' "5218$1" "$2"
}
start() {
  java -Xmx256m -Dzookeeper.log.dir="$w/log$1" -Dzookeeper.root.logger=INFO,ROLLINGFILE \
    -Dlog4j.configuration="file:$w/log4j.properties" -Dzookeeper.jmx.log4j.disable=true \
    -cp /etc/zookeeper/conf:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar \
    org.apache.zookeeper.server.quorum.QuorumPeerMain "$w/zoo$1.cfg" >"$w/stdout$1" 2>&1 &
  pid[$1]=$!
}
stop() { kill "${pid[$1]}" 2>/dev/null || true; wait "${pid[$1]}" 2>/dev/null || true; }
kill9() { kill -9 "${pid[$1]}" 2>/dev/null || true; wait "${pid[$1]}" 2>/dev/null || true; }
up() {  # wait until a server answers ruok with imok and serves
  for _ in $(seq 60); do
    sleep 1
    [ "$(fourlw "$1" srvr | grep -c Mode)" = 1 ] && return 0
  done
  return 0
}
drive() {
/usr/bin/python3 - "$1" "$2" <<'P'
import logging, random, socket, struct, sys, time
from kazoo.client import KazooClient
from kazoo.security import make_digest_acl
logging.disable(logging.CRITICAL)
phase, hosts = int(sys.argv[1]), sys.argv[2]
rnd = random.Random(phase)
def tryit(f, *a, **k):
    try: return f(*a, **k)
    except Exception as e: return e
def client(**k):
    c = KazooClient(hosts=hosts, timeout=6, **k); c.start(timeout=15); return c
c = client()
c.ensure_path("/app/config"); c.ensure_path("/app/locks"); c.ensure_path("/app/workers")
tryit(c.create, "/secure", b"s", acl=[make_digest_acl("admin", "adminpw", all=True)])
for i in range(120 if phase == 1 else 70):
    k = rnd.randrange(16)
    if k < 3:
        tryit(c.create, "/app/config/key%d" % (i % 7), b"v%d" % i)
        tryit(c.set, "/app/config/key%d" % (i % 7), b"w%d" % i)
        tryit(c.get, "/app/config/key%d" % (i % 7), watch=lambda e: None)
    elif k == 3:
        tryit(c.set, "/app/config/key%d" % (i % 7), b"x", version=999)
    elif k == 4:
        tryit(c.create, "/app/config", b"dup")
    elif k == 5:
        tryit(c.delete, "/app/missing%d" % i)
        tryit(c.get, "/app/nothere/x%d" % i)
    elif k == 6:
        tryit(c.delete, "/app")
    elif k == 7:
        tryit(c.create, "/app/locks/lock-", b"", ephemeral=True, sequence=True)
        tryit(c.get_children, "/app/locks", watch=lambda e: None)
    elif k == 8:
        w = client()
        tryit(w.create, "/app/workers/w%d" % i, b"alive", ephemeral=True)
        tryit(w.stop); tryit(w.close)
    elif k == 9:
        a = client(auth_data=[("digest", "admin:adminpw")])
        tryit(a.set, "/secure", b"ok%d" % i); tryit(a.get, "/secure"); a.stop(); a.close()
        b = client(auth_data=[("digest", "admin:wrong")])
        tryit(b.get, "/secure"); tryit(b.stop); tryit(b.close)
        tryit(c.set, "/secure", b"nope")
    elif k == 10:
        cmd = rnd.choice([b"ruok", b"srvr", b"stat", b"mntr", b"conf", b"wchs", b"dump", b"envi", b"cons", b"kill"])
        s = socket.create_connection(("127.0.0.1", int(hosts.split(",")[0].split(":")[1])))
        s.sendall(cmd); time.sleep(0.2); tryit(s.recv, 4096); s.close()
    elif k == 11:
        s = socket.create_connection(("127.0.0.1", int(hosts.split(",")[0].split(":")[1])))
        s.sendall(rnd.choice([b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", struct.pack("!i", 0x7fffffff) + b"x" * 20,
                              struct.pack("!i", -5), b"\x00\x00\x00\x2c" + b"\x00" * 44]))
        time.sleep(0.3); tryit(s.recv, 100); s.close()
    elif k == 12:
        # a session that goes silent: connect by hand with a 2 s timeout, then say nothing
        s = socket.create_connection(("127.0.0.1", int(hosts.split(",")[0].split(":")[1])))
        req = struct.pack("!iqiiq", 0, 0, 2000, 0, 0) + struct.pack("!i", 16) + b"\x00" * 16
        s.sendall(struct.pack("!i", len(req)) + req); tryit(s.recv, 100)
        time.sleep(5); s.close()
    elif k == 13:
        for n in range(rnd.randrange(3, 12)):
            tryit(c.create, "/app/quota/item-", b"q", sequence=True, makepath=True)
    elif k == 14:
        tryit(c.delete, "/app/quota", recursive=True)
    else:
        tryit(c.set, "/app/config", b"big" * 400)
    time.sleep(0.05)
tryit(c.stop); tryit(c.close)
P
}
for i in 1 2 3; do start $i; done
up 1; up 2; up 3
H=127.0.0.1:52181,127.0.0.1:52182,127.0.0.1:52183
drive 1 127.0.0.1:52183 || true
# quotas through the shipped command-line client
zk() { timeout 60 /usr/share/zookeeper/bin/zkCli.sh -server 127.0.0.1:52183 "$@" >/dev/null 2>&1 || true; }
zk create /app/quota q
zk setquota -n 4 /app/quota
zk listquota /app/quota
drive 2 127.0.0.1:52183 || true
# the leader (3) dies: an election between 1 and 2; it comes back as a follower
kill9 3
sleep 6; up 2 || true
drive 3 $H || true
start 3
up 3
drive 4 127.0.0.1:52183 || true
# a follower stops and comes back
stop 1
sleep 3
drive 5 127.0.0.1:52183 || true
start 1
sleep 8
# quorum is lost (3 alone looks for peers), then regained
for i in 1 2; do stop $i; done
sleep 15
start 1; start 2
up 3
drive 6 127.0.0.1:52183 || true
# server 3 restarts
stop 3
sleep 3
start 3
up 3
drive 7 127.0.0.1:52183 || true
for i in 1 2 3; do stop $i; done
mkdir -p "$out/ZooKeeper"
cp "$w/log3/zookeeper.log" "$out/ZooKeeper/ZooKeeper_raw.log"
cd /
rm -rf "$w"
