#!/usr/bin/env python3
# Fault-injection soak: drives `logfold serve` with paced TCP and UDP senders while faults
# are injected, then checks exact accounting, delivery to the tcp output and bounded RSS.
"""Usage: tests/soak/soak.py --logfold build/logfold [--duration 600] [--keep DIR]

Runs `logfold serve` for --duration seconds with TCP and UDP syslog senders at a fixed rate
while injecting faults: the tcp output's collector stopped and restarted, SIGHUP reloads
(every third one with an invalid config, which must be refused and change nothing), TCP
clients disconnecting mid-frame, malformed, mis-framed and oversized lines. At the end it
stops the senders, waits for the daemon to have read everything, stops it with SIGTERM and
checks (see tests/soak/README.md):

- TCP: lines sent == logfold_received_total == firsts + sum(summary count) in the file
  output; truncated, framing-error and partial-at-close counters equal what was sent;
- UDP: datagrams sent == logfold_received_total + the socket's kernel drops; lines
  accounted in the file == received - logfold_dropped_total;
- every event of the file output reached the collector at least once (duplicates counted);
- reloads: every valid one applied, every invalid one refused, nothing of the refused
  configs took effect;
- RSS sampled every second stays under --rss-limit-mib and does not grow once the window
  has filled.

Prints a summary and exits 1 on any violation (2 on a usage or start-up error).
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.dont_write_bytecode = True  # CTest runs this from the source tree: leave no __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from soak_collector import Collector  # noqa: E402
from soak_traffic import TcpSenders, UdpSender  # noqa: E402

MIB = 1024 * 1024


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--logfold", required=True, help="the logfold executable")
    p.add_argument("--duration", type=float, default=600, help="seconds of traffic (default 600)")
    p.add_argument("--tcp-rate", type=int, default=8000, help="TCP lines/s (default 8000)")
    p.add_argument("--udp-rate", type=int, default=4000, help="UDP datagrams/s (default 4000)")
    p.add_argument("--tcp-connections", type=int, default=4)
    p.add_argument("--reload-every", type=float, default=3.0, help="seconds between SIGHUPs")
    p.add_argument("--collector-every", type=float, default=12.0,
                   help="seconds between collector restarts")
    p.add_argument("--collector-down", type=float, default=3.0,
                   help="seconds the collector stays down")
    # The 10-minute run on 38f1b04 peaked at 10.7 MiB and grew 0.4 MiB after warm-up; the
    # bounds leave room for a loaded CI box, not for a leak of a few hundred KiB a minute.
    p.add_argument("--rss-limit-mib", type=float, default=64, help="peak RSS bound")
    p.add_argument("--rss-growth-mib", type=float, default=4,
                   help="allowed RSS growth once the window has filled")
    p.add_argument("--min-rate", type=float, default=0.9,
                   help="fraction of each target rate the senders must reach")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--keep", help="keep the run's files in this directory")
    return p.parse_args()


# ------------------------------------------------------------------------- the daemon

def soak_config(events_path, collector_port, variant):
    """The soak's config. Variants 0 and 1 are valid and differ in engine settings and in the
    tcp output (applied live by a reload); "invalid" also turns debug logging on, which must
    never happen."""
    engine = {"window": "2s", "max_hold": "5s", "max_distance": 4}
    if variant == 1:
        engine = {"window": "3s", "max_hold": "6s", "max_distance": 5}
    config = {
        "log": {"level": "info", "stats_interval": "0"},
        "inputs": [
            {"name": "udp-in", "type": "udp", "port": 0, "max_message_size": "2KiB"},
            {"name": "tcp-in", "type": "tcp", "port": 0, "max_message_size": "2KiB",
             "idle_timeout": "0"},
        ],
        "engine": engine,
        "workers": {"threads": 2},
        "outputs": [
            {"name": "file", "type": "file", "path": events_path},
            {"name": "collector", "type": "tcp", "address": "127.0.0.1", "port": collector_port,
             "buffer": "16MiB", "reconnect_min": "50ms", "reconnect_max": "500ms"},
        ],
        "metrics": {"port": 0},
    }
    if variant == 1:
        # An output change: the daemon builds a new sink and drains the old one aside.
        config["outputs"][1]["reconnect_max"] = "1s"
    if variant == "invalid":
        config["log"]["level"] = "debug"
        config["engine"]["window"] = "5 parsecs"
    return config


def write_atomically(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)  # the daemon never reads a half-written file


class Daemon:
    def __init__(self, binary, workdir, config_path):
        self.stderr_path = os.path.join(workdir, "daemon.stderr")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("LISTEN_") and k != "NOTIFY_SOCKET"}
        with open(os.path.join(workdir, "daemon.stdout"), "wb") as out, \
                open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen([binary, "serve", "--config", config_path],
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                         env=env)
        self.metrics_port = 0

    def log(self):
        with open(self.stderr_path, errors="replace") as f:
            return f.read()

    def wait_serving(self, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            if "logfold serving" in self.log():
                self.metrics_port = self.port_after(r"metrics on http://127\.0\.0\.1:(\d+)/")
                return True
            time.sleep(0.05)
        return False

    def port_after(self, pattern):
        m = re.search(pattern, self.log())
        return int(m.group(1)) if m else 0

    def metrics(self):
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.read().decode()

    def rss_bytes(self):
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0


def metric(text, name, *label_parts):
    """Sum of the samples of `name` whose labels contain every one of `label_parts`."""
    total = 0.0
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        head, _, value = line.rpartition(" ")
        metric_name, _, labels = head.partition("{")
        if metric_name == name and all(p in labels for p in label_parts):
            total += float(value)
    return int(total)


def wait_until(pred, timeout, step=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


def udp_socket_stats(port):
    """(rx_queue bytes, drops) of the 127.0.0.1:port socket in /proc/net/udp."""
    want = f"0100007F:{port:04X}"
    with open("/proc/net/udp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[1] == want:
                return int(fields[4].split(":")[1], 16), int(fields[-1])
    return None


def snmp_udp():
    with open("/proc/net/snmp") as f:
        rows = [line.split() for line in f if line.startswith("Udp:")]
    return dict(zip(rows[0][1:], map(int, rows[1][1:])))


# ------------------------------------------------------------------------- faults

class Faults(threading.Thread):
    """SIGHUP reloads (valid, valid, invalid, ...) and collector stop/start cycles. Each
    reload waits until the daemon counted it, so no two SIGHUPs coalesce."""

    def __init__(self, args, daemon, collector, config_path, events_path, stop):
        super().__init__(name="faults", daemon=True)
        self.args, self.daemon, self.collector = args, daemon, collector
        self.config_path, self.events_path, self.stop = config_path, events_path, stop
        self.valid_reloads = self.invalid_reloads = self.collector_restarts = 0
        self.slowest_reload_s = 0.0
        self.errors, self.metrics_errors = [], []

    def reload(self, variant):
        text = json.dumps(soak_config(self.events_path, self.collector.port, variant), indent=2)
        write_atomically(self.config_path, text)
        before = self.reload_count()
        started = time.monotonic()
        self.daemon.proc.send_signal(signal.SIGHUP)
        if variant == "invalid":
            self.invalid_reloads += 1
        else:
            self.valid_reloads += 1
        if not wait_until(lambda: self.reload_count() > before, 15):
            self.errors.append(f"SIGHUP #{self.valid_reloads + self.invalid_reloads} ({variant}) "
                               f"not handled within 15 s; /metrics errors: {self.metrics_errors[-1:]}")
        self.slowest_reload_s = max(self.slowest_reload_s, time.monotonic() - started)

    def reload_count(self):
        try:
            m = self.daemon.metrics()
        except OSError as e:  # a stalled event loop: reported if the wait runs out
            self.metrics_errors.append(repr(e))
            return -1
        return metric(m, "logfold_reloads_total") + metric(m, "logfold_reload_failures_total")

    def run(self):
        start = time.monotonic()
        next_reload = start + self.args.reload_every
        next_down = start + self.args.collector_every / 2
        up_at = None
        n = 0
        try:
            while not self.stop.wait(0.05):
                now = time.monotonic()
                if up_at is None and now >= next_down:
                    self.collector.stop_serving()
                    up_at = time.monotonic() + self.args.collector_down
                elif up_at is not None and now >= up_at:
                    self.collector.start_serving()
                    self.collector_restarts += 1
                    up_at = None
                    next_down = now + self.args.collector_every
                if now >= next_reload:
                    n += 1
                    self.reload("invalid" if n % 3 == 0 else n % 2)
                    next_reload = time.monotonic() + self.args.reload_every
        except Exception as e:
            self.errors.append(f"fault injector: {e!r}")
        finally:
            if up_at is not None:  # leave the collector up for the final drain
                self.collector.start_serving()
                self.collector_restarts += 1


class RssSampler(threading.Thread):
    def __init__(self, daemon, stop):
        super().__init__(name="rss", daemon=True)
        self.daemon, self.stop = daemon, stop
        self.samples = []  # (seconds since start, bytes)

    def run(self):
        start = time.monotonic()
        while not self.stop.wait(1.0):
            rss = self.daemon.rss_bytes()
            if rss:
                self.samples.append((time.monotonic() - start, rss))


# ------------------------------------------------------------------------- checks

def is_udp(event):
    """Senders keep the protocols apart: UDP hosts start with "udp", headerless UDP lines
    carry "soakU"; anything else (TCP fragments without a host included) is TCP."""
    host = event.get("host")
    if host:
        return host.startswith("udp")
    text = event.get("message") or event.get("template") or ""
    return "soakU" in text


def accounted(events):
    """Lines the events stand for, per protocol: firsts + summary counts."""
    out = {"tcp": 0, "udp": 0}
    mixed = 0
    for e in events:
        proto = "udp" if is_udp(e) else "tcp"
        if e.get("kind") == "first":
            out[proto] += 1
        elif e.get("kind") == "summary":
            out[proto] += e.get("count", 0)
            samples = e.get("samples", [])
            if any(is_udp(s) != (proto == "udp") for s in samples):
                mixed += 1
    return out, mixed


def event_key(e):
    return (e.get("kind"), e.get("group_id"), e.get("count_total"))


def read_events(path):
    events, bad = [], 0
    with open(path, "rb") as f:
        for line in f:
            try:
                events.append(json.loads(line))
            except ValueError:
                bad += 1
    return events, bad


def collector_events(chunks):
    """Events per key, and the record fragments left by resends after a lost connection
    (a record partly written before the failure is resent whole)."""
    keys, fragments = {}, 0
    for data in chunks:
        for line in data.split(b"\n"):
            if not line:
                continue
            try:
                e = json.loads(line)
            except ValueError:
                fragments += 1
                continue
            keys[event_key(e)] = keys.get(event_key(e), 0) + 1
    return keys, fragments


def rss_verdict(samples, duration, warmup):
    """Peak, and growth: the peak of the last quarter minus the peak of the first quarter
    after warm-up (the window and groups have turned over by then)."""
    steady = [(t, r) for t, r in samples if t >= warmup]
    peak = max((r for _, r in samples), default=0)
    if len(steady) < 8:
        return peak, None, None
    span = steady[-1][0] - steady[0][0]
    early = max(r for t, r in steady if t <= steady[0][0] + span / 4)
    late = max(r for t, r in steady if t >= steady[-1][0] - span / 4)
    return peak, early, late - early


def rss_profile(samples, points=10):
    """The largest RSS (MiB) in each tenth of the run: the trend at a glance."""
    if not samples:
        return []
    end = samples[-1][0]
    out = []
    for i in range(points):
        part = [r for t, r in samples if i * end / points <= t <= (i + 1) * end / points]
        out.append(round(max(part, default=0) / MIB, 1))
    return out


# ------------------------------------------------------------------------- main

def main():
    args = parse_args()
    workdir = args.keep or tempfile.mkdtemp(prefix="logfold-soak-")
    os.makedirs(workdir, exist_ok=True)
    events_path = os.path.join(workdir, "events.ndjson")
    config_path = os.path.join(workdir, "logfold.json")
    violations = []
    stop = threading.Event()

    collector = Collector()
    collector.start()
    write_atomically(config_path, json.dumps(soak_config(events_path, collector.port, 0), indent=2))
    daemon = Daemon(args.logfold, workdir, config_path)
    try:
        if not daemon.wait_serving():
            print(f"logfold serve did not start:\n{daemon.log()}", file=sys.stderr)
            return 2
        tcp_port = daemon.port_after(r"input tcp-in: tcp listening on port (\d+)")
        udp_port = daemon.port_after(r"input udp-in: udp listening on port (\d+)")
        snmp_before = snmp_udp()
        rss = RssSampler(daemon, stop)
        tcp = TcpSenders(tcp_port, args.tcp_rate, args.tcp_connections, args.seed, 10, stop)
        udp = UdpSender(udp_port, args.udp_rate, args.seed + 100, 10, stop)
        faults = Faults(args, daemon, collector, config_path, events_path, stop)
        started = time.monotonic()
        for t in (rss, tcp, udp, faults):
            t.start()
        while time.monotonic() - started < args.duration and daemon.proc.poll() is None:
            time.sleep(0.2)
        stop.set()
        for t in (tcp, udp, faults, rss):
            t.join(timeout=60)
        elapsed = time.monotonic() - started
        if daemon.proc.poll() is not None:
            violations.append(f"daemon exited during the run with {daemon.proc.returncode}")
            raise RuntimeError("daemon died")
        violations += [e for e in (tcp.error, udp.error) if e] + faults.errors

        # Everything sent has been read: TCP up to the last fragment, UDP's queue empty.
        tc, uc = tcp.counts, udp.counts
        if not wait_until(lambda: metric(daemon.metrics(), "logfold_received_total",
                                         'proto="tcp"') >= tc.lines, 60):
            violations.append("TCP: the daemon did not receive every line within 60 s")
        wait_until(lambda: (udp_socket_stats(udp_port) or (0, 0))[0] == 0, 30)
        time.sleep(0.5)  # the io thread may still be delivering its last recvmmsg batch
        udp_rx_queue, udp_socket_drops = udp_socket_stats(udp_port) or (-1, -1)
        snmp_after = snmp_udp()
        m = daemon.metrics()

        daemon.proc.send_signal(signal.SIGTERM)
        try:
            code = daemon.proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            daemon.proc.kill()
            code = "killed after 90 s"
        if code != 0:
            violations.append(f"daemon exit status after SIGTERM: {code}")
        collector.shutdown()

        # ---- accounting
        events, bad_lines = read_events(events_path)
        if bad_lines:
            violations.append(f"file output: {bad_lines} lines are not JSON")
        acc, mixed = accounted(events)
        if mixed:
            violations.append(f"{mixed} summaries mix TCP and UDP lines (attribution broken)")
        received = {p: metric(m, "logfold_received_total", f'proto="{p}"') for p in ("tcp", "udp")}
        udp_dropped = metric(m, "logfold_dropped_total", 'proto="udp"')
        tcp_dropped = metric(m, "logfold_dropped_total", 'proto="tcp"')
        truncated = {p: metric(m, "logfold_truncated_total", f'proto="{p}"') for p in ("tcp", "udp")}
        framing_errors = metric(m, "logfold_framing_errors_total")
        partial = metric(m, "logfold_partial_at_close_total")

        def expect(what, got, want):
            if got != want:
                violations.append(f"{what}: got {got}, expected {want}")

        expect("TCP lines accounted in the file", acc["tcp"], tc.lines)
        expect("TCP logfold_received_total", received["tcp"], tc.lines)
        expect("TCP logfold_dropped_total", tcp_dropped, 0)
        expect("TCP logfold_truncated_total", truncated["tcp"], tc.oversized)
        expect("logfold_framing_errors_total", framing_errors, tc.framing_errors)
        expect("logfold_partial_at_close_total", partial, tc.octet_cuts)
        expect("UDP received + socket drops", received["udp"] + udp_socket_drops, uc.datagrams)
        expect("UDP lines accounted in the file", acc["udp"], received["udp"] - udp_dropped)
        if not uc.oversized - udp_socket_drops <= truncated["udp"] <= uc.oversized:
            violations.append(f"UDP logfold_truncated_total {truncated['udp']} outside "
                              f"[{uc.oversized - udp_socket_drops}, {uc.oversized}]")
        rcvbuf_delta = snmp_after["RcvbufErrors"] - snmp_before["RcvbufErrors"]
        inerr_delta = snmp_after["InErrors"] - snmp_before["InErrors"]
        if udp_socket_drops > rcvbuf_delta:
            violations.append(f"UDP socket drops {udp_socket_drops} exceed the system-wide "
                              f"RcvbufErrors delta {rcvbuf_delta}")

        # ---- the tcp output's collector
        file_keys = {}
        for e in events:
            file_keys[event_key(e)] = file_keys.get(event_key(e), 0) + 1
        if len(file_keys) != len(events):
            violations.append(f"file output: {len(events) - len(file_keys)} repeated events")
        got, fragments = collector_events(collector.received())
        missing = [k for k in file_keys if k not in got]
        unknown = [k for k in got if k not in file_keys]
        duplicates = sum(n - 1 for n in got.values())
        if missing:
            violations.append(f"collector: {len(missing)} of {len(file_keys)} events never "
                              f"arrived, e.g. {missing[:3]}")
        if unknown:
            violations.append(f"collector: {len(unknown)} events not in the file output")
        if collector.drain_timeouts:
            violations.append(f"collector: {collector.drain_timeouts} stops gave up waiting "
                              "for logfold to close")

        # ---- reloads
        log = daemon.log()
        expect("logfold_reloads_total", metric(m, "logfold_reloads_total"), faults.valid_reloads)
        expect("logfold_reload_failures_total", metric(m, "logfold_reload_failures_total"),
               faults.invalid_reloads)
        expect("'reload refused' log lines", log.count("reload refused"), faults.invalid_reloads)
        expect("'reload applied' log lines", log.count("reload applied"), faults.valid_reloads)
        expect("debug log lines (only a refused config asks for them)", log.count("] [debug] "), 0)

        # ---- rates and memory
        for name, counts, rate in (("TCP", tc, args.tcp_rate), ("UDP", uc, args.udp_rate)):
            sent = counts.normal + counts.malformed + counts.oversized + counts.framing_errors
            if sent < args.min_rate * rate * args.duration:
                violations.append(f"{name} senders reached {sent / elapsed:.0f} lines/s, below "
                                  f"{args.min_rate:.0%} of {rate}")
        warmup = min(max(15.0, args.duration * 0.2), args.duration / 2)
        peak, early, growth = rss_verdict(rss.samples, args.duration, warmup)
        if peak > args.rss_limit_mib * MIB:
            violations.append(f"peak RSS {peak / MIB:.1f} MiB above {args.rss_limit_mib} MiB")
        if growth is None:
            violations.append("too few RSS samples after warm-up")
        elif growth > args.rss_growth_mib * MIB:
            violations.append(f"RSS grew {growth / MIB:.1f} MiB after warm-up "
                              f"(bound {args.rss_growth_mib} MiB)")

        summary = {
            "duration_s": round(elapsed, 1),
            "tcp": {**tc.as_dict(), "rate_per_s": round(tc.lines / elapsed),
                    "received": received["tcp"], "accounted": acc["tcp"],
                    "truncated": truncated["tcp"], "framing_errors": framing_errors,
                    "partial_at_close": partial, "dropped": tcp_dropped},
            "udp": {**uc.as_dict(), "rate_per_s": round(uc.datagrams / elapsed),
                    "received": received["udp"], "accounted": acc["udp"],
                    "dropped_queue_full": udp_dropped, "socket_drops": udp_socket_drops,
                    "rx_queue_at_end": udp_rx_queue, "truncated": truncated["udp"],
                    "snmp_rcvbuf_errors_delta": rcvbuf_delta, "snmp_in_errors_delta": inerr_delta},
            "faults": {"collector_restarts": collector.stops, "valid_reloads": faults.valid_reloads,
                       "invalid_reloads": faults.invalid_reloads,
                       "slowest_reload_s": round(faults.slowest_reload_s, 2),
                       "tcp_mid_frame_disconnects": tc.cuts,
                       "malformed": tc.malformed + uc.malformed,
                       "oversized": tc.oversized + uc.oversized,
                       "bad_octet_counts": tc.framing_errors},
            "events": {"file": len(events), "collector_unique": len(got),
                       "collector_duplicates": duplicates, "collector_fragments": fragments,
                       "collector_connections": collector.connections,
                       "sink_resent_bytes": metric(m, "logfold_sink_resent_bytes_total"),
                       "sink_disconnects": metric(m, "logfold_sink_disconnects_total")},
            "rss_mib": {"peak": round(peak / MIB, 1),
                        "after_warmup": round((early or 0) / MIB, 1),
                        "growth": None if growth is None else round(growth / MIB, 1),
                        "limit": args.rss_limit_mib, "growth_limit": args.rss_growth_mib,
                        "samples": len(rss.samples),
                        "profile": rss_profile(rss.samples)},
            "violations": violations,
        }
        print(json.dumps(summary, indent=2))
    except RuntimeError:
        print(json.dumps({"violations": violations}, indent=2))
    finally:
        stop.set()
        if daemon.proc.poll() is None:
            daemon.proc.kill()
            daemon.proc.wait()
        if not collector.quit:
            collector.quit = True
            collector.join(timeout=10)
        if violations:
            print(f"--- daemon log (last 3000 chars) ---\n{daemon.log()[-3000:]}", file=sys.stderr)
        if not args.keep and not violations:
            subprocess.run(["rm", "-rf", workdir], check=False)
    print("SOAK " + ("FAILED" if violations else "PASSED") +
          (f": {len(violations)} violation(s)" if violations else ""))
    if violations:
        print(f"files kept in {workdir}")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
