#!/bin/bash
# Produces Kea/Kea_raw.log: ISC Kea 2.2's DHCPv4 server's own log file (its default pattern,
# every logger at DEBUG level 50) while perfdhcp, as a relay agent on loopback, runs clients
# through discover/offer/request/ack, renews and releases, exhausts two pools, names a link
# no subnet serves, sends hostnames, a relay-agent option and reserved MAC addresses;
# garbage datagrams; leases expire and are reclaimed, the lease file is compacted (kea-lfc);
# control-socket commands (good, unknown, bad arguments; lease_cmds and stat_cmds hooks);
# a SIGHUP reload with a good and a broken file, a config-set that fails, a stop and a restart.
# Usage: kea.sh OUTDIR   (server port 10067, client port 10068 on 127.0.0.1)
set -u
out=$1
w=$(mktemp -d /tmp/unseen-kea.XXXXXX)
export KEA_PIDFILE_DIR=$w KEA_LOCKFILE_DIR=$w
hooks=/usr/lib/x86_64-linux-gnu/kea/hooks
conf() { # $1 = valid-lifetime
    cat <<C
{ "Dhcp4": {
  "interfaces-config": { "interfaces": [ "lo/127.0.0.1" ], "dhcp-socket-type": "udp" },
  "control-socket": { "socket-type": "unix", "socket-name": "$w/kea4.sock" },
  "lease-database": { "type": "memfile", "name": "$w/leases4.csv", "lfc-interval": 20 },
  "valid-lifetime": $1, "renew-timer": 4, "rebind-timer": 7,
  "expired-leases-processing": { "reclaim-timer-wait-time": 3, "hold-reclaimed-time": 6,
                                 "flush-reclaimed-timer-wait-time": 5 },
  "hooks-libraries": [ { "library": "$hooks/libdhcp_lease_cmds.so" },
                       { "library": "$hooks/libdhcp_stat_cmds.so" } ],
  "client-classes": [ { "name": "printers", "test": "substring(option[12].hex,0,3) == 'prn'" } ],
  "ddns-send-updates": false, "ddns-qualifying-suffix": "lab.example",
  "subnet4": [
    { "id": 1, "subnet": "10.10.0.0/24", "pools": [ { "pool": "10.10.0.10 - 10.10.0.29" } ],
      "relay": { "ip-addresses": [ "127.0.0.1" ] },
      "option-data": [ { "name": "routers", "data": "10.10.0.1" },
                       { "name": "domain-name-servers", "data": "10.10.0.2" } ],
      "reservations": [ { "hw-address": "00:0c:01:02:03:05", "ip-address": "10.10.0.5",
                          "hostname": "kiosk" },
                        { "hw-address": "00:0c:01:02:03:07", "ip-address": "10.10.0.7" } ] },
    { "id": 2, "subnet": "10.20.0.0/28", "pools": [ { "pool": "10.20.0.2 - 10.20.0.4" } ] } ],
  "loggers": [ { "name": "kea-dhcp4", "output_options": [ { "output": "$w/kea4.log" } ],
                 "severity": "DEBUG", "debuglevel": 50 } ]
} }
C
}
conf 12 >"$w/kea4.json"
pd() { timeout 60 perfdhcp -4 -L 10068 -N 10067 "$@" 127.0.0.1 >/dev/null 2>&1; }
cmd() { printf '%s' "$1" | timeout 10 socat - UNIX-CONNECT:"$w/kea4.sock" >/dev/null 2>&1; sleep 0.3; }
start() {
    kea-dhcp4 -c "$w/kea4.json" -p 10067 -P 10068 >>"$w/stdout" 2>&1 &
    pid=$!
    for _ in $(seq 50); do [ -S "$w/kea4.sock" ] && break; sleep 0.2; done
    sleep 1
}
start
# a few clients through DORA, then only discover/offer
pd -l 127.0.0.1 -r 4 -n 12 -R 6 -b mac=00:0c:01:02:03:00
pd -l 127.0.0.1 -i -r 4 -n 6 -R 6 -b mac=00:0c:01:02:04:00
# reserved addresses (MACs ...:05 and ...:07)
pd -l 127.0.0.1 -r 2 -n 4 -R 1 -b mac=00:0c:01:02:03:05
pd -l 127.0.0.1 -r 2 -n 4 -R 1 -b mac=00:0c:01:02:03:07
# hostnames (option 12): a printer class and a plain host; a relay-agent option (82)
pd -l 127.0.0.1 -r 3 -n 6 -R 3 -b mac=00:0c:01:05:00:00 -o 12,70726e2d3031
pd -l 127.0.0.1 -r 3 -n 6 -R 3 -b mac=00:0c:01:06:00:00 -o 12,6c6170746f702d6a
pd -l 127.0.0.1 -r 3 -n 6 -R 3 -b mac=00:0c:01:07:00:00 -o 82,0104000000010206aabbccddeeff
# renews and releases
pd -l 127.0.0.1 -r 4 -p 6 -R 4 -f 2 -F 1 -b mac=00:0c:01:08:00:00
# the relay's link-selection sub-option names the small subnet, which runs out of addresses,
# then a link no subnet serves; the big pool runs out too
pd -l 127.0.0.1 -r 6 -n 20 -R 10 -b mac=00:0c:01:09:00:00 -D 100 -o 82,01040000000205040a140001
pd -l 127.0.0.1 -r 3 -n 5 -R 3 -b mac=00:0c:01:0a:00:00 -o 82,01040000000305040a320001
pd -l 127.0.0.1 -r 10 -n 40 -R 40 -b mac=00:0c:01:0f:00:00 -D 100
# garbage and truncated datagrams
for g in 'hello' "$(printf 'A%.0s' $(seq 300))" "$(printf '\001\001\006\001abcd')"; do
    printf '%s' "$g" | timeout 2 nc -u -w1 -s 127.0.0.1 127.0.0.1 10067 || true
