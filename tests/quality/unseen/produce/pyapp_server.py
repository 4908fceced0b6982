#!/usr/bin/env python3
"""A small key-value HTTP service logging through Python's `logging` (produce/pyapp.sh runs it
under load to make the held-out PyApp log); its messages are its own format strings."""
import http.server
import json
import logging
import queue
import signal
import sys
import threading
import time

log = logging.getLogger("kv.api")
store_log = logging.getLogger("kv.store")
auth_log = logging.getLogger("kv.auth")
worker_log = logging.getLogger("kv.worker")
access_log = logging.getLogger("http.access")

STORE = {}
LOCK = threading.Lock()
JOBS = queue.Queue()
TOKENS = {"alice": "s3cret", "bob": "hunter2"}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        access_log.info("%s - %s", self.address_string(), format % args)

    def reply(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def user(self):
        token = self.headers.get("Authorization", "")
        if not token.startswith("Bearer "):
            auth_log.warning("missing bearer token from %s for %s %s", self.client_address[0],
                             self.command, self.path)
            return None
        name, _, secret = token[7:].partition(":")
        if TOKENS.get(name) != secret:
            auth_log.warning("invalid token for user %r from %s", name, self.client_address[0])
            return None
        auth_log.debug("user %s authenticated", name)
        return name

    def key(self):
        parts = self.path.split("?")[0].strip("/").split("/")
        return parts[1] if len(parts) == 2 and parts[0] == "kv" else None

    def do_GET(self):
        if self.path == "/health":
            return self.reply(200, {"ok": True, "keys": len(STORE)})
        if self.path == "/crash":
            try:
                raise RuntimeError("crash requested by client")
            except RuntimeError:
                log.exception("unhandled error while serving %s", self.path)
                return self.reply(500, {"error": "internal"})
        key = self.key()
        if key is None:
            log.info("no route for GET %s", self.path)
            return self.reply(404, {"error": "no route"})
        with LOCK:
            value = STORE.get(key)
        if value is None:
            store_log.info("cache miss for key %s", key)
            return self.reply(404, {"error": "not found"})
        store_log.debug("cache hit for key %s (%d bytes)", key, len(value))
        return self.reply(200, {"key": key, "value": value})

    def body(self):
        n = int(self.headers.get("Content-Length", "0"))
        if n > 4096:
            log.error("request body too large: %d bytes (limit 4096) from %s", n,
                      self.client_address[0])
            self.rfile.read(n)
            return None
        raw = self.rfile.read(n)
        try:
            return json.loads(raw or b"null")
        except json.JSONDecodeError as e:
            log.warning("malformed JSON body for %s: %s", self.path, e)
            return None

    def do_PUT(self):
        key = self.key()
        data = self.body()
        if key is None or data is None:
            return self.reply(400, {"error": "bad request"})
        who = self.user()
        if who is None:
            return self.reply(401, {"error": "unauthorized"})
        with LOCK:
            existed = key in STORE
            STORE[key] = str(data)
        if existed:
            store_log.info("user %s updated key %s", who, key)
        else:
            store_log.info("user %s created key %s", who, key)
        return self.reply(200, {"ok": True})

    def do_DELETE(self):
        key = self.key()
        who = self.user()
        if who is None:
            return self.reply(401, {"error": "unauthorized"})
        with LOCK:
            gone = STORE.pop(key, None)
        if gone is None:
            store_log.warning("user %s tried to delete missing key %s", who, key)
            return self.reply(404, {"error": "not found"})
        store_log.info("user %s deleted key %s", who, key)
        return self.reply(204 if key else 400, {})

    def do_POST(self):
        if self.path != "/jobs":
            log.info("no route for POST %s", self.path)
            return self.reply(404, {"error": "no route"})
        data = self.body()
        if not isinstance(data, dict) or "kind" not in data:
            return self.reply(400, {"error": "bad job"})
        JOBS.put(data)
        log.info("queued job %s of kind %s (queue depth %d)", data.get("id"), data["kind"],
                 JOBS.qsize())
        return self.reply(202, {"queued": True})


def worker():
    while True:
        job = JOBS.get()
        if job is None:
            return
        start = time.monotonic()
        kind = job["kind"]
        if kind == "compact":
            with LOCK:
                n = len(STORE)
            worker_log.info("compacted store: %d keys kept", n)
        elif kind == "export":
            worker_log.info("exported %d keys to %s", len(STORE), job.get("target", "/tmp/x"))
        elif kind == "sleep":
            time.sleep(float(job.get("seconds", 0.01)))
            worker_log.debug("slept %.3f s", float(job.get("seconds", 0.01)))
        elif kind == "fail":
            try:
                int(job.get("value", "x"))
            except ValueError:
                worker_log.error("job %s failed", job.get("id"), exc_info=True)
                continue
        else:
            worker_log.warning("unknown job kind %r, dropped", kind)
            continue
        worker_log.info("job %s done in %.1f ms", job.get("id"),
                        (time.monotonic() - start) * 1000)


def main():
    port = int(sys.argv[1])
    logging.basicConfig(
        level=logging.DEBUG, filename=sys.argv[2],
        format="%(asctime)s %(levelname)-8s [%(threadName)s] %(name)s: %(message)s")
    workers = [threading.Thread(target=worker, name="job-worker-%d" % i) for i in range(2)]
    for t in workers:
        t.start()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    log.info("listening on %s:%d with %d workers", "127.0.0.1", port, len(workers))
    threading.Thread(target=server.serve_forever, name="http-server").start()
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt))
    try:
        while True:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    log.info("shutting down after %d keys", len(STORE))
    server.shutdown()
    for _ in workers:
        JOBS.put(None)
    for t in workers:
        t.join()
    log.info("stopped")


if __name__ == "__main__":
    main()
