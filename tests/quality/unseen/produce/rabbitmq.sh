#!/bin/bash
# Produces RabbitMQ/RabbitMQ_raw.log: a real RabbitMQ 3.10 broker's own log file (an Erlang
# message broker; Debian 12 `rabbitmq-server`, the management and STOMP plugins on, `info` with
# the connection category at `debug`) while Python clients (Debian's `python3-pika`),
# rabbitmqctl, curl and nc drive it: AMQP connections with good, wrong and unknown
# credentials, to a vhost that does not exist or is not granted; classic, quorum and stream
# queues declared (some with arguments that then differ), exclusive queues used from another
# connection, publishes to missing exchanges, consumers on missing queues, messages acked,
# rejected, expired and dead-lettered; connections dropped without a close, idle past their
# heartbeat, garbage and old AMQP versions on the port; users, vhosts, permissions and
# policies added, changed and deleted; connections closed by the operator; a memory alarm set
# and cleared, a disk alarm; STOMP clients (good and bad logins, frames it rejects); the
# management API with good and wrong credentials; stop_app/start_app, a clean restart and a
# SIGKILL with its recovery, a stop.
# Usage: rabbitmq.sh OUTDIR   (AMQP 127.0.0.1:55672, management 55673, STOMP 55674,
#                              distribution 55679; epmd on 127.0.0.1)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-rabbitmq.XXXXXX)
export HOME=$w RABBITMQ_NODENAME=unseen@localhost RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
  RABBITMQ_NODE_PORT=55672 RABBITMQ_DIST_PORT=55679 RABBITMQ_MNESIA_BASE=$w/mnesia \
  RABBITMQ_LOG_BASE=$w/log RABBITMQ_LOGS=$w/rabbit.log RABBITMQ_CONFIG_FILE=$w/rabbitmq \
  RABBITMQ_ENABLED_PLUGINS_FILE=$w/enabled_plugins RABBITMQ_PID_FILE=$w/pid \
  RABBITMQ_ADVANCED_CONFIG_FILE=$w/advanced.config RABBITMQ_CONF_ENV_FILE=$w/rabbitmq-env.conf \
  ERL_EPMD_ADDRESS=127.0.0.1 \
  RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
