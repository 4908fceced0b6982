#!/bin/bash
# Produces Kafka/Kafka_raw.log: a real Apache Kafka 3.9 broker's server log (KRaft, broker and
# controller in one process, log4j at INFO with the pattern of Kafka's own
# config/log4j.properties) while topics are created, grown, expired and deleted (KafkaAdmin.java),
# kcat produces (also to auto-created topics) and consumer groups join, rebalance, leave and
# die, and the broker is stopped cleanly once and killed once (log recovery on the next start).
# Usage: kafka.sh OUTDIR   (the jars of scripts/kafka-fixture; listens on 127.0.0.1:59092)
set -eu
out=$1
here=$(cd "$(dirname "$0")" && pwd)
jars=${LOGFOLD_KAFKA_JARS:-$HOME/.cache/logfold/kafka-broker}
w=$(mktemp -d /tmp/unseen-kafka.XXXXXX)
b=127.0.0.1:59092
cat >"$w/server.properties" <<CONF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:59093
listeners=PLAINTEXT://$b,CONTROLLER://127.0.0.1:59093
advertised.listeners=PLAINTEXT://$b
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$w/data
num.partitions=2
offsets.topic.replication.factor=1
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=1000
auto.create.topics.enable=true
log.segment.bytes=65536
log.retention.check.interval.ms=3000
CONF
cat >"$w/log4j.properties" <<CONF
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=$w/server.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
CONF
jvm=(-Xms128m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1
  -Dlog4j.configuration="file:$w/log4j.properties" -cp "$jars/*")
java "${jvm[@]}" kafka.tools.StorageTool format --cluster-id=q1w2e3r4t5y6u7i8o9p0aQ -c "$w/server.properties" >/dev/null
start() {
  # exec: $! is the broker itself, so the stops below reach it
  (exec java "${jvm[@]}" kafka.Kafka "$w/server.properties" >/dev/null 2>&1) &
  pid=$!
  for _ in $(seq 1 120); do kcat -b $b -L -m 1 >/dev/null 2>&1 && return; sleep 0.5; done
}
admin() { java -cp "$jars/*" "$here/KafkaAdmin.java" $b "$@" 2>/dev/null || true; }
produce() { # topic count [key]
  seq 1 "$2" | sed "s/^/event-$1-/" | kcat -b $b -P -t "$1" -K: ${3:+-k "$3"} -X message.timeout.ms=5000 2>/dev/null || true; }
consume() { # group seconds topics...
  local g=$1 s=$2; shift 2
  timeout -s INT "$s" kcat -b $b -G "$g" -X session.timeout.ms=6000 -o beginning "$@" >/dev/null 2>&1 || true; }
start
admin create orders 3 create payments 2 create audit 1 create scratch 1
for r in $(seq 1 8); do
  produce orders 400
  produce payments 150
  produce "auto-$r" 20          # auto-created on first use
  consume billing 4 orders payments & c1=$!
  sleep 1
  consume billing 3 orders & c2=$!   # a second member: a rebalance, then it leaves
  consume audit-$r 2 audit & c3=$!
  wait $c1 $c2 $c3
  # a member that dies: the group waits out its session
  kcat -b $b -G reporting -X session.timeout.ms=6000 orders >/dev/null 2>&1 &
  k=$!; sleep 3; kill -9 $k; wait $k 2>/dev/null || true
  [ $r = 2 ] && admin partitions orders 5 retention scratch 1000
  [ $r = 3 ] && admin delete "auto-1" delete scratch create scratch 2
  [ $r = 4 ] && admin create orders 3 delete missing-topic
  [ $r = 6 ] && admin delete auto-4 delete auto-5 partitions payments 4
  true
done
sleep 8
# a clean stop and start
kill $pid 2>/dev/null || true; wait $pid || true
start
produce orders 300
consume billing 4 orders payments
admin delete auto-2 delete auto-3
# a crash: log recovery on the next start
kill -9 $pid; wait $pid 2>/dev/null || true
start
produce payments 100
consume billing 3 orders payments
kill $pid 2>/dev/null || true; wait $pid || true
mkdir -p "$out/Kafka"
cp "$w/server.log" "$out/Kafka/Kafka_raw.log"
rm -rf "$w"
