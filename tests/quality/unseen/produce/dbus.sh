#!/bin/bash
# Produces DBus/DBus_raw.log: the D-Bus message bus daemon's own messages (dbus-daemon 1.14,
# a desktop session's bus with its own configuration, `--nosyslog`: every message on stderr)
# while dbus-send, dbus-monitor and dbus-test-tool call, activate and own names: services that
# start, exit with a status, die of a signal, never claim their name (timeout) or cannot be
# executed, a misnamed service file; calls, signals and names the policy denies; too many
# connections, pending replies and match rules, an oversized message; clients that never
# authenticate and garbage on the socket; reloads with a good and a broken configuration.
# Usage: dbus.sh OUTDIR   (the bus listens on a socket in its own temporary directory)
set -u
out=$1
w=$(mktemp -d /tmp/unseen-dbus.XXXXXX)
mkdir -p "$w/services"
svc() { printf '[D-BUS Service]\nName=%s\nExec=%s\n' "$2" "$3" >"$w/services/$1.service"; }
svc org.lab.Echo org.lab.Echo "/usr/bin/dbus-test-tool echo --name=org.lab.Echo"
svc org.lab.Slow org.lab.Slow "/usr/bin/dbus-test-tool echo --name=org.lab.Slow --sleep-ms=300"
svc org.lab.Hole org.lab.Hole "/usr/bin/dbus-test-tool black-hole --name=org.lab.Hole"
svc org.lab.Crash org.lab.Crash "/bin/sh -c 'exit 3'"
svc org.lab.Segv org.lab.Segv "/bin/sh -c 'kill -SEGV \$\$'"
svc org.lab.Sleepy org.lab.Sleepy "/bin/sleep 30"
svc org.lab.Missing org.lab.Missing "/nonexistent/bin/lab-missing"
svc misnamed org.lab.Misnamed "/usr/bin/dbus-test-tool echo --name=org.lab.Misnamed"
printf '[D-BUS Service]\nName=org.lab.Broken\n' >"$w/services/org.lab.Broken.service"
conf() { # $1 = extra policy lines
    cat <<C
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$w/bus</listen>
  <auth>EXTERNAL</auth>
  <servicedir>$w/services</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
    <deny own="org.lab.Forbidden"/>
    <deny send_destination="org.lab.Vault"/>
    <deny send_interface="org.lab.Admin"/>
    <deny send_type="signal" send_interface="org.lab.Alarm"/>
    $1
  </policy>
  <limit name="max_connections_per_user">10</limit>
  <limit name="max_replies_per_connection">4</limit>
  <limit name="max_match_rules_per_connection">3</limit>
  <limit name="max_message_size">8192</limit>
  <limit name="service_start_timeout">3000</limit>
  <limit name="auth_timeout">2000</limit>
  <limit name="pending_fd_timeout">2000</limit>
</busconfig>
C
}
conf "" >"$w/bus.conf"
dbus-daemon --config-file="$w/bus.conf" --nofork --nosyslog --nopidfile 2>>"$w/bus.log" &
bus=$!
for _ in $(seq 50); do [ -S "$w/bus" ] && break; sleep 0.1; done
export DBUS_SESSION_BUS_ADDRESS=unix:path=$w/bus
ds() { timeout 10 dbus-send --session --print-reply "$@" >/dev/null 2>&1; }
# activations that work, fail, time out, cannot start
for n in 1 2 3 4; do
    ds --dest=org.lab.Echo /org/lab org.lab.Iface.Hello string:hi
    ds --dest=org.lab.Slow /org/lab org.lab.Iface.Hello
    ds --dest=org.lab.Crash /org/lab org.lab.Iface.Hello
    ds --dest=org.lab.Segv /org/lab org.lab.Iface.Hello
    ds --dest=org.lab.Missing /org/lab org.lab.Iface.Hello
    ds --dest=org.lab.Misnamed /org/lab org.lab.Iface.Hello
    ds --dest=org.lab.Broken /org/lab org.lab.Iface.Hello
    ds --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.StartServiceByName string:org.lab.Crash uint32:0
done
ds --dest=org.lab.Sleepy /org/lab org.lab.Iface.Hello
# the policy denies these
for m in Open Read Write; do
    ds --dest=org.lab.Vault /org/lab/vault org.lab.Iface.$m
    ds --dest=org.lab.Echo /org/lab org.lab.Admin.$m int32:5
