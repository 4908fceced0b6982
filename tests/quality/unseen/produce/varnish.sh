#!/bin/bash
# Produces Varnish/Varnish_raw.log: a real Varnish Cache's shared-memory log as `varnishlog`
# prints it by default (transactions grouped by vxid: a `*   << Request  >>` line, then one
# `-   Tag  value` line per record) while curl and nc go through it to two Python origins (one
# with a health probe, killed and restarted; one slow; one dead): misses, hits, passes,
# grace, purges, bans, pipes, synthetic 403/405/200 answers, backend 404/500/503s, first-byte
# timeouts, too large and malformed requests; varnishadm loads and switches VCLs (one that
# does not compile), sets a backend sick and healthy, and bans.
# Usage: varnish.sh OUTDIR   (127.0.0.1:6481, admin :6482, origins :8590-8592, dead :8599)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-varnish.XXXXXX)
chmod 755 "$w"
cat >"$w/origin.py" <<'P'
import http.server, sys, time
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def reply(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n: self.rfile.read(n)
        p = self.path
        if p.startswith("/slow"): time.sleep(3)
        code = 500 if "fail" in p else 404 if "missing" in p else 503 if "busy" in p else 200
        body = (b"x" * (200000 if "big" in p else 300)) if self.command != "HEAD" else b""
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Cache-Control", "no-store" if "private" in p else "max-age=%d" % (3 if "short" in p else 60))
        if "cookie" in p: self.send_header("Set-Cookie", "sid=%d" % time.time_ns())
        self.send_header("Content-Length", str(300 if self.command == "HEAD" else len(body)))
        self.end_headers(); self.wfile.write(body)
    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = reply
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
P
vcl() {
  cat >"$w/$1.vcl" <<V
vcl 4.1;
import std;
probe p { .url = "/health"; .interval = 2s; .timeout = 1s; .window = 3; .threshold = 2; }
backend app { .host = "127.0.0.1"; .port = "8590"; .probe = p; }
backend slow { .host = "127.0.0.1"; .port = "8591"; .first_byte_timeout = 1s; }
backend dead { .host = "127.0.0.1"; .port = "8599"; .connect_timeout = 1s; }
sub vcl_recv {
  if (req.method == "PURGE") { return (purge); }
  if (req.method == "BAN") { ban("req.url ~ " + req.url); return (synth(200, "Banned")); }
  if (req.url ~ "^/admin") { return (synth(403, "Forbidden")); }
  if (req.method == "TRACE") { return (synth(405, "Method not allowed")); }
  if (req.url ~ "^/slow") { set req.backend_hint = slow; }
  if (req.url ~ "^/dead") { set req.backend_hint = dead; }
  if (req.url ~ "^/pipe") { return (pipe); }
  if (req.url ~ "^/nocache" || req.http.Authorization) { return (pass); }
  std.log("$1 recv " + req.url);
}
sub vcl_backend_response {
  if (beresp.status >= 500) { set beresp.uncacheable = true; set beresp.ttl = 10s; return (deliver); }
  set beresp.grace = 30s;
}
sub vcl_deliver { set resp.http.X-Cache = obj.hits; }
$2
V
}
vcl boot ""
python3 "$w/origin.py" 8590 & o1=$!
python3 "$w/origin.py" 8591 & o2=$!
echo "s3cr3t" >"$w/secret"
varnishd -n "$w/n" -a 127.0.0.1:6481 -T 127.0.0.1:6482 -S "$w/secret" -f "$w/boot.vcl" \
  -P "$w/varnishd.pid" -s malloc,16m -p http_req_size=4096 -p http_resp_hdr_len=4096 -p timeout_idle=3
sleep 2
varnishlog -n "$w/n" >"$w/varnish.log" 2>&1 & vl=$!
adm() { varnishadm -T 127.0.0.1:6482 -S "$w/secret" "$@" >/dev/null 2>&1 || true; }
B=http://127.0.0.1:6481
c() { curl -s -o /dev/null -m 5 "$@" || true; }
RANDOM=14
for i in $(seq 1 30); do
  c "$B/page/$((RANDOM % 5))"
  c "$B/page/$((RANDOM % 5))"
  c -I "$B/page/1"
  c "$B/short/$((RANDOM % 3))"
  c "$B/private/$RANDOM"
  c "$B/cookie/$((RANDOM % 3))"
  c "$B/missing/$RANDOM"
  c "$B/fail/$((RANDOM % 3))"
  c "$B/busy/1"
  c "$B/nocache/$RANDOM"
  c -u alice:pw "$B/page/2"
  c -X POST -d "a=$i" "$B/form"
  c -X PUT -d "b=$i" "$B/item/$i"
  c -X DELETE "$B/item/$i"
  c -X PURGE "$B/page/$((RANDOM % 5))"
  c -X TRACE "$B/"
  c "$B/admin/users"
  c "$B/pipe/$i"
  [ $((i % 3)) = 0 ] && c "$B/big/$((RANDOM % 4))"
  [ $((i % 4)) = 1 ] && c "$B/dead/$i"
  [ $((i % 5)) = 2 ] && c "$B/slow/$i"
  [ $((i % 6)) = 3 ] && c -X BAN "$B/page/"
  [ $((i % 7)) = 4 ] && { printf 'GARBAGE\r\n\r\n' | nc -w 1 127.0.0.1 6481 >/dev/null || true; }
  [ $((i % 7)) = 5 ] && c -H "X-Long: $(head -c 5000 /dev/zero | tr '\0' a)" "$B/page/1"
  [ $((i % 9)) = 6 ] && { printf 'GET / HTTP/1.1\r\nHost: x\r\n' | nc -w 4 127.0.0.1 6481 >/dev/null || true; }
  case $((i % 10)) in
    2) adm ban req.url '~' /short ;;
    4) kill $o1; sleep 5; c "$B/page/9"; c "$B/fresh/$i"; python3 "$w/origin.py" 8590 & o1=$! ;;
    6) vcl v$i 'sub vcl_hash { hash_data(req.http.X-Variant); }'
       adm vcl.load v$i "$w/v$i.vcl"; adm vcl.use v$i ;;
    7) printf 'vcl 4.1;\nsub vcl_recv { nonsense; }\n' >"$w/bad.vcl"; adm vcl.load bad$i "$w/bad.vcl" ;;
    8) adm backend.set_health app sick; c "$B/fresh/$i"; adm backend.set_health app auto; adm backend.list ;;
  esac
  sleep 0.3
done
sleep 2
kill $vl || true
adm stop
kill $o1 $o2 || true
kill "$(cat "$w/varnishd.pid")" 2>/dev/null || true; sleep 1
mkdir -p "$out/Varnish"
cp "$w/varnish.log" "$out/Varnish/Varnish_raw.log"
rm -rf "$w"
