#!/bin/bash
# Produces Caddy/Caddy_raw.log: a real Caddy web server's log (JSON lines of zap on stderr:
# the server's own messages at DEBUG and the access log of its sites in one stream, as a
# container's log holds it) while curl and nc drive a file server (listings, ranges, gzip,
# missing and hidden files), basic auth, rewrites, redirects, static responses of many
# statuses, a too-large body, a reverse proxy to two Python origins with active health checks
# (one killed and restarted), to a closed port and to a FastCGI socket that is not there, an
# HTTPS site with Caddy's internal CA (handshakes that fail), garbage requests; config
# reloads (one broken) through the admin API and a stop.
# Usage: caddy.sh OUTDIR   (127.0.0.1:8481 / :8482 / :8443 / :8490-8491, admin :2419)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-caddy.XXXXXX)
export HOME=$w XDG_DATA_HOME=$w/data XDG_CONFIG_HOME=$w/config
mkdir -p "$w/site/docs" "$w/site/private" "$w/site/.git"
echo "<h1>home</h1>" >"$w/site/index.html"
for i in $(seq 1 8); do head -c $((i * 3000)) /dev/urandom | base64 >"$w/site/docs/doc$i.txt"; done
echo secret >"$w/site/private/data.txt"
echo '[core]' >"$w/site/.git/config"
pw=$(caddy hash-password --plaintext alicepw)
conf() {
  cat >"$w/Caddyfile" <<C
{
	debug
	admin 127.0.0.1:2419
	auto_https disable_redirects
	skip_install_trust
	storage file_system $w/storage
	log {
		output stderr
		format json
		level DEBUG
	}
	servers {
		timeouts {
			read_header 3s
			idle 5s
		}
	}
}
http://127.0.0.1:8481 {
	log {
		output stderr
		format json
	}
	root * $w/site
	encode gzip
	basicauth /private/* {
		alice $pw
	}
	@hidden path /.git/*
	respond @hidden 404
	redir /old /docs/ 301
	redir /moved /index.html 302
	rewrite /latest /docs/doc8.txt
	respond /teapot "short and stout" 418
	respond /gone 410
	respond /boom 500
	respond /busy 503
	request_body /upload {
		max_size 2KB
	}
	reverse_proxy /upload 127.0.0.1:8490
	reverse_proxy /api/* 127.0.0.1:8490 127.0.0.1:8491 {
		lb_policy round_robin
		health_uri /health
		health_interval 2s
		health_timeout 1s
		fail_duration 5s
	}
	reverse_proxy /dead/* 127.0.0.1:8499
	php_fastcgi /php/* unix/$w/php.sock
	file_server /docs/* browse
	file_server
	$1
}
https://localhost:8443 {
	tls internal
	log {
		output stderr
		format json
	}
	respond "secure ok" 200
}
C
}
conf ""
cat >"$w/origin.py" <<'P'
import http.server, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def reply(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        if self.path.startswith("/api/slow"):
            time.sleep(2)
        code = 500 if "fail" in self.path else 404 if "missing" in self.path else 200
        out = b'{"ok":%d,"got":%d}' % (code == 200, len(body))
        self.send_response(code); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out))); self.end_headers(); self.wfile.write(out)
    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = reply
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
P
python3 "$w/origin.py" 8490 & o1=$!
python3 "$w/origin.py" 8491 & o2=$!
caddy run --config "$w/Caddyfile" --adapter caddyfile 2>"$w/caddy.log" & cpid=$!
for _ in $(seq 1 50); do curl -s -o /dev/null http://127.0.0.1:8481/ && break; sleep 0.2; done
B=http://127.0.0.1:8481
UA=("curl/7.88.1" "Mozilla/5.0 (X11; Linux x86_64; rv:115.0) Gecko/20100101 Firefox/115.0"
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36"
  "python-requests/2.28.1" "Go-http-client/1.1" "Wget/1.21.3")
c() { curl -s -o /dev/null -m 6 -A "${UA[$((RANDOM % ${#UA[@]}))]}" "$@" || true; }
RANDOM=14
round() {
  c "$B/"
  c "$B/index.html"
  c "$B/docs/"
  c "$B/docs/doc$((RANDOM % 8 + 1)).txt"
  c -H "Accept-Encoding: gzip" "$B/docs/doc$((RANDOM % 8 + 1)).txt"
  c -r 0-99 "$B/docs/doc2.txt"
  c "$B/docs/missing$RANDOM.txt"
  c "$B/.git/config"
  c -I "$B/latest"
  c "$B/old"
  c "$B/moved"
  c "$B/teapot"
  c "$B/gone"
  c "$B/boom"
  c "$B/busy"
  c "$B/private/data.txt"
  c -u alice:alicepw "$B/private/data.txt"
  c -u alice:wrong "$B/private/data.txt"
  c -u mallory:x "$B/private/data.txt"
  c "$B/api/items/$RANDOM"
  c -X POST -d '{"name":"x"}' "$B/api/items"
  c -X PUT -d '{"name":"y"}' "$B/api/items/$RANDOM"
  c -X DELETE "$B/api/items/$RANDOM"
  c -X PATCH -d '{}' "$B/api/items/$RANDOM"
  c "$B/api/fail"
  c "$B/api/missing"
  c -X POST --data-binary "@$w/site/docs/doc1.txt" "$B/upload"
  c -X POST -d small "$B/upload"
  c "$B/dead/x"
  c "$B/php/index.php"
  c -X OPTIONS "$B/"
  c -X DELETE "$B/index.html"
  c -k https://localhost:8443/
}
for i in $(seq 1 30); do
  round
  case $((i % 10)) in
    2) c -m 1 "$B/api/slow" ;;
    3) printf 'GARBAGE\r\n\r\n' | nc -w 1 127.0.0.1 8481 >/dev/null || true ;;
    4) printf 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n' | nc -w 5 127.0.0.1 8481 >/dev/null || true ;;
    5) printf 'GET / HTTP/1.1\r\n\r\n' | nc -w 1 127.0.0.1 8443 >/dev/null || true
       curl -s -o /dev/null --tlsv1.2 --tls-max 1.2 --ciphers AES128-SHA -k https://localhost:8443/ || true
       c https://localhost:8443/ ;;
    6) kill $o2; sleep 5; c "$B/api/items/1"; c "$B/api/items/2"
       python3 "$w/origin.py" 8491 & o2=$! ;;
    7) conf "header X-Round $i"
       curl -s -o /dev/null -X POST -H "Content-Type: text/caddyfile" --data-binary "@$w/Caddyfile" \
         http://127.0.0.1:2419/load || true ;;
    8) curl -s -o /dev/null -X POST -H "Content-Type: text/caddyfile" --data-binary 'http://x { bogus }' \
         http://127.0.0.1:2419/load || true
       curl -s -o /dev/null http://127.0.0.1:2419/config/ || true
       curl -s -o /dev/null -X DELETE http://127.0.0.1:2419/config/apps/nope || true ;;
    9) kill $o1; sleep 3; c "$B/api/items/3"; c "$B/upload" -X POST -d a
       python3 "$w/origin.py" 8490 & o1=$! ;;
  esac
  sleep 0.3
done
curl -s -o /dev/null -X POST http://127.0.0.1:2419/stop || true
wait $cpid || true
kill $o1 $o2 || true
mkdir -p "$out/Caddy"
cp "$w/caddy.log" "$out/Caddy/Caddy_raw.log"
rm -rf "$w"
