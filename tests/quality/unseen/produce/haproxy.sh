#!/bin/bash
# Produces HAProxy/HAProxy_raw.log: a real HAProxy 2.6 load balancer (HTTP log and TCP log
# formats, health-check logging) sending syslog over UDP to a real rsyslogd (traditional file
# format), while curl and nc send it traffic for three backends (one origin that dies and comes
# back, one never up, one without checks), denied and answered requests, slow and aborted
# ones, garbage, servers put in maintenance over the admin socket, a reload and a stop.
# Usage: haproxy.sh OUTDIR   (root; HAProxy on 127.0.0.1:8180-8181, rsyslogd on udp 5514,
# origins (squid_origin.py) on 8089-8090)
set -eu
out=$1
here=$(cd "$(dirname "$0")" && pwd)
w=$(mktemp -d /tmp/unseen-haproxy.XXXXXX)
cat >"$w/rsyslog.conf" <<C
module(load="imudp")
input(type="imudp" address="127.0.0.1" port="5514")
global(workDirectory="$w")
local0.* action(type="omfile" file="$w/haproxy.log" template="RSYSLOG_TraditionalFileFormat")
C
rsyslogd -f "$w/rsyslog.conf" -i "$w/rsyslog.pid"
cat >"$w/haproxy.cfg" <<C
global
  log 127.0.0.1:5514 local0 info
  pidfile $w/haproxy.pid
  stats socket $w/admin.sock mode 600 level admin
  daemon
defaults
  log global
  mode http
  option httplog
  option log-health-checks
  timeout connect 2s
  timeout client 4s
  timeout server 3s
  timeout http-request 3s
  retries 1
frontend web
  bind 127.0.0.1:8180
  http-request deny if { path_beg /admin }
  http-request deny deny_status 429 if { path_beg /flood }
  http-request return status 200 content-type text/plain string pong if { path /ping }
  http-request redirect location /static/home.css code 301 if { path /home }
  use_backend api if { path_beg /api }
  use_backend legacy if { path_beg /legacy }
  default_backend app
backend app
  balance roundrobin
  option httpchk GET /static/health.css
  server app1 127.0.0.1:8089 check inter 1s fall 2 rise 2
  server app2 127.0.0.1:8090 check inter 1s fall 2 rise 2
backend api
  option httpchk GET /api/health
  server api1 127.0.0.1:8091 check inter 3s
backend legacy
  server old1 127.0.0.1:8092
frontend rawtcp
  mode tcp
  option tcplog
  bind 127.0.0.1:8181
  default_backend tcpback
backend tcpback
  mode tcp
  server t1 127.0.0.1:8089
  server t2 127.0.0.1:8093
C
python3 "$here/squid_origin.py" 8089 2>/dev/null &
o1=$!
python3 "$here/squid_origin.py" 8090 2>/dev/null &
o2=$!
sleep 1
haproxy -f "$w/haproxy.cfg"
sleep 3

c() { timeout 10 curl -s -o /dev/null "$@" </dev/null || true; }
h=http://127.0.0.1:8180
adm() { echo "$1" | socat - "UNIX-CONNECT:$w/admin.sock" >/dev/null 2>&1 || true; }
files=(site.css app.js theme.css print.css)
for i in $(seq 1 110); do
  c "$h/static/${files[$((i % 4))]}"
  c "$h/img/logo$((i % 3)).png"
  c "$h/api/items?page=$i"
  c -X POST -d "{\"n\":$i}" "$h/static/form$((i % 2))"
  [ $((i % 2)) = 0 ] && c "$h/missing/page$((i % 5)).html"
  [ $((i % 3)) = 0 ] && c -X PUT -d x "$h/api/items/$i"
  [ $((i % 3)) = 1 ] && c -X DELETE "$h/static/item$i"
  [ $((i % 4)) = 0 ] && c -I "$h/static/site.css"
  [ $((i % 4)) = 1 ] && c "$h/admin/users"
  [ $((i % 4)) = 2 ] && c "$h/ping"
  [ $((i % 5)) = 0 ] && c "$h/crash?id=$i"
  [ $((i % 5)) = 1 ] && c "$h/legacy/report$i"
  [ $((i % 5)) = 2 ] && c "$h/home"
  [ $((i % 5)) = 3 ] && c "$h/private/doc$i"
  [ $((i % 6)) = 4 ] && c "$h/flood/$i"
  [ $((i % 7)) = 2 ] && c "$h/slow"
  [ $((i % 7)) = 5 ] && c --max-time 1 "$h/slow?abort"
  [ $((i % 8)) = 3 ] && c "$h/busy"
  [ $((i % 6)) = 1 ] && c "$h/big/file$((i % 2)).bin"
  [ $((i % 3)) = 2 ] && { printf 'GET /static/site.css HTTP/1.0\r\n\r\n' | timeout 3 nc -q 1 127.0.0.1 8181 >/dev/null 2>&1 || true; }
  [ $((i % 9)) = 4 ] && { printf 'HELLO\r\n\r\n' | timeout 3 nc -q 1 127.0.0.1 8180 >/dev/null 2>&1 || true; }
  [ $((i % 11)) = 6 ] && { printf 'GET / HTTP/1.1\r\nHost: x\r\n' | timeout 5 nc -q 4 127.0.0.1 8180 >/dev/null 2>&1 || true; }
  [ $((i % 10)) = 7 ] && { timeout 2 nc 127.0.0.1 8180 </dev/null >/dev/null 2>&1 || true; }
  case $i in
    20|70) kill "$o2"; sleep 4 ;;
    35|85) python3 "$here/squid_origin.py" 8090 2>/dev/null & o2=$!; sleep 4 ;;
    45) adm "disable server app/app1"; sleep 1 ;;
    50) adm "enable server app/app1"; sleep 3 ;;
    55) adm "set server app/app2 state drain"; sleep 1 ;;
    58) adm "set server app/app2 state ready"; sleep 1 ;;
    60) haproxy -f "$w/haproxy.cfg" -sf "$(cat "$w/haproxy.pid")"; sleep 3 ;;
    95) adm "set server app/app1 weight 0"; sleep 1 ;;
    100) adm "set server app/app1 weight 1"; sleep 1 ;;
  esac
done
kill "$(cat "$w/haproxy.pid")"
sleep 2
kill "$o1" "$o2" 2>/dev/null || true
kill "$(cat "$w/rsyslog.pid")"
sleep 1
mkdir -p "$out/HAProxy"
cp "$w/haproxy.log" "$out/HAProxy/HAProxy_raw.log"
rm -rf "$w"
