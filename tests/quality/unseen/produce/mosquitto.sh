#!/bin/bash
# Produces Mosquitto/Mosquitto_raw.log: a real Mosquitto broker's own log file (`log_type all`,
# Debian's default epoch timestamps) while mosquitto_pub, mosquitto_sub and mosquitto_rr
# connect with good, wrong and unknown credentials over MQTT 3.1, 3.1.1 and 5, publish and
# subscribe at every QoS (retained, denied by the ACL, too large), take over each other's
# client ids, die with a will or silently past their keepalive, queue for persistent
# sessions until messages drop; a bridge to a second broker that is killed and restarted and
# one to a closed port; garbage on the socket; SIGHUP reloads, a clean stop and a restart.
# Usage: mosquitto.sh OUTDIR   (127.0.0.1:51883, the bridged broker on 51885)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-mosquitto.XXXXXX)
mkdir -p "$w/data" "$w/data2"
touch "$w/passwd"
chmod 0700 "$w/passwd"
mosquitto_passwd -b "$w/passwd" alice alicepw
mosquitto_passwd -b "$w/passwd" bob bobpw
mosquitto_passwd -b "$w/passwd" sensor sensorpw
mosquitto_passwd -b "$w/passwd" bridge bridgepw
cat >"$w/acl" <<A
user alice
topic readwrite #
user bob
topic read sensors/#
topic write cmd/bob/#
user sensor
topic write sensors/#
topic read cmd/sensor/#
user bridge
topic readwrite #
A
chmod 0700 "$w/acl"
chown -R mosquitto "$w" 2>/dev/null || true
cat >"$w/mosquitto.conf" <<C
listener 51883 127.0.0.1
allow_anonymous false
password_file $w/passwd
acl_file $w/acl
log_dest file $w/mosquitto.log
log_type all
connection_messages true
persistence true
persistence_location $w/data/
autosave_interval 10
max_queued_messages 20
message_size_limit 4096
max_keepalive 120
connection bridge-remote
address 127.0.0.1:51885
topic sensors/# out 1
topic cmd/# in 1
remote_username bridge
remote_password bridgepw
restart_timeout 2 4
connection bridge-dead
address 127.0.0.1:51886
topic audit/# both 0
restart_timeout 3
C
cat >"$w/remote.conf" <<C
listener 51885 127.0.0.1
allow_anonymous false
password_file $w/passwd
log_dest file $w/remote.log
persistence false
C
start() {
  mosquitto -c "$w/mosquitto.conf" &
  mq=$!
  sleep 1
}
start_remote() {
  mosquitto -c "$w/remote.conf" &
  remote=$!
  sleep 0.5
}
H="-h 127.0.0.1 -p 51883"
pub() { timeout 10 mosquitto_pub $H "$@" >/dev/null 2>&1 || true; }
start_remote
start
# subscribers that stay: a persistent session, a clean one, one on MQTT 5
timeout 400 mosquitto_sub $H -u alice -P alicepw -i watcher-1 -c -q 1 -t 'sensors/#' -t 'cmd/#' >/dev/null 2>&1 &
timeout 400 mosquitto_sub $H -u bob -P bobpw -i dash-bob -q 0 -t 'sensors/+/temp' -t 'cmd/bob/#' -k 30 >/dev/null 2>&1 &
timeout 400 mosquitto_sub $H -V mqttv5 -u alice -P alicepw -i v5-audit -q 2 -t 'audit/#' -t '$SYS/broker/uptime' >/dev/null 2>&1 &
sleep 1
for i in $(seq 1 40); do
  room=$(( i % 5 ))
  pub -u sensor -P sensorpw -i "sensor-$room" -q $((i % 3)) -t "sensors/room$room/temp" -m "$((18 + i % 7)).$i"
  pub -u sensor -P sensorpw -i "sensor-$room" -V mqttv311 -q 1 -r -t "sensors/room$room/status" -m online
  [ $((i % 3)) = 0 ] && pub -u alice -P alicepw -V mqttv5 -q 2 -t "audit/login/$i" -m "user$i"
  [ $((i % 4)) = 0 ] && pub -u bob -P bobpw -i "bob-cli-$i" -q 1 -t "sensors/room$room/temp" -m 99
  [ $((i % 4)) = 1 ] && pub -u bob -P bobpw -q 0 -t "cmd/bob/light$room" -m on
  [ $((i % 5)) = 0 ] && pub -u bob -P wrongpw -t "cmd/bob/x" -m x
  [ $((i % 6)) = 0 ] && pub -u mallory -P guess$i -V mqttv31 -t "sensors/x" -m x
  [ $((i % 7)) = 0 ] && pub -t "sensors/anon" -m x
  [ $((i % 8)) = 0 ] && pub -u alice -P alicepw -q 1 -t "big/blob" -m "$(head -c 6000 /dev/zero | tr '\0' b)"
  [ $((i % 9)) = 0 ] && pub -u sensor -P sensorpw -q 1 -t "sensors/room$room/temp" -n
  [ $((i % 10)) = 0 ] && (printf 'GET / HTTP/1.1\r\nHost: x\r\n\r\n' | timeout 2 nc -q 1 127.0.0.1 51883 >/dev/null 2>&1 || true)
  [ $((i % 11)) = 0 ] && (timeout 2 nc 127.0.0.1 51883 </dev/null >/dev/null 2>&1 || true)
  [ $((i % 12)) = 0 ] && timeout 5 mosquitto_sub $H -u alice -P alicepw -i once-$i -t "sensors/room$room/status" -C 1 -W 3 >/dev/null 2>&1 || true
  [ $((i % 13)) = 0 ] && timeout 5 mosquitto_rr $H -u alice -P alicepw -t "rpc/req/$i" -e "rpc/resp/$i" -m ping -W 1 >/dev/null 2>&1 || true
  [ $((i % 14)) = 0 ] && timeout 5 mosquitto_sub $H -u bob -P bobpw -i bob-wide -t 'audit/#' -C 1 -W 2 >/dev/null 2>&1 || true
  sleep 0.3
