#!/bin/bash
# Produces Chromium/Chromium_raw.log: headless Chromium's own log (--enable-logging=stderr
# --v=1, a desktop application's log) while it loads local pages that work and fail in varied
# ways: script errors and console output, missing resources, HTTP errors, a redirect loop, a
# refused connection, TLS to a plain-HTTP port, an unresolvable name, a missing file, a page
# that hangs past the load timeout, fetch and WebSocket failures.
# Usage: chromium.sh OUTDIR   (run as root: --no-sandbox; serves pages on 127.0.0.1:58080)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-chromium.XXXXXX)
cat >"$w/server.py" <<'PY'
import http.server, sys, time
PAGES = {
    "/": "<html><body><h1>ok</h1><script>console.log('loaded', 42); console.warn('careful');</script></body></html>",
    "/scripterror": "<html><body><script>console.error('about to fail'); nosuch(1);</script><img src='/missing.png'></body></html>",
    "/fetches": "<html><body><script>fetch('http://127.0.0.1:1/api').catch(e => console.error('fetch failed', e.message));"
                "new WebSocket('ws://127.0.0.1:1/ws'); fetch('/api/data').then(r => console.log('status', r.status));</script></body></html>",
    "/csp": "<html><head><meta http-equiv='Content-Security-Policy' content=\"script-src 'none'\"></head><body><script>alert(1)</script></body></html>",
    "/mixed": "<html><body><iframe src='http://127.0.0.1:1/frame'></iframe><link rel=stylesheet href='/missing.css'><script src='/missing.js'></script></body></html>",
}
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path in PAGES:
            body = PAGES[self.path].encode()
            self.send_response(200); self.send_header("Content-Type", "text/html"); self.end_headers(); self.wfile.write(body)
        elif self.path.startswith("/loop"):
            self.send_response(302); self.send_header("Location", "/loop"); self.end_headers()
        elif self.path == "/error":
            self.send_response(500); self.end_headers(); self.wfile.write(b"boom")
        elif self.path == "/hang":
            time.sleep(30)
        elif self.path == "/garbage":
            self.wfile.write(b"\x00\x01 not http at all\r\n\r\n")
        else:
            self.send_response(404); self.end_headers(); self.wfile.write(b"not found")
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", 58080), H).serve_forever()
PY
python3 "$w/server.py" & srv=$!
sleep 1
u=http://127.0.0.1:58080
for url in "$u/" "$u/scripterror" "$u/fetches" "$u/csp" "$u/mixed" "$u/nothing-here" "$u/error" \
    "$u/loop" "http://127.0.0.1:1/" "https://127.0.0.1:58080/" "http://no-such-host.invalid/" \
    "file://$w/missing.html" "$u/garbage" "$u/hang" "$u/"; do
  timeout -s KILL 40 chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=1 \
    --user-data-dir="$w/profile" --timeout=5000 --dump-dom "$url" >/dev/null 2>>"$w/chromium.log" || true
done
kill $srv
mkdir -p "$out/Chromium"
# the Debian wrapper script's own shell noise is not Chromium's log; the Google API key and
# OAuth client Debian's package sets (logged at --v=1) become made-up values of the same shape
grep -v '^/usr/bin/chromium: ' "$w/chromium.log" | sed -E \
  -e 's/AIza[A-Za-z0-9_-]{35}/AIzaSyDq3vR0nT7wXk2LmPz9sQ1uHbYc4eFgJ5o/g' \
  -e 's/[0-9]{12}\.apps\.googleusercontent\.com/123456789012.apps.googleusercontent.com/g' \
  -e 's/kdloedMFGdGla2P1zacGjAQh/aBcDeFgHiJkLm1NoPqRsTuVw/g' >"$out/Chromium/Chromium_raw.log"
rm -rf "$w"
