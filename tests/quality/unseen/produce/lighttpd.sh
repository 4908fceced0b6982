#!/bin/bash
# Produces Lighttpd/Lighttpd_raw.log: a real lighttpd 1.4 error log (`server.errorlog`, with
# missing files, timeouts and the request headers of failed requests logged) while curl and nc
# fetch static and missing files, a directory listing, CGI scripts that work, fail, print bad
# headers, write to stderr or hang, basic-auth areas with good, wrong and unknown users, denied
# paths, proxied routes to a backend that is up, gone or slow, oversized and malformed requests,
# partial requests that time out, with request handling logged; graceful restarts (SIGUSR1), log reopening (SIGHUP) and a stop.
# Usage: lighttpd.sh OUTDIR   (127.0.0.1:58080; the proxied backend on 58081)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-lighttpd.XXXXXX)
chmod 755 "$w"
mkdir -p "$w/www/files" "$w/www/cgi-bin" "$w/www/private" "$w/www/admin" "$w/www/listing" "$w/backend"
head -c 100000 /dev/zero >"$w/big.bin"
for i in $(seq 1 8); do head -c $((i * 700)) /dev/urandom >"$w/www/files/blob$i.bin"; echo "page $i" >"$w/www/files/page$i.html"; done
echo secret >"$w/www/private/index.html"
echo admin >"$w/www/admin/index.html"
echo unreadable >"$w/www/files/locked.html"; chmod 000 "$w/www/files/locked.html"
touch "$w/www/listing/a.txt" "$w/www/listing/b.txt"
cat >"$w/www/cgi-bin/ok.sh" <<'S'
#!/bin/sh
printf 'Content-Type: text/plain\r\n\r\nhello %s\n' "$QUERY_STRING"
S
cat >"$w/www/cgi-bin/fail.sh" <<'S'
#!/bin/sh
echo "fail.sh: cannot open database /var/lib/app/db.sqlite" >&2
exit 3
S
cat >"$w/www/cgi-bin/badhdr.sh" <<'S'
#!/bin/sh
echo "this is not a header"
S
cat >"$w/www/cgi-bin/warn.sh" <<'S'
#!/bin/sh
echo "warn.sh: slow query took 1.2s for id=$QUERY_STRING" >&2
printf 'Status: 503 Busy\r\nContent-Type: text/plain\r\n\r\nbusy\n'
S
cat >"$w/www/cgi-bin/hang.sh" <<'S'
#!/bin/sh
sleep 20
S
chmod 755 "$w"/www/cgi-bin/*.sh
printf 'alice:pw-alice\nbob:pw-bob\n' >"$w/users"
chmod 644 "$w/users"
cat >"$w/lighttpd.conf" <<C
server.modules = ("mod_access", "mod_auth", "mod_authn_file", "mod_cgi", "mod_proxy", "mod_dirlisting", "mod_status")
server.document-root = "$w/www"
server.bind = "127.0.0.1"
server.port = 58080
server.errorlog = "$w/error.log"
server.breakagelog = "$w/error.log"
server.pid-file = "$w/lighttpd.pid"
server.max-request-size = 64
server.max-read-idle = 3
server.max-write-idle = 5
server.max-keep-alive-idle = 2
debug.log-file-not-found = "enable"
debug.log-timeouts = "enable"
debug.log-request-handling = "enable"
debug.log-request-header-on-error = "enable"
index-file.names = ("index.html")
mimetype.assign = (".html" => "text/html", ".bin" => "application/octet-stream", ".txt" => "text/plain")
cgi.assign = (".sh" => "/bin/sh")
cgi.limits = ("read-timeout" => 4)
url.access-deny = ("~", ".inc", ".bak")
\$HTTP["url"] =~ "^/listing/" { dir-listing.activate = "enable" }
\$HTTP["url"] =~ "^/private/" {
  auth.backend = "plain"
  auth.backend.plain.userfile = "$w/users"
  auth.require = ("/private/" => ("method" => "basic", "realm" => "private", "require" => "valid-user"))
}
\$HTTP["url"] =~ "^/admin/" {
  auth.backend = "plain"
  auth.backend.plain.userfile = "$w/users"
  auth.require = ("/admin/" => ("method" => "basic", "realm" => "admin", "require" => "user=alice"))
}
\$HTTP["url"] =~ "^/api/" { proxy.server = ("" => (("host" => "127.0.0.1", "port" => 58081))) }
\$HTTP["url"] =~ "^/dead/" { proxy.server = ("" => (("host" => "127.0.0.1", "port" => 58089))) }
\$HTTP["url"] =~ "^/server-status" { status.status-url = "/server-status" }
C
cat >"$w/backend.py" <<'P'
import http.server, time
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if "slow" in self.path:
            time.sleep(8)
        if "close" in self.path:
            self.wfile.write(b"garbage\r\n")
            return
        code = 500 if "err" in self.path else 200
        self.send_response(code); self.send_header("Content-Length", "3"); self.end_headers()
        self.wfile.write(b"ok\n")
    do_POST = do_GET
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", 58081), H).serve_forever()
P
backend_up() { python3 "$w/backend.py" & be=$!; sleep 0.5; }
start() { lighttpd -f "$w/lighttpd.conf"; sleep 0.5; }
U=http://127.0.0.1:58080
c() { timeout 12 curl -s -o /dev/null --max-time 10 "$@" || true; }
raw() { printf "$1" | timeout 6 nc -q 2 127.0.0.1 58080 >/dev/null 2>&1 || true; }
backend_up
start
for i in $(seq 1 60); do
  c "$U/files/page$((i % 8 + 1)).html"
  c "$U/files/missing$((i % 9)).html"
  [ $((i % 2)) = 0 ] && c "$U/files/blob$((i % 8 + 1)).bin" -r 0-99
  [ $((i % 3)) = 0 ] && c "$U/nope/dir$i/"
  [ $((i % 3)) = 1 ] && c "$U/cgi-bin/ok.sh?id=$i"
  [ $((i % 4)) = 1 ] && c "$U/cgi-bin/fail.sh"
  [ $((i % 5)) = 2 ] && c "$U/cgi-bin/badhdr.sh"
  [ $((i % 4)) = 2 ] && c "$U/cgi-bin/warn.sh?$i"
  [ $((i % 9)) = 3 ] && c "$U/cgi-bin/hang.sh"
  [ $((i % 6)) = 3 ] && c "$U/cgi-bin/missing.sh"
  [ $((i % 3)) = 2 ] && c -u alice:pw-alice "$U/private/"
  [ $((i % 4)) = 3 ] && c -u alice:wrong$i "$U/private/"
  [ $((i % 5)) = 1 ] && c -u "mallory$((i % 3)):x" "$U/private/"
  [ $((i % 5)) = 3 ] && c -u bob:pw-bob "$U/admin/"
  [ $((i % 6)) = 4 ] && c "$U/admin/"
  [ $((i % 5)) = 4 ] && c "$U/files/page1.html.bak"
  [ $((i % 7)) = 0 ] && c "$U/files/locked.html"
  [ $((i % 4)) = 0 ] && c "$U/listing/"
  [ $((i % 2)) = 1 ] && c "$U/api/items/$i"
  [ $((i % 5)) = 0 ] && c "$U/api/err/$i"
  [ $((i % 11)) = 5 ] && c "$U/api/close/$i"
  [ $((i % 13)) = 6 ] && c "$U/api/slow/$i" --max-time 3
  [ $((i % 3)) = 0 ] && c "$U/dead/thing$i"
  [ $((i % 6)) = 5 ] && c -X POST --data-binary "@$w/www/files/blob2.bin" "$U/cgi-bin/ok.sh"
  [ $((i % 10)) = 7 ] && c -X POST --data-binary "@$w/big.bin" "$U/cgi-bin/ok.sh"
  [ $((i % 9)) = 1 ] && { (printf 'GET /files/page3.html HTTP/1.1\r\nHost: x\r\n'; sleep 5) | timeout 7 nc 127.0.0.1 58080 >/dev/null 2>&1 & }
  [ $((i % 7)) = 2 ] && c -X DELETE "$U/files/page2.html"
  [ $((i % 8)) = 1 ] && c "$U/server-status?auto"
  [ $((i % 6)) = 0 ] && raw 'GET /files/page1.html HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n'
  [ $((i % 6)) = 1 ] && raw 'GARBAGE\r\n\r\n'
  [ $((i % 6)) = 2 ] && raw 'GET /%%zz%%00 HTTP/1.1\r\nHost: x\r\n\r\n'
  [ $((i % 7)) = 5 ] && raw 'GET /files/page1.html HTTP/1.1\r\n'
  [ $((i % 8)) = 3 ] && raw 'POST /cgi-bin/ok.sh HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc'
  [ $((i % 9)) = 7 ] && raw 'GET /files/page1.html HTTP/9.9\r\nHost: x\r\n\r\n'
  [ $((i % 10)) = 8 ] && raw 'GET /files/page1.html HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n'
  [ $((i % 10)) = 4 ] && raw 'GET /../../etc/passwd HTTP/1.0\r\n\r\n'
  [ $((i % 12)) = 9 ] && raw 'GET /files/page1.html HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n'
  [ $i = 15 ] && { kill "$be"; wait "$be" 2>/dev/null || true; }
  [ $i = 24 ] && backend_up
  [ $i = 30 ] && { kill -HUP "$(cat "$w/lighttpd.pid")"; sleep 0.5; }
  [ $i = 38 ] && { kill -USR1 "$(cat "$w/lighttpd.pid")"; sleep 1.5; nc -z 127.0.0.1 58080 || start; }
  sleep 0.1
done
kill -INT "$(cat "$w/lighttpd.pid")"; sleep 1
start
for i in $(seq 1 10); do c "$U/files/page$i.html"; c "$U/cgi-bin/fail.sh"; c "$U/dead/x$i"; done
kill -TERM "$(cat "$w/lighttpd.pid")"; sleep 1
kill "$be" 2>/dev/null || true
wait || true
mkdir -p "$out/Lighttpd"
cp "$w/error.log" "$out/Lighttpd/Lighttpd_raw.log"
rm -rf "$w"