done
# control commands
cmd '{ "command": "list-commands" }'
cmd '{ "command": "status-get" }'
cmd '{ "command": "version-get" }'
cmd '{ "command": "config-get" }'
cmd '{ "command": "statistic-get-all" }'
cmd '{ "command": "statistic-get", "arguments": { "name": "pkt4-received" } }'
cmd '{ "command": "statistic-reset-all" }'
cmd '{ "command": "stat-lease4-get" }'
cmd '{ "command": "lease4-get-all" }'
cmd '{ "command": "lease4-get", "arguments": { "ip-address": "10.10.0.10" } }'
cmd '{ "command": "lease4-get", "arguments": { "ip-address": "10.10.0.99" } }'
cmd '{ "command": "lease4-add", "arguments": { "ip-address": "10.10.0.28", "hw-address": "1a:1b:1c:1d:1e:1f" } }'
cmd '{ "command": "lease4-add", "arguments": { "ip-address": "10.99.0.1", "hw-address": "1a:1b:1c:1d:1e:20" } }'
cmd '{ "command": "lease4-update", "arguments": { "ip-address": "10.10.0.28", "hw-address": "1a:1b:1c:1d:1e:21", "hostname": "moved" } }'
cmd '{ "command": "lease4-del", "arguments": { "ip-address": "10.10.0.28" } }'
cmd '{ "command": "lease4-del", "arguments": { "ip-address": "10.10.0.28" } }'
cmd '{ "command": "lease4-wipe", "arguments": { "subnet-id": 2 } }'
cmd '{ "command": "leases-reclaim", "arguments": { "remove": true } }'
cmd '{ "command": "no-such-command" }'
cmd '{ "command": "lease4-get", "arguments": { "ip": 5 } }'
cmd 'not json at all'
cmd '{ "command": "config-write", "arguments": { "filename": "'"$w"'/written.json" } }'
cmd '{ "command": "config-test", "arguments": { "Dhcp4": { "subnet4": [ { "subnet": "10.30.0.0/99" } ] } } }'
cmd '{ "command": "config-set", "arguments": { "Dhcp4": { "valid-lifetime": "long" } } }'
cmd '{ "command": "dhcp-disable", "arguments": { "max-period": 3 } }'
pd -l 127.0.0.1 -r 3 -n 3 -R 3 -b mac=00:0c:01:0b:00:00
sleep 4
cmd '{ "command": "dhcp-enable" }'
# leases expire and are reclaimed; the lease file is compacted
pd -l 127.0.0.1 -r 5 -n 15 -R 15 -b mac=00:0c:01:0c:00:00
sleep 25
# a reload with a good file (shorter lifetime), then a broken one
conf 10 >"$w/kea4.json"
kill -HUP $pid
sleep 2
pd -l 127.0.0.1 -r 4 -n 8 -R 8 -b mac=00:0c:01:0d:00:00
cp "$w/kea4.json" "$w/good.json"
sed 's/"subnet": "10.20.0.0\/28"/"subnet": "10.20.0.0\/33"/' "$w/good.json" >"$w/kea4.json"
kill -HUP $pid
sleep 2
cmd '{ "command": "config-reload" }'
cp "$w/good.json" "$w/kea4.json"
cmd '{ "command": "config-reload" }'
cmd '{ "command": "shutdown" }'
wait $pid
# a restart: the lease file is read back
start
pd -l 127.0.0.1 -r 4 -n 8 -R 8 -b mac=00:0c:01:0c:00:00
pd -l 127.0.0.1 -r 4 -n 8 -R 8 -b mac=00:0c:01:0e:00:00 -D 100 -o 82,01040000000205040a140001
sleep 12
kill -TERM $pid
wait $pid
mkdir -p "$out/Kea"
cp "$w/kea4.log" "$out/Kea/Kea_raw.log"
rm -rf "$w"