export PATH=/usr/lib/rabbitmq/bin:$PATH
cat >"$w/rabbitmq.conf" <<C
listeners.tcp.default = 127.0.0.1:55672
management.tcp.ip = 127.0.0.1
management.tcp.port = 55673
stomp.listeners.tcp.1 = 127.0.0.1:55674
log.file.level = info
log.connection.level = debug
log.console = false
loopback_users = none
heartbeat = 60
channel_max = 16
C
echo '[rabbitmq_management,rabbitmq_stomp].' >"$w/enabled_plugins"
start() {
  rabbitmq-server >"$w/stdout" 2>&1 &
  for _ in $(seq 90); do
    sleep 2
    rabbitmqctl -q await_startup -t 5 >/dev/null 2>&1 && return 0
  done
  echo "rabbitmq did not start" >&2; exit 1
}
ctl() { timeout 60 rabbitmqctl -q "$@" >/dev/null 2>&1 || true; }
start
ctl add_user alice alicepw
ctl add_user bob bobpw
ctl add_user monitor monitorpw
ctl set_user_tags alice administrator
ctl set_user_tags monitor monitoring
ctl add_vhost shop
ctl add_vhost audit
ctl set_permissions -p / alice '.*' '.*' '.*'
ctl set_permissions -p shop alice '.*' '.*' '.*'
ctl set_permissions -p shop bob '^bob\.' '^(bob\.|amq\.default)' '^(bob\.|orders)'
ctl set_permissions -p audit monitor '' '' '.*'
ctl set_policy -p shop ttl-short '^short\.' '{"message-ttl":500,"dead-letter-exchange":"dlx"}' --apply-to queues
ctl set_policy -p shop cap '^capped\.' '{"max-length":5,"overflow":"reject-publish"}' --apply-to queues
drive() {
/usr/bin/python3 - "$1" <<'P'
import socket, sys, time, random, threading
import pika
phase = int(sys.argv[1])
rnd = random.Random(phase)
H, PORT = "127.0.0.1", 55672

def params(user="alice", pw="alicepw", vhost="/", hb=60):
    return pika.ConnectionParameters(H, PORT, vhost, pika.PlainCredentials(user, pw),
                                     heartbeat=hb, blocked_connection_timeout=5,
                                     client_properties={"connection_name": "app-%s-%d" % (user, rnd.randrange(1000))})

def tryit(f, *a, **k):
    try:
        return f(*a, **k)
    except Exception:
        return None

def conn(*a, **k):
    return pika.BlockingConnection(params(*a, **k))

def channel_error(vhost, fn):
    c = tryit(conn, vhost=vhost)
    if not c:
        return
    ch = c.channel()
    tryit(fn, ch)
    tryit(c.close)

def setup(ch):
    ch.exchange_declare("dlx", "fanout", durable=True)
    ch.queue_declare("dead", durable=True)
    ch.queue_bind("dead", "dlx")
    ch.exchange_declare("orders", "topic", durable=True)
    for q, args in [("orders.eu", {}), ("orders.us", {"x-queue-type": "quorum"}),
                    ("short.retry", {}), ("capped.jobs", {}), ("bob.inbox", {}),
                    ("orders.log", {"x-queue-type": "stream"})]:
        ch.queue_declare(q, durable=True, arguments=args)
    ch.queue_bind("orders.eu", "orders", "eu.#")
    ch.queue_bind("orders.us", "orders", "us.#")
    ch.queue_bind("orders.log", "orders", "#")
channel_error("shop", setup)

for i in range(150 if phase == 1 else 80):
    k = rnd.randrange(22)
    if k < 4:
        c = conn(vhost="shop"); ch = c.channel(); tryit(ch.confirm_delivery)
        for j in range(rnd.randrange(1, 5)):
            tryit(ch.basic_publish, "orders", rnd.choice(["eu.new", "us.new", "eu.paid"]), b"x" * j,
                  pika.BasicProperties(delivery_mode=2))
        tryit(ch.basic_publish, "", "short.retry", b"retry")
        for j in range(7):
            tryit(ch.basic_publish, "", "capped.jobs", b"job")
        c.close()
    elif k == 4:
        c = conn(vhost="shop"); ch = c.channel()
        for q in ("orders.eu", "orders.us", "dead", "capped.jobs"):
            m = tryit(ch.basic_get, q)
            if m and m[0]:
                if rnd.random() < 0.5:
                    ch.basic_ack(m[0].delivery_tag)
                else:
                    ch.basic_reject(m[0].delivery_tag, requeue=False)
        c.close()
    elif k == 5:
        tryit(conn, "alice", "wrongpw")
    elif k == 6:
        tryit(conn, "mallory", "guess%d" % i)
    elif k == 7:
        tryit(conn, vhost="nowhere")
    elif k == 8:
        tryit(conn, "bob", "bobpw", "audit")
    elif k == 9:
        channel_error("shop", lambda ch: ch.queue_declare("orders.eu", durable=False))
    elif k == 10:
        channel_error("shop", lambda ch: ch.queue_declare("missing.q%d" % i, passive=True))
    elif k == 11:
        def pub_missing(ch):
            ch.confirm_delivery()
            ch.basic_publish("no-such-exchange", "k", b"x")
        channel_error("/", pub_missing)
    elif k == 12:
        channel_error("shop", lambda ch: ch.basic_consume("gone.q", lambda *a: None))
    elif k == 13:
        c1 = conn(); ch1 = c1.channel()
        r = ch1.queue_declare("", exclusive=True)
        channel_error("/", lambda ch: ch.queue_declare(r.method.queue, passive=False, exclusive=False))
        c1.close()
    elif k == 14:
        c = tryit(conn, "bob", "bobpw", "shop")
        if c:
            ch = c.channel()
            tryit(ch.queue_declare, "orders.eu", passive=True)
            tryit(c.close)
        c = tryit(conn, "bob", "bobpw", "shop")
        if c:
            ch = c.channel()
            tryit(ch.queue_delete, "orders.us")
            tryit(c.close)
    elif k == 15:
        # a client that goes away without closing
        c = conn(); ch = c.channel(); ch.queue_declare("", exclusive=True)
        c._impl._transport._sock.close() if hasattr(c._impl, "_transport") else None
        tryit(c.close)
    elif k == 16:
        s = socket.create_connection((H, PORT)); s.sendall(rnd.choice([
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"AMQP\x00\x00\x09\x01", b"AMQP\x01\x01\x08\x00",
            b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03", b"AMQP\x00\x00\x09"])); time.sleep(0.5)
        tryit(s.recv, 100); s.close()
    elif k == 17:
        s = socket.create_connection((H, PORT)); time.sleep(0.2); s.close()
    elif k == 18:
        c = conn(vhost="shop"); ch = c.channel(); tag = None
        got = []
        def on(chx, m, p, b):
            got.append(m.delivery_tag)
            if len(got) % 3 == 0:
                chx.basic_nack(m.delivery_tag, requeue=False)
            else:
                chx.basic_ack(m.delivery_tag)
        ch.basic_qos(prefetch_count=5)
        ch.basic_consume("orders.eu", on)
        c.process_data_events(time_limit=0.5)
        tryit(ch.close); c.close()
    elif k == 19:
        c = conn(); ch = c.channel()
        for n in range(17):
            if tryit(c.channel) is None:
                break
        tryit(c.close)
    elif k == 20:
        c = conn(vhost="shop"); ch = c.channel()
        ch.queue_declare("temp.%d" % i, auto_delete=True); ch.queue_delete("temp.%d" % i)
        ch.exchange_declare("tmpx.%d" % i, "direct", auto_delete=False); ch.exchange_delete("tmpx.%d" % i)
        tryit(ch.exchange_declare, "orders", "fanout", durable=True)
        tryit(c.close)
    else:
        c = conn(vhost="shop"); ch = c.channel()
        tryit(ch.queue_purge, "capped.jobs")
        tryit(ch.basic_publish, "", "bob.inbox", b"hi", pika.BasicProperties(expiration="100"))
        c.close()
    time.sleep(0.05)
P
}
heartbeat_idle() {
/usr/bin/python3 - <<'P' || true
import socket, struct, time
# AMQP 0-9-1 by hand: a client that agrees to a 2-second heartbeat and then sends nothing
s = socket.create_connection(("127.0.0.1", 55672))
s.sendall(b"AMQP\x00\x00\x09\x01")
def frame():
    h = s.recv(7); t, ch, size = struct.unpack("!BHI", h); d = b""
    while len(d) < size + 1: d += s.recv(size + 1 - len(d))
    return t, d[:-1]
def method(cls, mid, args):
    p = struct.pack("!HH", cls, mid) + args
    s.sendall(struct.pack("!BHI", 1, 0, len(p)) + p + b"\xce")
def sstr(x): return bytes([len(x)]) + x
def lstr(x): return struct.pack("!I", len(x)) + x
frame()
method(10, 11, struct.pack("!I", 0) + sstr(b"PLAIN") + lstr(b"\x00alice\x00alicepw") + sstr(b"en_US"))
frame()
method(10, 31, struct.pack("!HIH", 16, 131072, 2))
method(10, 40, sstr(b"/") + sstr(b"") + b"\x00")
frame()
time.sleep(9)
s.close()
P
}
stomp() {
/usr/bin/python3 - <<'P' || true
import socket, time
def send(frames, wait=0.3):
    s = socket.create_connection(("127.0.0.1", 55674))
    for f in frames:
        s.sendall(f); time.sleep(0.05)
    time.sleep(wait)
    try: s.recv(4096)
    except Exception: pass
    s.close()
C = lambda u, p, v="/": ("CONNECT\naccept-version:1.2\nhost:%s\nlogin:%s\npasscode:%s\n\n\x00" % (v, u, p)).encode()
for i in range(10):
    send([C("alice", "alicepw"), b"SUBSCRIBE\nid:0\ndestination:/queue/stomp.jobs\n\n\x00",
          b"SEND\ndestination:/queue/stomp.jobs\n\nhello\x00", b"DISCONNECT\nreceipt:9\n\n\x00"])
    send([C("alice", "badpw")])
    send([C("alice", "alicepw", "nowhere")])
    send([C("alice", "alicepw"), b"SEND\ndestination:/exchange/no-such-ex/k\n\nx\x00"])
    send([C("alice", "alicepw"), b"SUBSCRIBE\nid:1\ndestination:/bogus/x\n\n\x00"])
    send([b"HELLO\n\n\x00"])
    send([C("alice", "alicepw"), b"SEND\n\nno destination\x00"])
P
}
mgmt() {
  for i in 1 2 3; do
    curl -s -o /dev/null -u alice:alicepw http://127.0.0.1:55673/api/overview || true
    curl -s -o /dev/null -u alice:wrong http://127.0.0.1:55673/api/queues || true
    curl -s -o /dev/null -u bob:bobpw http://127.0.0.1:55673/api/users || true
    curl -s -o /dev/null -u alice:alicepw -X PUT -H 'content-type: application/json' \
      -d '{"durable":true}' http://127.0.0.1:55673/api/queues/shop/api.q$i || true
    curl -s -o /dev/null -u alice:alicepw -X DELETE http://127.0.0.1:55673/api/queues/shop/api.q$i || true
    curl -s -o /dev/null -u alice:alicepw -X PUT -H 'content-type: application/json' \
      -d '{"tags":""}' http://127.0.0.1:55673/api/users/web$i || true
    curl -s -o /dev/null -u alice:alicepw -X DELETE http://127.0.0.1:55673/api/users/web$i || true
  done
}
drive 1 || true
heartbeat_idle
stomp
mgmt
ctl list_queues -p shop name messages
ctl list_connections
# the operator closes what is open, changes users, vhosts and policies
/usr/bin/python3 - <<'P' &
import pika, time
c = pika.BlockingConnection(pika.ConnectionParameters("127.0.0.1", 55672, "shop", pika.PlainCredentials("alice", "alicepw")))
for _ in range(40):
    try: c.process_data_events(time_limit=0.5)
    except Exception: break
P
sleep 4
for p in $(rabbitmqctl -q list_connections pid 2>/dev/null | grep '<'); do
  ctl close_connection "$p" "closed by the operator"
done
ctl change_password bob bobpw2
ctl clear_permissions -p shop bob
ctl delete_user monitor
ctl delete_user nobody
ctl add_vhost scratch
ctl delete_vhost scratch
ctl delete_vhost nowhere
ctl clear_policy -p shop cap
ctl set_policy -p shop cap '^capped\.' '{"max-length":3}' --apply-to queues
ctl set_vm_memory_high_watermark 0.00001
sleep 3
/usr/bin/python3 - <<'P' || true
import pika
try:
    c = pika.BlockingConnection(pika.ConnectionParameters("127.0.0.1", 55672, "shop", pika.PlainCredentials("alice", "alicepw"), blocked_connection_timeout=3))
    ch = c.channel()
    for i in range(5): ch.basic_publish("", "orders.eu", b"blocked")
    c.process_data_events(time_limit=4)
    c.close()
except Exception: pass
P
ctl set_vm_memory_high_watermark 0.4
ctl set_disk_free_limit 100000GB
sleep 12
ctl set_disk_free_limit 50MB
sleep 12
ctl stop_app
ctl start_app
drive 2 || true
# a clean restart, then a SIGKILL and the recovery
ctl stop
sleep 3
start
drive 3 || true
kill -9 "$(cat "$w/pid")" || true

sleep 3
start
drive 4 || true
stomp
ctl stop
sleep 3
epmd -kill >/dev/null 2>&1 || true
mkdir -p "$out/RabbitMQ"
cp "$w/rabbit.log" "$out/RabbitMQ/RabbitMQ_raw.log"
rm -rf "$w"
