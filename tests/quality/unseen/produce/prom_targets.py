#!/usr/bin/env python3
"""The scrape targets prometheus.sh points Prometheus at: good exposition, a page that does not
parse, an HTTP error, a slow page, too many samples, duplicate and out-of-order samples, and a
`/flip` page that is good or failing by turns. Usage: prom_targets.py PORT"""
import http.server
import socketserver
import sys
import time

hits = {"n": 0}


def good(extra=0):
    lines = ["# HELP app_requests_total Requests.", "# TYPE app_requests_total counter"]
    for code in ("200", "404", "500"):
        lines.append('app_requests_total{code="%s"} %d' % (code, hits["n"] * (len(code) + 1)))
    lines.append("# TYPE app_queue_depth gauge")
    lines.append("app_queue_depth %d" % (hits["n"] % 17))
    for i in range(extra):
        lines.append('app_bucket{le="%d"} %d' % (i, i))
    return "\n".join(lines) + "\n"


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body, ctype="text/plain; version=0.0.4"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        hits["n"] += 1
        p = self.path.split("?")[0]
        if p == "/metrics":
            self.reply(200, good())
        elif p == "/garbage":
            self.reply(200, "app_ok 1\nthis is { not metrics\n")
        elif p == "/badtype":
            self.reply(200, "# TYPE app_x histogramm\napp_x 1\n")
        elif p == "/error":
            self.reply(500, "internal error\n")
        elif p == "/missing":
            self.reply(404, "no\n")
        elif p == "/slow":
            time.sleep(3)
            self.reply(200, good())
        elif p == "/many":
            self.reply(200, good(extra=80))
        elif p == "/dup":
            self.reply(200, "app_dup 1\napp_dup 2\napp_dup{a=\"b\"} 3\n")
        elif p == "/ooo":
            now = int(time.time() * 1000)
            self.reply(200, "app_ts 1 %d\napp_ts 2 %d\n" % (now - hits["n"] * 1000 - 600000, now))
        elif p == "/flip":
            if (hits["n"] // 7) % 2:
                self.reply(503, "down\n")
            else:
                self.reply(200, good())
        else:
            self.reply(404, "not found\n")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass  # Prometheus hangs up on the slow page at its scrape timeout


if __name__ == "__main__":
    Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
