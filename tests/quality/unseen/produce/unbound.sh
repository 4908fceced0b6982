#!/bin/bash
# Produces Unbound/Unbound_raw.log: a real Unbound resolver's own log file (verbosity 2,
# log-queries, log-replies, log-servfail, log-local-actions, val-log-level 2; Unbound's
# default `[epoch] unbound[pid:thread] level: ` prefix) while dig asks it A/AAAA/MX/TXT/PTR/
# SRV/NS/SOA/ANY/CNAME questions from three loopback clients (one refused, one denied
# silently): local data and local zones of every type, forward zones to a second Unbound that
# answers or refuses, to a closed port, a zone whose trust anchor the answers do not match
# (validation failures), the rest of the tree unreachable; ratelimits; TCP; unbound-control
# reloads, flushes, stats, cache dumps, local data and forwards changed at run time; a stop
# and a start. Usage: unbound.sh OUTDIR   (127.0.0.1:56853, the upstream on 56854, control 56953)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-unbound.XXXXXX)
cat >"$w/upstream.conf" <<C
server:
  interface: 127.0.0.1@56854
  username: ""
  chroot: ""
  directory: "$w"
  pidfile: "$w/upstream.pid"
  use-syslog: no
  logfile: "$w/upstream.log"
  access-control: 127.0.0.0/8 allow
  do-not-query-localhost: no
  module-config: "iterator"
  local-zone: "test." nodefault
  local-zone: "fwd.test." static
  local-data: "fwd.test. SOA ns.fwd.test. admin.fwd.test. 1 3600 600 86400 60"
  local-data: "www.fwd.test. 300 A 10.1.0.10"
  local-data: "www.fwd.test. 300 AAAA fd00::10"
  local-data: "api.fwd.test. 300 CNAME www.fwd.test."
  local-data: "fwd.test. 300 MX 10 mail.fwd.test."
  local-data: "mail.fwd.test. 300 A 10.1.0.25"
  local-data: "fwd.test. 300 TXT \"v=spf1 -all\""
  local-zone: "refused.test." refuse
  local-zone: "secure.test." static
  local-data: "www.secure.test. 300 A 10.2.0.1"
  local-data: "secure.test. SOA ns.secure.test. admin.secure.test. 1 3600 600 86400 60"
C
cat >"$w/unbound.conf" <<C
server:
  interface: 127.0.0.1@56853
  username: ""
  chroot: ""
  directory: "$w"
  pidfile: "$w/unbound.pid"
  use-syslog: no
  logfile: "$w/unbound.log"
  verbosity: 2
  log-queries: yes
  log-replies: yes
  log-servfail: yes
  log-local-actions: yes
  val-log-level: 2
  access-control: 127.0.0.0/8 allow
  access-control: 127.0.0.3/32 refuse
  access-control: 127.0.0.4/32 deny
  do-not-query-localhost: no
  module-config: "validator iterator"
  trust-anchor: "secure.test. DS 12345 13 2 3C8E4F2A1B7D9E6F5A4C3B2D1E0F9A8B7C6D5E4F3A2B1C0D9E8F7A6B5C4D3E2F"
  domain-insecure: "fwd.test."
  domain-insecure: "refused.test."
  domain-insecure: "dead.test."
  domain-insecure: "."
  ip-ratelimit: 30
  ratelimit: 20
  outgoing-port-permit: 40000-41000
  outgoing-port-avoid: 0-39999
  local-zone: "test." nodefault
  local-zone: "corp.test." static
  local-data: "corp.test. SOA ns.corp.test. admin.corp.test. 7 3600 600 86400 60"
  local-data: "host1.corp.test. A 10.0.0.1"
  local-data: "host2.corp.test. A 10.0.0.2"
  local-data: "host2.corp.test. AAAA fd00::2"
  local-data: "corp.test. MX 10 mx.corp.test."
  local-data: "_ldap._tcp.corp.test. SRV 0 5 389 host1.corp.test."
  local-data-ptr: "10.0.0.1 host1.corp.test."
  local-zone: "ads.test." always_nxdomain
  local-zone: "tracker.test." refuse
  local-zone: "sink.test." redirect
  local-data: "sink.test. A 10.9.9.9"
  local-zone: "quiet.test." always_refuse
  local-zone: "seen.test." inform
  local-zone: "nodata.test." always_nodata
  local-zone: "drop.test." deny
  local-zone: "home.test." transparent
  local-data: "nas.home.test. A 10.0.5.5"
forward-zone:
  name: "fwd.test."
  forward-addr: 127.0.0.1@56854
