#!/bin/bash
# Produces Bind9/Bind9_raw.log: a real BIND 9 named's own log file (print-time, category and
# severity, every category at info, query logging on) while dig, nsupdate and rndc drive it:
# authoritative answers, refused and denied queries, dynamic updates with good, wrong and no
# keys, zone transfers out and in (from a second named), a zone that does not load, a
# secondary whose primary is down, DNSSEC signing, recursion with no route out, reloads.
# Usage: bind.sh OUTDIR   (root; named on 127.0.0.1:55363, its helper on 127.0.0.1:55364,
# rndc on 55953)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-bind.XXXXXX)
mkdir -p "$w/main" "$w/helper"
tsig() { tsig-keygen -a hmac-sha256 "$1"; }
tsig upd-key >"$w/keys.conf"
tsig xfer-key >>"$w/keys.conf"
tsig wrong-key | sed 's/wrong-key/upd-key/' >"$w/wrong.key"
tsig other-key >"$w/other.key"
rndc-confgen -a -k rndc-key -c "$w/rndc.key" >/dev/null 2>&1
rndc=(rndc -k "$w/rndc.key" -s 127.0.0.1 -p 55953)
zone() { # zone NAME FILE SERIAL
  cat >"$2" <<Z
\$TTL 300
@ IN SOA ns1.$1. hostmaster.$1. ($3 60 30 600 60)
  IN NS ns1.$1.
  IN MX 10 mail.$1.
ns1 IN A 127.0.0.1
mail IN A 10.1.0.25
www IN A 10.1.0.80
www IN AAAA fd00::80
api IN CNAME www
_ldap._tcp IN SRV 0 5 389 ns1.$1.
txt IN TXT "v=spf1 -all"
Z
}
zone example.test "$w/main/example.test.db" 2026112801
zone signed.test "$w/main/signed.test.db" 2026112801
zone sub.test "$w/helper/sub.test.db" 2026112801
cp "$w/main/example.test.db" "$w/main/example.test.db.orig"
cat >"$w/main/broken.test.db" <<Z
\$TTL 300
@ IN SOA ns1.broken.test. hostmaster.broken.test. (1 60 30 600 60)
www IN A 10.2.0.1
bad IN A 300.1.2.3
cname IN CNAME www
cname IN A 10.2.0.2
Z
cat >"$w/helper/named.conf" <<C
include "$w/keys.conf";
options { directory "$w/helper"; listen-on port 55364 { 127.0.0.1; }; listen-on-v6 { none; };
  pid-file "$w/helper/named.pid"; recursion no; allow-transfer { any; };
  also-notify { 127.0.0.1 port 55363; }; notify explicit; };
logging { channel n { file "$w/helper/named.log"; severity info; }; category default { n; }; };
zone "sub.test" { type primary; file "$w/helper/sub.test.db"; allow-update { key upd-key; }; };
C
cat >"$w/main/named.conf" <<C
include "$w/keys.conf";
include "$w/rndc.key";
controls { inet 127.0.0.1 port 55953 allow { 127.0.0.1; } keys { rndc-key; }; };
options {
  directory "$w/main"; listen-on port 55363 { 127.0.0.1; }; listen-on-v6 { none; };
  pid-file "$w/main/named.pid"; session-keyfile "$w/main/session.key";
  recursion yes; allow-recursion { 127.0.0.1; }; allow-query-cache { 127.0.0.1; };
  allow-query { 127.0.0.0/8; }; blackhole { 127.0.0.9; };
  dnssec-validation auto; querylog yes; notify yes;
  resolver-query-timeout 3000; max-cache-size 16m;
};
logging {
  channel main { file "$w/main/named.log" versions 3 size 20m; print-time yes;
    print-category yes; print-severity yes; severity info; };
  category default { main; }; category queries { main; }; category lame-servers { main; };
  category update-security { main; }; category resolver { main; }; category dnssec { main; };
};
zone "example.test" { type primary; file "$w/main/example.test.db";
  allow-update { key upd-key; }; allow-transfer { key xfer-key; 127.0.0.3; };
  also-notify { 127.0.0.1 port 55364; }; };
zone "signed.test" { type primary; file "$w/main/signed.test.db"; dnssec-policy default;
  inline-signing yes; allow-transfer { 127.0.0.3; }; };
zone "broken.test" { type primary; file "$w/main/broken.test.db"; };
zone "sub.test" { type secondary; primaries { 127.0.0.1 port 55364; };
  file "$w/main/sub.test.bk"; allow-transfer { none; }; };
zone "gone.test" { type secondary; primaries { 127.0.0.1 port 55399; }; file "$w/main/gone.test.bk"; };
zone "fwd.test" { type forward; forward only; forwarders { 127.0.0.1 port 55364; }; };
zone "dead.test" { type forward; forward only; forwarders { 127.0.0.1 port 55398; }; };
C
named -u root -c "$w/helper/named.conf"
start() {
  named -u root -c "$w/main/named.conf"
  for _ in $(seq 1 50); do "${rndc[@]}" status >/dev/null 2>&1 && return; sleep 0.2; done
}
start
q() { dig +tries=1 +time=2 -p 55363 @127.0.0.1 "$@" >/dev/null 2>&1 || true; }
upd() { # upd KEYFILE-or-none COMMANDS...
  local k=$1; shift
  local a=()
  [ "$k" != none ] && a=(-k "$k")
  { echo "server 127.0.0.1 55363"; printf '%s\n' "$@"; echo send; } |
    timeout 10 nsupdate "${a[@]}" >/dev/null 2>&1 || true
}
grep -A3 'key "upd-key"' "$w/keys.conf" >"$w/upd.key"
names=(www.example.test api.example.test mail.example.test nohost.example.test example.test
  www.signed.test txt.example.test _ldap._tcp.example.test www.sub.test x.sub.test www.broken.test
  host.fwd.test www.gone.test a.dead.test www.debian.org example.com 1.0.0.10.in-addr.arpa)
