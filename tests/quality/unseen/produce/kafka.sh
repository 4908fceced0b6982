#!/bin/bash
# Produces Kafka/Kafka_raw.log: a real Apache Kafka 3.9 broker's own log4j log (KRaft, broker and
# controller in one process, level INFO, Kafka's default "[%d] %p %m (%c)" layout) while kcat
# auto-creates topics, produces, runs consumer groups that join and leave, and the broker restarts.
# Usage: kafka.sh OUTDIR   (jars from scripts/kafka-fixture; listens on 127.0.0.1:59092/59093)
set -eu
out=$1
jars=${LOGFOLD_KAFKA_JARS:-$HOME/.cache/logfold/kafka-broker}
w=$(mktemp -d /tmp/unseen-kafka.XXXXXX)
mkdir -p "$out/Kafka"
cat >"$w/server.properties" <<CONF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:59093
listeners=PLAINTEXT://127.0.0.1:59092,CONTROLLER://127.0.0.1:59093
advertised.listeners=PLAINTEXT://127.0.0.1:59092
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
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
log.retention.check.interval.ms=5000
log.retention.bytes=200000
CONF
cat >"$w/log4j.properties" <<CONF
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=$out/Kafka/Kafka_raw.log
log4j.appender.file.Append=true
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
CONF
: >"$out/Kafka/Kafka_raw.log"
java_() { java -Xms128m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
  -Dlog4j.configuration=file:$w/log4j.properties -cp "$jars/*" "$@"; }
java_ kafka.tools.StorageTool format --cluster-id=q1yqcJ0xRkqtbuh2fRHXbw -c "$w/server.properties" >/dev/null
start() {
  java_ kafka.Kafka "$w/server.properties" >/dev/null 2>&1 & pid=$!
  for _ in $(seq 1 120); do kcat -b 127.0.0.1:59092 -L -m 2 >/dev/null 2>&1 && return; sleep 0.5; done
}
k() { timeout 20 kcat -b 127.0.0.1:59092 "$@" >/dev/null 2>&1 || true; }
start
for round in 1 2; do
  for t in $(seq 1 6); do
    seq 1 300 | sed "s/^/r$round-msg-/" | k -P -t topic-$round-$t -p -1
    [ $((t % 2)) = 0 ] && head -c 120000 /dev/urandom | base64 -w 200 | k -P -t big-$round -z gzip
  done
  for g in 1 2 3; do
    k -G group-$g topic-$round-1 topic-$round-2 -o beginning -e -q -X session.timeout.ms=6000 &
  done
  sleep 4
  k -G group-1 topic-$round-3 -e -q -X session.timeout.ms=6000
  wait
  k -C -t topic-$round-1 -o beginning -e -q
  k -C -t missing-topic-x -o beginning -e -q -X allow.auto.create.topics=false
  k -P -t 'bad topic name!' <<<x
  sleep 6
  if [ $round = 1 ]; then
    kill $pid; wait $pid || true
    start
  fi
done
kill $pid; wait $pid || true
rm -rf "$w"