forward-zone:
  name: "secure.test."
  forward-addr: 127.0.0.1@56854
forward-zone:
  name: "refused.test."
  forward-addr: 127.0.0.1@56854
forward-zone:
  name: "dead.test."
  forward-addr: 127.0.0.1@56899
forward-zone:
  name: "."
  forward-addr: 127.0.0.1@56898
remote-control:
  control-enable: yes
  control-interface: 127.0.0.1
  control-port: 56953
  control-use-cert: no
C
up() { unbound -d -c "$w/upstream.conf" & upstream=$!; }
start() { unbound -d -c "$w/unbound.conf" & ub=$!; sleep 1; }
q() { timeout 8 dig -p 56853 +tries=1 +time=3 "$@" >/dev/null 2>&1 || true; }
ctl() { timeout 10 unbound-control -c "$w/unbound.conf" "$@" >/dev/null 2>&1 || true; }
up
start
types=(A AAAA MX TXT SRV NS SOA ANY CNAME PTR)
names=(host1.corp.test host2.corp.test corp.test _ldap._tcp.corp.test missing.corp.test
  x.ads.test ads.test y.tracker.test a.sink.test quiet.test www.seen.test nodata.test
  z.drop.test nas.home.test www.fwd.test api.fwd.test fwd.test mail.fwd.test nope.fwd.test
  www.refused.test www.secure.test secure.test www.dead.test example.com debian.org)
for i in $(seq 1 90); do
  n=${names[$((i % ${#names[@]}))]}
  t=${types[$((i % ${#types[@]}))]}
  q @127.0.0.1 "$n" "$t"
  q @127.0.0.1 -b 127.0.0.2 "${names[$(((i * 7) % ${#names[@]}))]}" A
  [ $((i % 3)) = 0 ] && q @127.0.0.1 +tcp "${names[$(((i * 5) % ${#names[@]}))]}" AAAA
  [ $((i % 4)) = 0 ] && q @127.0.0.1 -x "10.0.0.$((i % 3))"
  [ $((i % 6)) = 0 ] && q @127.0.0.1 +dnssec www.secure.test A
  [ $((i % 9)) = 0 ] && q @127.0.0.1 -b 127.0.0.3 host1.corp.test A
  [ $((i % 10)) = 0 ] && q @127.0.0.1 -b 127.0.0.4 +time=1 host1.corp.test A
  [ $((i % 15)) = 0 ] && ctl stats_noreset
  [ $((i % 20)) = 0 ] && ctl flush www.fwd.test
  [ $((i % 25)) = 0 ] && ctl flush_zone fwd.test
  [ $((i % 30)) = 0 ] && ctl dump_cache
  [ $i = 35 ] && { ctl local_data "new$i.corp.test. A 10.0.0.$i"; ctl local_zone "lab.test." static; ctl local_data "db.lab.test. A 10.3.0.1"; }
  [ $i = 45 ] && { ctl forward_add dyn.test 127.0.0.1@56854; ctl local_data_remove "host2.corp.test"; }
  [ $i = 55 ] && { ctl forward_remove dyn.test; ctl local_zone_remove lab.test; ctl flush_bogus; ctl flush_infra all; }
  [ $i = 60 ] && { ctl verbosity 3; }
  [ $i = 62 ] && { ctl verbosity 2; }
  [ $i = 70 ] && ctl reload
  sleep 0.05
done
# a burst past the ratelimits
burst=()
for i in $(seq 1 60); do q @127.0.0.1 +time=1 "r$i.example.com" A & burst+=($!); done
wait "${burst[@]}" 2>/dev/null || true
# the upstream goes away and comes back
kill "$upstream"; wait "$upstream" 2>/dev/null || true
for i in $(seq 1 10); do q @127.0.0.1 "w$i.fwd.test" A; done
up
sleep 1
ctl flush_infra all
for i in $(seq 1 10); do q @127.0.0.1 "www.fwd.test" TXT; q @127.0.0.1 "host$((i % 3)).corp.test" A; done
ctl flush_requestlist
ctl reload
ctl stop
wait "$ub" 2>/dev/null || true
start
for i in $(seq 1 20); do q @127.0.0.1 "${names[$((i % ${#names[@]}))]}" A; done
ctl stop
wait "$ub" 2>/dev/null || true
kill "$upstream"; wait "$upstream" 2>/dev/null || true
mkdir -p "$out/Unbound"
cp "$w/unbound.log" "$out/Unbound/Unbound_raw.log"
rm -rf "$w"