types=(A AAAA MX TXT SRV NS SOA ANY CNAME)
RANDOM=11
for i in $(seq 1 220); do
  n=${names[$((RANDOM % ${#names[@]}))]}
  t=${types[$((RANDOM % 3))]}
  [ $((i % 7)) = 0 ] && t=${types[$((RANDOM % ${#types[@]}))]}
  q "$n" "$t"
  [ $((i % 9)) = 0 ] && q -b 127.0.0.2 "$n" A
  [ $((i % 11)) = 0 ] && q +dnssec +norec www.signed.test A
  [ $((i % 13)) = 0 ] && q +tcp example.test SOA
  [ $((i % 17)) = 0 ] && q -b 127.0.0.9 www.example.test A
  [ $((i % 10)) = 0 ] && upd "$w/upd.key" "update add h$i.example.test. 300 IN A 10.1.9.$((i % 250))"
  [ $((i % 15)) = 0 ] && upd "$w/upd.key" "update delete h$((i - 5)).example.test. A"
  [ $((i % 19)) = 0 ] && upd "$w/wrong.key" "update add w$i.example.test. 300 IN A 10.1.8.1"
  [ $((i % 23)) = 0 ] && upd none "update add n$i.example.test. 300 IN A 10.1.8.2"
  [ $((i % 29)) = 0 ] && upd "$w/other.key" "update add o$i.example.test. 300 IN A 10.1.8.3"
  [ $((i % 31)) = 0 ] && upd "$w/upd.key" "prereq nxdomain www.example.test." "update add www.example.test. 300 IN A 10.1.8.4"
  [ $((i % 25)) = 0 ] && { { echo "server 127.0.0.1 55364"; echo "update add s$i.sub.test. 300 IN A 10.3.0.$i"; echo send; } | timeout 10 nsupdate -k "$w/upd.key" >/dev/null 2>&1 || true; }
  [ $((i % 20)) = 0 ] && q -b 127.0.0.3 example.test AXFR
  [ $((i % 27)) = 0 ] && q example.test AXFR
  [ $((i % 33)) = 0 ] && q -b 127.0.0.3 signed.test AXFR
  [ $((i % 37)) = 0 ] && q -b 127.0.0.3 sub.test AXFR
  [ $((i % 35)) = 0 ] && q -b 127.0.0.3 example.test IXFR=2026112801
  [ $((i % 40)) = 0 ] && { "${rndc[@]}" reload example.test >/dev/null 2>&1 || true; }
  [ $((i % 45)) = 0 ] && { "${rndc[@]}" flush >/dev/null 2>&1 || true; }
  [ $((i % 50)) = 0 ] && { "${rndc[@]}" refresh sub.test >/dev/null 2>&1 || true; "${rndc[@]}" retransfer gone.test >/dev/null 2>&1 || true; }
  [ $((i % 55)) = 0 ] && { "${rndc[@]}" freeze example.test >/dev/null 2>&1 || true; upd "$w/upd.key" "update add f$i.example.test. 300 IN A 10.1.7.1"; "${rndc[@]}" thaw example.test >/dev/null 2>&1 || true; }
  [ $((i % 60)) = 0 ] && { "${rndc[@]}" reconfig >/dev/null 2>&1 || true; "${rndc[@]}" stats >/dev/null 2>&1 || true; }
  [ $((i % 70)) = 0 ] && { "${rndc[@]}" reload >/dev/null 2>&1 || true; "${rndc[@]}" notify example.test >/dev/null 2>&1 || true; }
  [ $((i % 80)) = 0 ] && { "${rndc[@]}" dumpdb -cache >/dev/null 2>&1 || true; "${rndc[@]}" sign signed.test >/dev/null 2>&1 || true; }
  [ $((i % 90)) = 0 ] && { "${rndc[@]}" reload nosuch.test >/dev/null 2>&1 || true; "${rndc[@]}" zonestatus broken.test >/dev/null 2>&1 || true; }
  [ $((i % 100)) = 0 ] && { printf 'garbage\n' | timeout 2 nc -q 1 127.0.0.1 55363 >/dev/null 2>&1 || true; \
    printf '\x00\x05hello' | timeout 2 nc -u -q 1 127.0.0.1 55363 >/dev/null 2>&1 || true; }
  [ $i = 110 ] && { "${rndc[@]}" stop >/dev/null 2>&1 || true; sleep 2; start; }
  [ $i = 160 ] && { "${rndc[@]}" querylog off >/dev/null 2>&1 || true; q www.example.test A; "${rndc[@]}" querylog on >/dev/null 2>&1 || true; }
  [ $i = 180 ] && { kill -HUP "$(cat "$w/main/named.pid")"; sleep 2; }
done
# a busier stretch of plain queries from three clients
for i in $(seq 1 300); do
  n=${names[$((RANDOM % 9))]}
  q -b 127.0.0.$((i % 3 + 1)) "$n" "${types[$((RANDOM % ${#types[@]}))]}"
done
sleep 3
"${rndc[@]}" stop >/dev/null 2>&1 || true
kill "$(cat "$w/helper/named.pid")" 2>/dev/null || true
sleep 2
mkdir -p "$out/Bind9"
cp "$w/main/named.log" "$out/Bind9/Bind9_raw.log"
rm -rf "$w"
