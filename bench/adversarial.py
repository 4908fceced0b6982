#!/usr/bin/env python3
"""Adversarial benchmark (issue #19): a garbage flood on one TCP connection beside legitimate
TCP and UDP senders; legitimate loss and first-event latency with and without the flood.

Per case, one logfold (TCP and UDP inputs on loopback, TCP output to the latency probe):
  - legitimate TCP: `syslog_replay probe` sends corpus lines at --tcp-rate plus unique markers
    at 200/s and times each marker's `first` event (p50/p99/max);
  - legitimate UDP: `syslog_replay udp` sends corpus lines at --udp-rate; loss = sent -
    (received - dropped on intake), kernel drops included (the daemon never received them);
  - flood (case "flood" only): random printable 20-120-byte lines, each unique, on one TCP
    connection paced at --flood-rate bytes/s.
Cases run one after the other in one invocation, so the comparison is within one run.

  bench/adversarial.py                 # 10 s per case
  bench/adversarial.py --quick         # 2 s per case (smoke)
  bench/adversarial.py --logfold OTHER/logfold   # e.g. a baseline build
"""
import argparse
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402  (the harness's server wrapper, corpus and client helpers)


def garbage(total_bytes, seed):
    """Unique random printable lines of 20-120 bytes, about total_bytes in all."""
    rng = random.Random(seed)
    table = bytes(range(32, 127))
    raw = rng.randbytes(total_bytes)
    text = raw.translate(bytes(table[b % 95] for b in range(256)))
    out, at = bytearray(), 0
    while at < len(text):
        n = rng.randint(20, 120)
        out += text[at:at + n] + b"\n"
        at += n
    return bytes(out)


def flood(port, data, rate, stop):
    """Sends `data` over one connection at `rate` bytes/s until `stop` is set; bytes sent."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(1.0)
    sent, chunk, start = 0, max(1, rate // 100), time.monotonic()
    try:
        while not stop.is_set() and sent < len(data):
            due = start + sent / rate
            if due > time.monotonic():
                time.sleep(due - time.monotonic())
            try:
                sent += s.send(data[sent:sent + chunk])
            except socket.timeout:
                pass  # backpressure: the daemon paused this connection
    finally:
        s.close()
    return sent


def run_case(a, corpus, workdir, with_flood):
    tcp_port, udp_port = e2e.free_port(), e2e.free_port(socket.SOCK_DGRAM)
    probe = subprocess.Popen(
        [a.replay, "probe", "--port", str(tcp_port), "--listen", "0", "--rate", str(a.tcp_rate),
         "--marker-rate", "200", "--seconds", str(a.seconds), corpus],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    flood_sent = [0]
    try:
        listening = json.loads(probe.stdout.readline())["listening"]
        server = e2e.Logfold(
            a.logfold, workdir,
            [{"name": "tcp", "type": "tcp", "address": "127.0.0.1", "port": tcp_port},
             {"name": "udp", "type": "udp", "address": "127.0.0.1", "port": udp_port,
              "receive_buffer": "4MiB"}],
            threads=a.threads,
            outputs=[{"name": "probe", "type": "tcp", "address": "127.0.0.1", "port": listening,
                      "reconnect_min": "10ms", "reconnect_max": "100ms"}])
        stop = threading.Event()
        try:
            flooder = None
            if with_flood:
                data = garbage(int(a.flood_rate * a.seconds), 19)
                flooder = threading.Thread(
                    target=lambda: flood_sent.__setitem__(0, flood(tcp_port, data, a.flood_rate,
                                                                   stop)))
                flooder.start()
            udp = e2e.run_client(a.replay, ["udp", "--port", str(udp_port), "--rate",
                                            str(a.udp_rate), "--lines",
                                            str(int(a.udp_rate * a.seconds)), corpus])
            out = probe.stdout.readline()
            stop.set()
            if flooder:
                flooder.join()
            time.sleep(0.5)  # datagrams still in the socket buffer reach the counters
            m = server.metrics()
            usage = server.usage()
        finally:
            stop.set()
            server.stop()
        probe.wait(30)
    finally:
        if probe.poll() is None:
            probe.kill()
            probe.wait()
    if not out.strip():
        raise RuntimeError("probe failed: " + probe.stderr.read().strip())
    p = json.loads(out)
    udp_in = 'input="udp",proto="udp"'
    received = m.get('logfold_received_total{%s}' % udp_in, 0)
    dropped = sum(v for k, v in m.items()
                  if k.startswith("logfold_dropped_total{") and 'input="udp"' in k)
    lost = udp["lines"] - (received - dropped)
    return {"case": "flood" if with_flood else "quiet",
            "flood_MBps": flood_sent[0] / a.seconds / 1e6,
            "udp_sent": udp["lines"], "udp_lost": int(lost),
            "udp_loss_pct": 100.0 * lost / max(1, udp["lines"]),
            "markers": "%d/%d" % (p["markers_received"], p["markers_sent"]),
            "p50_ms": p["latency_ms_p50"], "p99_ms": p["latency_ms_p99"],
            "max_ms": p["latency_ms_max"], "cpu_s": usage["cpu_s"],
            "peak_rss_mib": usage["peak_rss_mib"],
            "lines_processed": int(m.get("logfold_lines_processed_total", 0))}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--build", default=os.path.join(e2e.ROOT, "build"))
    ap.add_argument("--logfold")
    ap.add_argument("--replay")
    ap.add_argument("--seconds", type=float, default=None, help="per case (10; --quick: 2)")
    ap.add_argument("--flood-rate", type=int, default=4_000_000, help="bytes/s (4 MB/s)")
    ap.add_argument("--udp-rate", type=int, default=20_000, help="legitimate datagrams/s")
    ap.add_argument("--tcp-rate", type=int, default=20_000, help="legitimate TCP lines/s")
    ap.add_argument("--threads", type=int, default=0, help="logfold workers (0: one per core)")
    a = ap.parse_args()
    a.seconds = a.seconds or (2 if a.quick else 10)
    a.logfold = a.logfold or os.path.join(a.build, "logfold")
    a.replay = a.replay or os.path.join(a.build, "syslog_replay")
    cache = os.path.join(a.build, "e2e-corpus")
    corpus, _ = e2e.make_corpus(cache, 20_000 if a.quick else 200_000)
    workdir = os.path.join(a.build, "adversarial-work")
    os.makedirs(workdir, exist_ok=True)
    rows = [run_case(a, corpus, workdir, False), run_case(a, corpus, workdir, True)]
    cols = ["case", "flood_MBps", "udp_sent", "udp_lost", "udp_loss_pct", "markers", "p50_ms",
            "p99_ms", "max_ms", "cpu_s", "peak_rss_mib"]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(("%.2f" % r[c]) if isinstance(r[c], float) else str(r[c]) for c in cols))
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
