#!/bin/bash
# Produces Squid/Squid_raw.log: a real Squid 5.7 forward proxy's access log (native `squid`
# format) while curl fetches through it from a local origin (squid_origin.py): cache misses,
# hits, revalidations, negative hits, purges, every method, denied domains, paths, clients and
# ports, proxy authentication, a dead origin port, a dead parent, an unknown name, timeouts,
# aborts, TLS tunnels, cache-manager pages; a reconfigure, a log rotation and a restart.
# Usage: squid.sh OUTDIR   (root; proxy on 127.0.0.1:3129, origin on 8089, TLS on 8443)
set -eu
out=$1
here=$(cd "$(dirname "$0")" && pwd)
w=$(mktemp -d /tmp/unseen-squid.XXXXXX)
chmod 755 "$w"
cat >"$w/hosts" <<C
127.0.0.1 localhost www.shop.test static.cdn.test api.internal.test members.test ads.test tracker.test partner.test
C
htpasswd -bc "$w/passwd" alice pw-alice >/dev/null 2>&1
htpasswd -b "$w/passwd" bob pw-bob >/dev/null 2>&1
cat >"$w/squid.conf" <<C
http_port 127.0.0.1:3129
pid_filename $w/squid.pid
cache_effective_user proxy
cache_dir ufs $w/cache 50 4 16
cache_mem 4 MB
maximum_object_size 1 MB
access_log stdio:$w/access.log squid
cache_log $w/cache.log
cache_store_log none
logfile_rotate 0
coredump_dir $w
hosts_file $w/hosts
dns_nameservers 127.0.0.1
dns_timeout 2 seconds
read_timeout 2 seconds
connect_timeout 3 seconds
negative_ttl 20 seconds
shutdown_lifetime 1 seconds
auth_param basic program /usr/lib/squid/basic_ncsa_auth $w/passwd
auth_param basic realm proxy
acl authed proxy_auth REQUIRED
acl members dstdomain .members.test
acl blocked dstdomain .ads.test .tracker.test
acl internal urlpath_regex ^/internal/
acl SSL_ports port 443 8443 8444
acl Safe_ports port 80 443 1025-65535
acl purge method PURGE
acl office src 127.0.0.1 127.0.0.3
acl partner dstdomain .partner.test
http_access allow localhost manager
http_access deny manager
http_access allow purge localhost
http_access deny purge
http_access deny !Safe_ports
http_access deny CONNECT !SSL_ports
http_access deny blocked
http_access deny internal
http_access deny members !authed
http_access allow office
http_access deny all
cache_peer 127.0.0.1 parent 3999 0 no-query no-digest name=partnerproxy
cache_peer_access partnerproxy allow partner
cache_peer_access partnerproxy deny all
never_direct allow partner
refresh_pattern . 0 20% 4320
C
mkdir -p "$w/cache"
touch "$w/access.log" "$w/cache.log"
chown -R proxy "$w"
python3 "$here/squid_origin.py" 8089 &
origin=$!
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=www.shop.test \
  -keyout "$w/tls.key" -out "$w/tls.crt" 2>/dev/null
openssl s_server -quiet -accept 8443 -cert "$w/tls.crt" -key "$w/tls.key" -www >/dev/null 2>&1 &
tls=$!
squid -f "$w/squid.conf" -z >/dev/null 2>&1
sleep 2
squid -f "$w/squid.conf"
sleep 3