done
# client id take-over: the same id connects twice
timeout 20 mosquitto_sub $H -u alice -P alicepw -i dup-id -t 'x/#' >/dev/null 2>&1 &
sleep 1
timeout 3 mosquitto_sub $H -u alice -P alicepw -i dup-id -t 'y/#' -W 2 >/dev/null 2>&1 || true
# a client with a will that dies, and one that goes silent past its keepalive
mosquitto_sub $H -u sensor -P sensorpw -i dying-sensor -k 5 --will-topic sensors/dying/status --will-payload gone --will-qos 1 -t 'cmd/sensor/#' >/dev/null 2>&1 &
dying=$!
sleep 2
kill -9 "$dying" || true
wait "$dying" 2>/dev/null || true
python3 - <<'P' || true
import socket, struct, time
s = socket.create_connection(("127.0.0.1", 51883))
def s_(b): return struct.pack("!H", len(b)) + b
cid, user, pw = b"silent-meter", b"sensor", b"sensorpw"
var = s_(b"MQTT") + bytes([4, 0xC2]) + struct.pack("!H", 3)
pay = s_(cid) + s_(user) + s_(pw)
body = var + pay
s.sendall(bytes([0x10, len(body)]) + body)
s.recv(4)
time.sleep(12)
s.close()
P
# a persistent session that goes away while its messages queue past the limit
timeout 5 mosquitto_sub $H -u alice -P alicepw -i offline-q -c -q 1 -t 'queue/#' -C 1 -W 2 >/dev/null 2>&1 || true
for i in $(seq 1 30); do pub -u alice -P alicepw -q 1 -t "queue/item" -m "$i"; done
timeout 5 mosquitto_sub $H -u alice -P alicepw -i offline-q -c -q 1 -t 'queue/#' -C 20 -W 3 >/dev/null 2>&1 || true
# the bridged broker dies and comes back
kill "$remote"; wait "$remote" 2>/dev/null || true
for i in $(seq 1 8); do pub -u sensor -P sensorpw -q 1 -t "sensors/room1/temp" -m "$i"; sleep 1; done
start_remote
sleep 5
kill -HUP "$mq"
sleep 1
for i in $(seq 1 10); do pub -u sensor -P sensorpw -i "sensor-r$i" -q 1 -t "sensors/room2/temp" -m "$i"; sleep 0.2; done
kill -HUP "$mq"
sleep 2
# a clean stop and a restart with the persisted sessions
kill "$mq"; wait "$mq" 2>/dev/null || true
start
for i in $(seq 1 15); do
  pub -u sensor -P sensorpw -i sensor-1 -q 1 -t "sensors/room1/temp" -m "$i"
  [ $((i % 3)) = 0 ] && pub -u nobody -P x -t "sensors/x" -m x
  [ $((i % 5)) = 0 ] && timeout 5 mosquitto_sub $H -u alice -P alicepw -i offline-q -c -q 1 -t 'queue/#' -C 1 -W 2 >/dev/null 2>&1 || true
  sleep 0.3
done
kill "$mq"; wait "$mq" 2>/dev/null || true
kill "$remote"; wait "$remote" 2>/dev/null || true
kill $(jobs -p) 2>/dev/null || true
wait || true
mkdir -p "$out/Mosquitto"
cp "$w/mosquitto.log" "$out/Mosquitto/Mosquitto_raw.log"
rm -rf "$w"
