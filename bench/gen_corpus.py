#!/usr/bin/env python3
"""Benchmark corpus generator (stdlib only), used by bench/e2e.py when ../shared is absent.

Writes deterministic syslog lines (same options, same bytes): near-duplicates from 16
templates with variable ids, addresses, ports, users and durations, 70 % RFC 3164 and 30 %
RFC 5424, about 130 bytes a line. --distinct instead writes lines that never fold together
(same host and app; letter-only words, none where a value may change), so N lines open N
groups: the memory benchmark's input.

  bench/gen_corpus.py -n 200000 -o mix200k.log
  bench/gen_corpus.py -n 1000000 --distinct -o distinct1m.log
"""
import argparse
import random
import sys

HOSTS = ["web%02d" % i for i in range(1, 9)] + ["db01", "db02", "cache01", "lb01"]
USERS = ["alice", "bob", "carol", "dave", "erin", "root", "deploy", "backup", "nagios", "git"]
PATHS = ["/api/v1/users", "/api/v1/orders", "/healthz", "/login", "/metrics", "/static/app.js"]
SERVICES = ["nginx.service", "sshd.service", "cron.service", "redis-server.service"]

# (facility, severity, app, template); {} fields are filled per line.
TEMPLATES = [
    (10, 6, "sshd", "Accepted publickey for {user} from {ip} port {port} ssh2"),
    (10, 5, "sshd", "Failed password for {user} from {ip} port {port} ssh2"),
    (10, 6, "sshd", "Disconnected from user {user} {ip} port {port}"),
    (10, 6, "sshd", "pam_unix(sshd:session): session opened for user {user}(uid={uid}) by (uid=0)"),
    (10, 5, "sudo", "{user} : TTY=pts/{tty} ; PWD=/home/{user} ; USER=root ; COMMAND=/usr/bin/systemctl restart {svc}"),
    (0, 4, "kernel", "[UFW BLOCK] IN=eth0 OUT= SRC={ip} DST={ip2} LEN={len} TTL=64 PROTO=TCP SPT={port} DPT=443"),
    (3, 6, "systemd", "Started {svc}."),
    (3, 4, "systemd", "{svc}: Main process exited, code=exited, status={rc}/FAILURE"),
    (16, 6, "nginx", "{ip} - - \"GET {path}?id={id} HTTP/1.1\" {status} {bytes} \"-\" \"Mozilla/5.0\" rt={sec}"),
    (16, 6, "app", "request completed method=GET path={path} status={status} duration_ms={ms} user={user} req_id={hex}"),
    (16, 4, "app", "slow request path={path} duration_ms={ms} threshold_ms=500 req_id={hex}"),
    (16, 6, "app", "cache miss key=user:{id}:profile ttl={ttl}s backend=redis://{ip2}:6379"),
    (16, 4, "app", "retrying connection to db {ip2}:5432 attempt {rc}/5 after {ms}ms"),
    (16, 6, "worker", "processed batch id={id} items={len} in {ms}ms"),
    (16, 6, "postgres", "LOG:  duration: {ms}.{rc} ms  statement: SELECT * FROM users WHERE id = {id}"),
    (2, 6, "postfix/smtpd", "connect from unknown[{ip}]"),
]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def fields(rnd):
    ri = rnd.randint
    return {
        "user": rnd.choice(USERS), "ip": "203.0.%d.%d" % (ri(0, 15), ri(1, 254)),
        "ip2": "10.0.%d.%d" % (ri(0, 3), ri(1, 254)), "port": ri(1024, 65535),
        "uid": ri(1000, 1100), "tty": ri(0, 9), "svc": rnd.choice(SERVICES),
        "len": ri(40, 1500), "rc": ri(1, 5), "path": rnd.choice(PATHS), "id": ri(1, 10 ** 6),
        "status": rnd.choice([200, 200, 200, 301, 404, 500]), "bytes": ri(100, 90000),
        "sec": "%.3f" % rnd.random(), "ms": ri(1, 3000), "ttl": ri(30, 3600),
        "hex": "%016x" % rnd.getrandbits(64),
    }


def word(n):
    """A letters-only word unique to n (digits would be masked as a variable)."""
    out = ""
    for _ in range(4):
        out += LETTERS[n % 26]
        n //= 26
    while n:
        out += LETTERS[n % 26]
        n //= 26
    return out


def header(rnd, i, fac, sev, host, app):
    sec = i // 1000
    if rnd.random() < 0.7:
        return "<%d>%s %2d %02d:%02d:%02d %s %s[%d]: " % (
            fac * 8 + sev, MONTHS[10], 22, sec // 3600 % 24, sec // 60 % 60, sec % 60, host,
            app, 4242)
    return "<%d>1 2026-11-22T%02d:%02d:%02d.%03dZ %s %s 4242 - - " % (
        fac * 8 + sev, sec // 3600 % 24, sec // 60 % 60, sec % 60, i % 1000, host, app)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--count", type=int, default=200000)
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--distinct", action="store_true",
                    help="every line opens its own group (memory benchmark)")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    weights = [1.0 / (i + 1) ** 0.9 for i in range(len(TEMPLATES))]
    out = sys.stdout if a.output == "-" else open(a.output, "w", buffering=1 << 20)
    for i in range(a.count):
        if a.distinct:
            # A unique word, then random letter-only words: never an exact-shape match, a
            # confirmation would reject them (no value position), and fingerprints spread out
            # like unrelated lines' do, so the index is not flooded with candidates.
            msg = " ".join([word(i)] + ["".join(rnd.choice(LETTERS) for _ in range(rnd.randint(3, 8)))
                                        for _ in range(7)])
            out.write(header(rnd, i, 16, 6, "bench01", "memprobe") + msg + "\n")
            continue
        fac, sev, app, tpl = rnd.choices(TEMPLATES, weights)[0]
        out.write(header(rnd, i, fac, sev, rnd.choice(HOSTS), app) + tpl.format(**fields(rnd))
                  + "\n")
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
