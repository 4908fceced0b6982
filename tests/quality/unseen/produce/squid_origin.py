#!/usr/bin/env python3
"""The origin web server squid.sh puts behind Squid: pages that may be cached (with validators),
pages that may not, redirects, errors, a slow page and a large one. Usage: squid_origin.py PORT"""
import http.server
import socketserver
import sys
import time

STAMP = "Wed, 25 Nov 2026 10:00:00 GMT"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def route(self):
        p = self.path.split("://", 1)[-1]
        p = "/" + p.split("/", 1)[1] if "/" in p else "/"
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if p.startswith("/static/"):
            if self.headers.get("If-Modified-Since") == STAMP:
                return self.send(304, headers=[("Last-Modified", STAMP)])
            return self.send(200, b"static " * 200, [("Content-Type", "text/css"),
                                                     ("Cache-Control", "max-age=20"),
                                                     ("Last-Modified", STAMP)])
        if p.startswith("/img/"):
            return self.send(200, b"\x89PNG" + b"\0" * 3000, [("Content-Type", "image/png"),
                                                             ("Cache-Control", "max-age=600")])
        if p.startswith("/api/"):
            if self.command in ("POST", "PUT"):
                return self.send(201, b'{"ok":true}', [("Content-Type", "application/json")])
            if self.command == "DELETE":
                return self.send(204)
            return self.send(200, b'{"items":[1,2,3]}', [("Content-Type", "application/json"),
                                                          ("Cache-Control", "no-store")])
        if p.startswith("/old/"):
            return self.send(301, b"", [("Location", "/static/new.css")])
        if p.startswith("/login"):
            return self.send(302, b"", [("Location", "/static/home.html")])
        if p.startswith("/private/"):
            return self.send(401, b"auth", [("WWW-Authenticate", 'Basic realm="x"'),
                                            ("Content-Type", "text/plain")])
        if p.startswith("/admin/"):
            return self.send(403, b"forbidden", [("Content-Type", "text/html")])
        if p.startswith("/crash"):
            return self.send(500, b"oops", [("Content-Type", "text/html")])
        if p.startswith("/busy"):
            return self.send(503, b"busy", [("Content-Type", "text/html"), ("Retry-After", "5")])
        if p.startswith("/slow"):
            time.sleep(4)
            return self.send(200, b"late", [("Content-Type", "text/plain")])
        if p.startswith("/big"):
            return self.send(200, b"x" * 400000, [("Content-Type", "application/octet-stream"),
                                                  ("Cache-Control", "max-age=600")])
        if p.startswith("/reset"):
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
            self.close_connection = True
            return
        return self.send(404, b"not found", [("Content-Type", "text/html"),
                                             ("Cache-Control", "max-age=30")])

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_OPTIONS = route


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


if __name__ == "__main__":
    Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