c() { timeout 15 curl -s -o /dev/null -x http://127.0.0.1:3129 "$@" </dev/null || true; }
o=http://www.shop.test:8089
files=(site.css app.js theme.css print.css reset.css)
for i in $(seq 1 140); do
  f=${files[$((i % 5))]}
  c "$o/static/$f"
  c "http://static.cdn.test:8089/img/logo$((i % 4)).png"
  c "$o/static/$f"
  c -H "Cache-Control: no-cache" "$o/static/${files[$((i % 3))]}"
  c -z "Wed, 25 Nov 2026 10:00:00 GMT" "$o/static/site.css"
  c "http://api.internal.test:8089/api/items?page=$i"
  c -X POST -d "{\"n\":$i}" "http://api.internal.test:8089/api/items"
  [ $((i % 2)) = 0 ] && c -X PUT -d "{\"n\":$i}" "http://api.internal.test:8089/api/items/$i"
  [ $((i % 3)) = 0 ] && c -X DELETE "http://api.internal.test:8089/api/items/$i"
  [ $((i % 4)) = 0 ] && c -I "$o/static/$f"
  [ $((i % 5)) = 0 ] && c -X OPTIONS "http://api.internal.test:8089/api/items"
  c "$o/missing/page$((i % 6)).html"
  [ $((i % 3)) = 1 ] && c "$o/old/style$((i % 4)).css"
  [ $((i % 3)) = 2 ] && c "$o/login?next=/cart"
  [ $((i % 4)) = 1 ] && c "$o/private/report$i"
  [ $((i % 4)) = 2 ] && c "$o/admin/users"
  [ $((i % 5)) = 1 ] && c "$o/crash?id=$i"
  [ $((i % 5)) = 3 ] && c "$o/busy"
  [ $((i % 6)) = 0 ] && c "http://ads.test:8089/banner$((i % 3)).js"
  [ $((i % 6)) = 3 ] && c "http://tracker.test:8089/pixel.gif?u=$i"
  [ $((i % 7)) = 0 ] && c "$o/internal/metrics"
  [ $((i % 6)) = 1 ] && c "http://members.test:8089/static/members.css"
  [ $((i % 6)) = 4 ] && c -U "alice:pw-alice" "http://members.test:8089/static/members.css"
  [ $((i % 8)) = 5 ] && c -U "bob:wrong" "http://members.test:8089/static/offers.css"
  [ $((i % 5)) = 4 ] && c "http://www.shop.test:8099/closed"
  [ $((i % 7)) = 3 ] && c "http://partner.test:8089/feed.xml"
  [ $((i % 9)) = 2 ] && c "http://nowhere$((i % 3)).invalid/"
  [ $((i % 8)) = 1 ] && c "$o/slow"
  [ $((i % 8)) = 6 ] && c --max-time 1 "$o/slow?abort=$i"
  [ $((i % 9)) = 5 ] && c "$o/reset"
  [ $((i % 6)) = 2 ] && c "$o/big/archive$((i % 2)).bin"
  [ $((i % 5)) = 2 ] && c -k "https://www.shop.test:8443/"
  [ $((i % 9)) = 8 ] && c -k "https://www.shop.test:8444/"
  [ $((i % 10)) = 7 ] && c -k "https://www.shop.test:8089/"
  [ $((i % 7)) = 5 ] && c "http://www.shop.test:25/"
  [ $((i % 4)) = 3 ] && c --interface 127.0.0.2 "$o/static/$f"
  [ $((i % 8)) = 7 ] && c -X PURGE "$o/static/$f"
  [ $((i % 10)) = 3 ] && c --interface 127.0.0.2 -X PURGE "$o/static/site.css"
  [ $((i % 10)) = 9 ] && { timeout 5 curl -s -o /dev/null "http://127.0.0.1:3129/squid-internal-mgr/$(echo info menu counters | cut -d' ' -f$((i / 10 % 3 + 1)))" || true; }
  [ $((i % 12)) = 4 ] && { printf 'HELLO\r\n\r\n' | timeout 3 nc -q 1 127.0.0.1 3129 >/dev/null 2>&1 || true; }
  [ "$i" = 40 ] && squid -f "$w/squid.conf" -k reconfigure
  [ "$i" = 70 ] && squid -f "$w/squid.conf" -k rotate
  [ "$i" = 100 ] && { squid -f "$w/squid.conf" -k shutdown; sleep 4; squid -f "$w/squid.conf"; sleep 3; }
  true
done
squid -f "$w/squid.conf" -k shutdown
sleep 4
kill "$origin" "$tls"
mkdir -p "$out/Squid"
cp "$w/access.log" "$out/Squid/Squid_raw.log"
rm -rf "$w"
