#!/bin/bash
# Produces Dnsmasq/Dnsmasq_raw.log: a real dnsmasq's own log file (log-queries, log-dhcp off)
# while dig asks it for local, cached, forwarded, failing and malformed names.
# Usage: dnsmasq.sh OUTDIR   (listens on 127.0.0.1:55353; a second dnsmasq on 55354 upstream)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-dnsmasq.XXXXXX)
cat >"$w/hosts" <<H
10.0.0.1 gw.lab.internal gw
10.0.0.2 db-01.lab.internal db-01
10.0.0.3 web-01.lab.internal web-01
fd00::3 web-01.lab.internal
H
cat >"$w/dnsmasq.conf" <<C
port=55353
listen-address=127.0.0.1
bind-interfaces
no-resolv
no-hosts
addn-hosts=$w/hosts
server=127.0.0.1#55354
server=/corp.example/127.0.0.2#55355
address=/blocked.test/0.0.0.0
address=/ads.example.com/
local=/lab.internal/
domain=lab.internal
log-queries=extra
log-facility=$w/dnsmasq.log
cache-size=150
pid-file=$w/dnsmasq.pid
user=root
C
# the upstream: a second dnsmasq that knows a few names and refuses or denies the rest
cat >"$w/upstream.conf" <<C
port=55354
listen-address=127.0.0.1
bind-interfaces
no-resolv
no-hosts
address=/example.org/93.184.216.34
address=/github.com/140.82.112.3
address=/debian.org/2001:db8::80
mx-host=example.org,mail.example.org,10
txt-record=example.org,"v=spf1 -all"
local=/example.com/
local=/example.net/
pid-file=$w/upstream.pid
user=root
C
dnsmasq -C "$w/upstream.conf"
dnsmasq -C "$w/dnsmasq.conf"
sleep 0.5
q() { dig +tries=1 +time=1 -p 55353 @127.0.0.1 "$@" >/dev/null 2>&1 || true; }
names=(gw db-01 web-01 gw.lab.internal db-01.lab.internal web-01.lab.internal nohost.lab.internal
  www.example.org api.github.com mirror.debian.org host-10-1-2-3.isp.example.net blocked.test
  x.blocked.test ads.example.com tracker.ads.example.com svc.corp.example localhost)
types=(A AAAA MX TXT PTR SRV ANY NS)
RANDOM=7
for i in $(seq 1 260); do
  n=${names[$((RANDOM % ${#names[@]}))]}
  t=${types[$((RANDOM % 4))]}
  [ $((i % 9)) = 0 ] && t=${types[$((RANDOM % ${#types[@]}))]}
  q "$n" "$t"
  [ $((i % 5)) = 0 ] && q -x 10.0.0.$((i % 4 + 1))
  [ $((i % 13)) = 0 ] && q "rnd$i.example.com" A
  [ $((i % 40)) = 0 ] && kill -USR1 "$(cat "$w/dnsmasq.pid")"
  [ $((i % 70)) = 0 ] && kill -HUP "$(cat "$w/dnsmasq.pid")"
done
sleep 0.5
kill "$(cat "$w/dnsmasq.pid")" "$(cat "$w/upstream.pid")"
sleep 0.5
mkdir -p "$out/Dnsmasq"
cp "$w/dnsmasq.log" "$out/Dnsmasq/Dnsmasq_raw.log"
rm -rf "$w"
