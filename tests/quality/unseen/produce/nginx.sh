#!/bin/bash
# Produces Nginx/Nginx_raw.log (access log, combined format) and NginxError/NginxError_raw.log
# (error log at level info) from a real nginx driven by curl with varied methods, paths,
# statuses and clients. Usage: nginx.sh OUTDIR   (root; listens on 127.0.0.1:58080)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-nginx.XXXXXX)
mkdir -p "$w/logs" "$w/html/static" "$w/html/private" "$w/html/docs" "$w/tmp"
for i in $(seq 1 30); do echo "page $i" >"$w/html/static/page$i.html"; done
head -c 200000 /dev/urandom >"$w/html/static/big.bin"
echo hello >"$w/html/index.html"
echo secret >"$w/html/private/key.txt"; chmod 000 "$w/html/private/key.txt"
chmod 755 "$w" "$w/html" "$w/html/static" "$w/html/docs"
cat >"$w/nginx.conf" <<CONF
worker_processes 2;
pid $w/nginx.pid;
error_log $w/logs/error.log info;
events { worker_connections 64; }
http {
  access_log $w/logs/access.log combined;
  client_body_temp_path $w/tmp/body; proxy_temp_path $w/tmp/proxy;
  fastcgi_temp_path $w/tmp/fcgi; uwsgi_temp_path $w/tmp/uwsgi; scgi_temp_path $w/tmp/scgi;
  client_max_body_size 1k;
  limit_req_zone \$binary_remote_addr zone=one:1m rate=5r/s;
  server {
    listen 127.0.0.1:58080;
    root $w/html;
    location /api/ { proxy_pass http://127.0.0.1:58081; proxy_connect_timeout 1s; }
    location /slow/ { proxy_pass http://10.255.255.1:80; proxy_connect_timeout 200ms; }
    location /limited/ { limit_req zone=one burst=1 nodelay; return 200 "ok\n"; }
    location /boom { return 500; }
    location /gone { return 410; }
    location /old { return 301 /static/page1.html; }
    location /teapot { return 418; }
    location /unavail { return 503; }
  }
}
CONF
nginx -c "$w/nginx.conf" -p "$w"
u=http://127.0.0.1:58080
agents=("curl/7.88.1" "Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0"
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
  "python-requests/2.28.1" "Wget/1.21.3" "Go-http-client/1.1" "kube-probe/1.28" "-")
c() { curl -s -o /dev/null --max-time 3 -A "${agents[$((RANDOM % ${#agents[@]}))]}" "$@" || true; }
RANDOM=42
for i in $(seq 1 140); do
  p=$((i % 30 + 1))
  c "$u/static/page$p.html"
  c "$u/static/page$p.html?ref=mail&id=$i"
  c -e "http://example.com/from/$i" "$u/"
  c "$u/static/missing$i.html"
  c -X DELETE "$u/static/page$p.html"
  c -X PUT --data "x=$i" "$u/static/page$p.html"
  c -X POST --data "a=$i" "$u/static/page$p.html"
  c -I "$u/static/page$p.html"
  c -X OPTIONS "$u/static/"
  c -H "If-Modified-Since: $(date -u -R)" "$u/static/page$p.html"
  c -r 0-99 "$u/static/big.bin"
  [ $((i % 3)) = 0 ] && c -r 999999-1000000 "$u/static/big.bin"
  [ $((i % 2)) = 0 ] && c "$u/private/key.txt"
  [ $((i % 2)) = 0 ] && c "$u/docs/"
  [ $((i % 3)) = 0 ] && c "$u/static"
  [ $((i % 2)) = 0 ] && c "$u/api/v1/users/$i"
  [ $((i % 4)) = 0 ] && c -X PATCH --data '{}' "$u/api/v1/orders/$i"
  [ $((i % 5)) = 0 ] && c "$u/slow/report?n=$i"
  [ $((i % 2)) = 0 ] && c "$u/boom"
  [ $((i % 6)) = 0 ] && c "$u/gone/item$i"
  [ $((i % 3)) = 0 ] && c "$u/old"
  [ $((i % 9)) = 0 ] && c "$u/teapot"
  [ $((i % 4)) = 0 ] && c "$u/unavail"
  [ $((i % 3)) = 0 ] && c -X POST --data "$(head -c 3000 /dev/zero | tr '\0' a)" "$u/upload"
  [ $((i % 7)) = 0 ] && c "$u/../../etc/passwd"
  [ $((i % 5)) = 0 ] && printf 'BOGUS\r\n\r\n' | timeout 2 nc -q 1 127.0.0.1 58080 >/dev/null 2>&1 || true
  [ $((i % 10)) = 0 ] && for k in 1 2 3 4; do c "$u/limited/x$k"; done
done
sleep 1
nginx -c "$w/nginx.conf" -p "$w" -s quit
sleep 1
mkdir -p "$out/Nginx" "$out/NginxError"
cp "$w/logs/access.log" "$out/Nginx/Nginx_raw.log"
cp "$w/logs/error.log" "$out/NginxError/NginxError_raw.log"
rm -rf "$w"