done
ds --dest=org.lab.Echo /org/lab org.lab.Admin.Shutdown
timeout 5 dbus-send --session --type=signal /org/lab org.lab.Alarm.Fire string:smoke
timeout 5 dbus-send --session --type=signal /org/lab org.lab.Status.Changed string:ok
timeout 3 dbus-test-tool echo --name=org.lab.Forbidden >/dev/null 2>&1
timeout 3 dbus-test-tool black-hole --name=org.lab.Vault >/dev/null 2>&1 &
sleep 1
ds --dest=org.lab.Vault /org/lab org.lab.Iface.Open
# a monitor that comes and goes
for n in 1 2 3; do
    timeout 2 dbus-monitor --session >/dev/null 2>&1 &
    sleep 0.5
    ds --dest=org.lab.Echo /org/lab org.lab.Iface.Hello
    sleep 2
done
# pending replies past the limit (org.lab.Hole never answers)
timeout 8 dbus-test-tool spam --dest=org.lab.Hole --count=12 --queue=12 --ignore-errors >/dev/null 2>&1
timeout 8 dbus-test-tool spam --dest=org.lab.Hole --count=8 --flood --ignore-errors >/dev/null 2>&1
# an oversized message, then many small ones
head -c 20000 /dev/zero | tr '\0' x | timeout 5 dbus-test-tool spam --dest=org.lab.Echo --stdin >/dev/null 2>&1
timeout 10 dbus-test-tool spam --dest=org.lab.Echo --count=50 --queue=5 >/dev/null 2>&1
# match rules past the limit, on one connection
python3 - "$w/bus" <<'P' 2>/dev/null
import socket, struct, sys, os, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
s.recv(4096); s.sendall(b"BEGIN\r\n")
serial = [0]
def call(member, sig=b"", body=b""):
    serial[0] += 1
    fields = b""
    def field(code, t, val):
        nonlocal fields
        fields += b"\0" * (-len(fields) % 8) + bytes([code, 1]) + t + b"\0"
        if t in (b"s", b"o"):
            fields += b"\0" * (-len(fields) % 4) + struct.pack("<I", len(val)) + val + b"\0"
        else:
            fields += struct.pack("<B", len(val)) + val + b"\0"
    field(1, b"o", b"/org/freedesktop/DBus")
    field(2, b"s", b"org.freedesktop.DBus")
    field(3, b"s", member)
    field(6, b"s", b"org.freedesktop.DBus")
    if sig:
        field(8, b"g", sig)
    head = b"l\1\0\1" + struct.pack("<II", len(body), serial[0]) + struct.pack("<I", len(fields)) + fields
    s.sendall(head + b"\0" * (-len(head) % 8) + body)
    time.sleep(0.1)
def string(v):
    return struct.pack("<I", len(v)) + v + b"\0"
call(b"Hello")
for i in range(6):
    call(b"AddMatch", b"s", string(b"type='signal',interface='org.lab.I%d'" % i))
time.sleep(0.5)
s.close()
P
# too many connections from one user
pids=""
for i in $(seq 12); do
    dbus-test-tool black-hole --name=org.lab.Idle$i >/dev/null 2>&1 &
    pids="$pids $!"
done
sleep 2
kill $pids 2>/dev/null
# clients that never authenticate, garbage
for i in 1 2; do timeout 4 socat -u OPEN:/dev/null,ignoreeof UNIX-CONNECT:"$w/bus" >/dev/null 2>&1; done
printf 'GET / HTTP/1.0\r\n\r\n' | timeout 3 socat - UNIX-CONNECT:"$w/bus" >/dev/null 2>&1
printf '\0AUTH EXTERNAL 30\r\nBEGIN\r\n' | timeout 3 socat - UNIX-CONNECT:"$w/bus" >/dev/null 2>&1
printf '\0AUTH EXTERNAL 30\r\nBEGIN\r\nlzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz' | timeout 3 socat - UNIX-CONNECT:"$w/bus" >/dev/null 2>&1
# reloads: a service file added, the policy changed, a broken file, a reload over the bus
svc org.lab.Late org.lab.Late "/usr/bin/dbus-test-tool echo --name=org.lab.Late"
conf '<deny send_destination="org.lab.Late"/>' >"$w/bus.conf"
kill -HUP $bus
sleep 1
ds --dest=org.lab.Late /org/lab org.lab.Iface.Hello
conf "" | sed 's/<\/policy>/<\/polcy>/' >"$w/bus.conf"
kill -HUP $bus
sleep 1
ds --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.ReloadConfig
conf "" >"$w/bus.conf"
ds --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.ReloadConfig
ds --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.UpdateActivationEnvironment dict:string:string:LAB_MODE,test
ds --dest=org.lab.Late /org/lab org.lab.Iface.Hello
ds --dest=org.lab.Crash /org/lab org.lab.Iface.Hello
sleep 1
kill -TERM $bus
wait $bus
mkdir -p "$out/DBus"
cp "$w/bus.log" "$out/DBus/DBus_raw.log"
rm -rf "$w"
