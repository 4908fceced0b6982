#!/usr/bin/env python3
"""End-to-end benchmark: logfold serve vs a private rsyslogd on the same work, in one run.

Generates (or reuses) a corpus, then for each part starts the servers one at a time, replays
the corpus with bench/syslog_replay (the project's load client) and prints lines/s, MB/s,
server CPU seconds, peak RSS, loss and the ratio logfold/rsyslog, medians of --runs.

  bench/e2e.py                       # every part, 3 runs, 1M-line corpus (several minutes)
  bench/e2e.py --quick               # smoke: tiny corpus, 1 run, exact accounting checked
  bench/e2e.py --parts tcp,udp --runs 5 --build build-release
  bench/e2e.py --parts udp --pin 1:0 --udp-sockets 1   # server on core 1, client on core 0

Parts:
  tcp      TCP (one connection, newline framing) -> logfold (fold, NDJSON file) and
           rsyslog (imtcp -> omfile). End of a logfold run: its /metrics say every line was
           processed and the file output holds no unwritten bytes; of an rsyslog run: the last
           growth of its output file (polled every 20 ms, idle for 1 s with every line in).
  scaling  the same TCP run with logfold workers.threads = 1 and 2.
  durability  the same TCP run with no state (the default), with checkpoints (state.directory,
           checkpoint_interval 1s, and 100ms as a stress) and in journal mode, interleaved per
           run: each mode's lines/s and its share of the default's.
  relp     the corpus over RELP (syslog_replay relp, --relp-window frames in flight) into
           logfold's relp input, beside the same corpus over TCP into its tcp input in each
           run: ingest lines/s of each (RELP until the last acknowledgement) and their ratio.
  udp      fixed offered rates (--udp-rates), one datagram per line: loss for logfold (its
           output accounting, receive and queue-drop counters) and rsyslog (lines in its file),
           with the kernel's UDP RcvbufErrors delta (system-wide) and logfold's own count of
           them (logfold_udp_kernel_drops_total) beside them.
  latency  background lines at --latency-rate over TCP plus unique markers at 200/s; logfold's
           TCP output goes to the probe, which times each marker's `first` event.
  memory   a corpus of distinct lines (every line a new group, one scope, window 1h): RSS at
           10k, 100k and 1M open groups (--quick: 1k, 10k), bytes per group above the idle
           process, and how long each step took to ingest.
  tls      syslog over TLS (RFC 5425, TLS 1.3, one connection): logfold's tls input next to its
           plain tcp input and to rsyslog's imtcp with the ossl (or gtls) driver, same client
           (bench/e2e_tls.py), lines/s and server CPU µs per line. Not in the default --parts.
  kafka    one logfold kafka input consuming a pre-filled topic on a local broker (the jars of
           scripts/kafka-fixture), next to kcat reading the same topic to /dev/null in the same
           run: lines/s and lines per CPU-second of each (bench/e2e_kafka.py). Not in the
           default --parts.
  api      the live view at 1M open groups (--quick: 10k): GET /api/groups every 100 ms for
           --api-seconds, answer time p50/p99/max, and the RSS the workers' snapshot marks add.
           With --poll-api, the tcp and scaling parts poll the API every 100 ms during each
           logfold run, so their ratio shows whether a watching operator slows folding.

Loss: logfold = lines sent - (first events + sum of summary counts) in its output after
SIGTERM (which closes every group); rsyslog = lines sent - lines in its file. CPU seconds are
utime+stime of the server process (/proc/PID/stat) at the end of the run, peak RSS is VmHWM.
Exit status 1 if a TCP run loses or invents a line, or (--quick) any probe marker is missing.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED_GEN = os.path.join(os.path.dirname(ROOT), "shared", "corpus", "gen_corpus.py")
OWN_GEN = os.path.join(HERE, "gen_corpus.py")
CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def free_port(kind=socket.SOCK_STREAM):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bound(port, proto):
    """Whether a 127.0.0.1 socket is bound to `port` (TCP: listening), from /proc/net."""
    want = "0100007F:%04X" % port
    with open("/proc/net/" + proto) as f:
        for line in f.readlines()[1:]:
            cols = line.split()
            if cols[1] == want and (proto == "udp" or cols[3] == "0A"):
                return True
    return False


def wait_for(cond, timeout, what, interval=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(interval)
    raise RuntimeError("timed out after %.0f s waiting for %s" % (timeout, what))


def proc_cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


def proc_status_kib(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def udp_rcvbuf_errors():
    with open("/proc/net/snmp") as f:
        rows = [line.split() for line in f if line.startswith("Udp:")]
    return int(rows[1][rows[0].index("RcvbufErrors")])


def count_lines(path):
    n = 0
    with open(path, "rb") as f:
        while True:
            block = f.read(1 << 22)
            if not block:
                return n
            n += block.count(b"\n")


def md5sum(path):
    h = hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


# ------------------------------------------------------------------------------ corpus

def make_corpus(cache, lines, distinct=False):
    """Returns (path, description); generated once per size into the cache directory."""
    os.makedirs(cache, exist_ok=True)
    if distinct:
        cmd, name = [sys.executable, OWN_GEN, "--distinct", "--seed", "5", "-n", str(lines)], \
            "distinct"
    elif os.path.exists(SHARED_GEN):
        cmd, name = [sys.executable, SHARED_GEN, "--seed", "20240301", "-n", str(lines)], "shared"
    else:
        cmd, name = [sys.executable, OWN_GEN, "--seed", "5", "-n", str(lines)], "own"
    path = os.path.join(cache, "%s-%d.log" % (name, lines))
    if not os.path.exists(path):
        log("generating %s" % " ".join(cmd[1:]))
        with open(path + ".tmp", "w") as out:
            subprocess.run(cmd, stdout=out, check=True)
        os.rename(path + ".tmp", path)
    size = os.path.getsize(path)
    gen = os.path.relpath(cmd[1], ROOT)
    return path, {"generator": gen + " " + " ".join(cmd[2:]),
                  "lines": count_lines(path), "bytes": size, "md5": md5sum(path)}


# ------------------------------------------------------------------------------ servers

# --pin: "SERVER_CPUS:CLIENT_CPUS" lists for taskset, set once from the command line. Pinning
# gives the server and the load client cores of their own, so that neither's speed is set by
# how the scheduler shares two cores between them.
PIN = {"server": None, "client": None}


def pinned(argv, role):
    return ["taskset", "-c", PIN[role]] + argv if PIN[role] else argv


class Server:
    """A server process under test: its pid, its CPU and memory, and a clean stop."""

    def __init__(self, argv, workdir, name):
        self.name = name
        self.stderr_path = os.path.join(workdir, name + ".stderr")
        self.proc = subprocess.Popen(pinned(argv, "server"), stdout=subprocess.DEVNULL,
                                     stderr=open(self.stderr_path, "w"))

    def check_alive(self):
        if self.proc.poll() is not None:
            raise RuntimeError("%s exited with %s:\n%s" % (
                self.name, self.proc.returncode, open(self.stderr_path).read()[-2000:]))

    def usage(self):
        return {"cpu_s": proc_cpu_seconds(self.proc.pid),
                "peak_rss_mib": proc_status_kib(self.proc.pid, "VmHWM") / 1024}

    def stop(self, timeout=120):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise RuntimeError("%s did not exit within %d s of SIGTERM" % (self.name, timeout))


class Logfold(Server):
    def __init__(self, binary, workdir, inputs, threads=0, engine=None, outputs=None,
                 state=None):
        self.metrics_port = free_port()
        self.events = os.path.join(workdir, "logfold-events.ndjson")
        if os.path.exists(self.events):
            os.unlink(self.events)
        config = {
            "log": {"level": "warn", "stats_interval": "0"},
            "inputs": inputs,
            "engine": engine or {},
            "workers": {"threads": threads},
            "outputs": outputs or [{"name": "file", "type": "file", "path": self.events}],
            "metrics": {"enabled": True, "address": "127.0.0.1", "port": self.metrics_port},
        }
        if state is not None:
            shutil.rmtree(state["directory"], ignore_errors=True)
            config["state"] = state
        path = os.path.join(workdir, "logfold.json")
        with open(path, "w") as f:
            json.dump(config, f, indent=1)
        super().__init__([binary, "serve", "--config", path], workdir, "logfold")
        wait_for(lambda: self.check_alive() or bound(self.metrics_port, "tcp"), 15,
                 "logfold's metrics endpoint")
        for i in inputs:
            if "port" not in i:
                continue  # kafka: nothing to bind
            proto = "udp" if i["type"] == "udp" else "tcp"  # tls and relp listen on TCP
            wait_for(lambda: self.check_alive() or bound(i["port"], proto), 15,
                     "logfold's %s input" % i["type"])

    def metrics(self):
        """Sums of every metric by name (labels summed over)."""
        url = "http://127.0.0.1:%d/metrics" % self.metrics_port
        body = urllib.request.urlopen(url, timeout=10).read().decode()
        sums = {}
        for line in body.splitlines():
            if not line or line[0] == "#":
                continue
            name_labels, value = line.rsplit(" ", 1)
            name = name_labels.split("{", 1)[0]
            sums[name] = sums.get(name, 0) + float(value)
            if "{" in name_labels:
                sums[name_labels] = float(value)
        return sums

    def accounted(self):
        """first events + sum of summary counts in the output (call after stop())."""
        firsts = counted = 0
        count = re.compile(rb'"count":(\d+)')
        with open(self.events, "rb") as f:
            for line in f:
                if b'"kind":"first"' in line:
                    firsts += 1
                elif b'"kind":"summary"' in line:
                    counted += int(json.loads(line)["count"])
                elif line.startswith(b'{"kind":"new_value"'):
                    continue  # a notice: its line is counted in its group's summary
                elif count.search(line):
                    raise RuntimeError("unexpected event: %r" % line[:200])
        return firsts + counted


class Rsyslog(Server):
    def __init__(self, binary, workdir, proto):
        self.port = free_port(socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM)
        self.proto = proto
        self.out = os.path.join(workdir, "rsyslog-out.log")
        work = os.path.join(workdir, "rsyslog-work")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        if os.path.exists(self.out):
            os.unlink(self.out)
        text = open(os.path.join(HERE, "rsyslog", proto + ".conf")).read()
        text = text.replace("@WORK@", work).replace("@PORT@", str(self.port))
        conf = os.path.join(workdir, "rsyslog.conf")
        with open(conf, "w") as f:
            f.write(text.replace("@OUT@", self.out))
        pidfile = os.path.join(workdir, "rsyslog.pid")
        super().__init__([binary, "-n", "-f", conf, "-i", pidfile], workdir, "rsyslogd")
        wait_for(lambda: self.check_alive() or bound(self.port, proto), 15, "rsyslogd's input")

    def wait_output(self, expected, started, idle=1.0, give_up=3.0, timeout=600):
        """End time = last growth of the output file; returns (end, lines in the file)."""
        last_size, last_change = -1, started
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_alive()
            size = os.path.getsize(self.out) if os.path.exists(self.out) else 0
            now = time.monotonic()
            if size != last_size:
                last_size, last_change = size, now
            elif now - last_change >= idle:
                lines = count_lines(self.out) if size else 0
                if lines >= expected or now - last_change >= give_up:
                    return last_change, lines
            time.sleep(0.02)
        raise RuntimeError("rsyslogd output still growing after %d s" % timeout)


def run_client(replay, args, timeout=900):
    out = subprocess.run(pinned([replay] + args, "client"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         timeout=timeout, text=True)
    if out.returncode != 0:
        raise RuntimeError("syslog_replay %s failed (%d): %s" % (args[0], out.returncode,
                                                                 out.stderr.strip()))
    return json.loads(out.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------ parts

class ApiPoller:
    """GET /api/groups every `interval` s from a thread; answer times in ms."""

    def __init__(self, port, interval=0.1, query="sort=rate&limit=50"):
        self.url = "http://127.0.0.1:%d/api/groups?%s" % (port, query)
        self.interval, self.times, self.errors = interval, [], 0
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop_event.is_set():
            started = time.monotonic()
            try:
                json.loads(urllib.request.urlopen(self.url, timeout=10).read())
                self.times.append((time.monotonic() - started) * 1000)
            except Exception:  # counted: a failed poll is a finding, not a crash
                self.errors += 1
            self.stop_event.wait(max(0.0, self.interval - (time.monotonic() - started)))

    def stop(self):
        self.stop_event.set()
        self.thread.join()
        t = sorted(self.times)
        pick = lambda q: t[min(len(t) - 1, int(q * len(t)))] if t else None
        return {"api_polls": len(t), "api_errors": self.errors, "api_p50_ms": pick(0.5),
                "api_p99_ms": pick(0.99), "api_max_ms": t[-1] if t else None}


def tcp_logfold(a, corpus, workdir, threads=0, state=None):
    port = free_port()
    server = Logfold(a.logfold, workdir,
                     [{"name": "tcp", "type": "tcp", "address": "127.0.0.1", "port": port}],
                     threads=threads, state=state)
    poller = ApiPoller(server.metrics_port) if a.poll_api else None
    try:
        sent = run_client(a.replay, ["tcp", "--port", str(port)] + a.tcp_client + [corpus])

        def done():
            server.check_alive()
            m = server.metrics()
            return (m.get("logfold_lines_processed_total", 0) >= sent["lines"]
                    and m.get("logfold_sink_buffered_bytes", 0) == 0)
        wait_for(done, 600, "logfold to process every line")
        end = time.monotonic()
        usage = server.usage()
    finally:
        polls = poller.stop() if poller else {}
        server.stop()
    accounted = server.accounted()
    secs = end - sent["start"]
    return dict(usage, **polls, lines=sent["lines"], seconds=secs, lines_per_s=sent["lines"] / secs,
                mb_per_s=sent["bytes"] / secs / 1e6, accounted=accounted,
                lines_per_cpu_s=sent["lines"] / max(usage["cpu_s"], 0.01),
                loss=sent["lines"] - accounted,
                output_bytes=os.path.getsize(server.events))


def relp_logfold(a, corpus, workdir):
    """tcp_logfold's run with the relp input and syslog_replay's relp mode."""
    port = free_port()
    server = Logfold(a.logfold, workdir,
                     [{"name": "relp", "type": "relp", "address": "127.0.0.1", "port": port}])
    try:
        sent = run_client(a.replay, ["relp", "--port", str(port), "--window",
                                     str(a.relp_window), corpus])

        def done():
            server.check_alive()
            m = server.metrics()
            return (m.get("logfold_lines_processed_total", 0) >= sent["lines"]
                    and m.get("logfold_sink_buffered_bytes", 0) == 0)
        wait_for(done, 600, "logfold to process every line")
        end = time.monotonic()
        usage = server.usage()
    finally:
        server.stop()
    accounted = server.accounted()
    secs = end - sent["start"]
    return dict(usage, lines=sent["lines"], seconds=secs, lines_per_s=sent["lines"] / secs,
                acked_lines_per_s=sent["lines_per_s"], accounted=accounted,
                lines_per_cpu_s=sent["lines"] / max(usage["cpu_s"], 0.01),
                loss=sent["lines"] - accounted)


def tcp_rsyslog(a, corpus, workdir):
    server = Rsyslog(a.rsyslogd, workdir, "tcp")
    try:
        sent = run_client(a.replay, ["tcp", "--port", str(server.port)] + a.tcp_client + [corpus])
        end, got = server.wait_output(sent["lines"], sent["start"])
        usage = server.usage()
    finally:
        server.stop()
    secs = end - sent["start"]
    return dict(usage, lines=sent["lines"], seconds=secs, lines_per_s=sent["lines"] / secs,
                mb_per_s=sent["bytes"] / secs / 1e6, accounted=got, loss=sent["lines"] - got,
                lines_per_cpu_s=sent["lines"] / max(usage["cpu_s"], 0.01),
                output_bytes=os.path.getsize(server.out))


def udp_logfold(a, corpus, workdir, rate, lines):
    port = free_port(socket.SOCK_DGRAM)
    server = Logfold(a.logfold, workdir,
                     [{"name": "udp", "type": "udp", "address": "127.0.0.1", "port": port,
                       "receive_buffer": "4MiB"}])
    try:
        kernel0 = udp_rcvbuf_errors()
        sent = run_client(a.replay, ["udp", "--port", str(port), "--rate", str(rate),
                                     "--lines", str(lines), "--sockets", str(a.udp_sockets),
                                     corpus])
        # Done when nothing moves any more: the received counter and the processed counter
        # unchanged for 0.5 s, and every received line either processed or counted dropped.
        last, since = None, time.monotonic()
        deadline = since + 120
        while time.monotonic() < deadline:
            m = server.metrics()
            key = (m.get("logfold_received_total", 0), m.get("logfold_lines_processed_total", 0))
            if key != last:
                last, since = key, time.monotonic()
            elif time.monotonic() - since > 0.5 and \
                    key[1] + m.get("logfold_dropped_total", 0) >= key[0]:
                break
            time.sleep(0.05)
        kernel = udp_rcvbuf_errors() - kernel0
        usage = server.usage()
    finally:
        server.stop()
    accounted = server.accounted()
    return dict(usage, offered=rate, lines=sent["lines"], sent_rate=sent["lines_per_s"],
                received=int(m.get("logfold_received_total", 0)),
                queue_dropped=int(m.get("logfold_dropped_total", 0)),
                kernel_rcvbuf_errors=kernel,
                kernel_drops_metric=int(m.get("logfold_udp_kernel_drops_total", -1)),
                accounted=accounted,
                loss=sent["lines"] - accounted)


def udp_rsyslog(a, corpus, workdir, rate, lines):
    server = Rsyslog(a.rsyslogd, workdir, "udp")
    try:
        kernel0 = udp_rcvbuf_errors()
        sent = run_client(a.replay, ["udp", "--port", str(server.port), "--rate", str(rate),
                                     "--lines", str(lines), "--sockets", str(a.udp_sockets),
                                     corpus])
        _, got = server.wait_output(sent["lines"], time.monotonic(), idle=0.5, give_up=1.5)
        kernel = udp_rcvbuf_errors() - kernel0
        usage = server.usage()
    finally:
        server.stop()
    got = count_lines(server.out)  # after the stop: everything it wrote
    return dict(usage, offered=rate, lines=sent["lines"], sent_rate=sent["lines_per_s"],
                received=None, queue_dropped=None, kernel_rcvbuf_errors=kernel, accounted=got,
                loss=sent["lines"] - got)


def latency_logfold(a, corpus, workdir, rate, seconds, observe=None):
    """observe(server, "start"|"end"): called once logfold runs and once the probe is done."""
    in_port = free_port()
    probe = subprocess.Popen(
        pinned([a.replay, "probe", "--port", str(in_port), "--listen", "0", "--rate", str(rate),
                "--marker-rate", "200", "--seconds", str(seconds), corpus], "client"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        listening = json.loads(probe.stdout.readline())["listening"]
        server = Logfold(a.logfold, workdir,
                         [{"name": "tcp", "type": "tcp", "address": "127.0.0.1",
                           "port": in_port}],
                         outputs=[{"name": "probe", "type": "tcp", "address": "127.0.0.1",
                                   "port": listening, "reconnect_min": "10ms",
                                   "reconnect_max": "100ms"}])
        try:
            if observe:
                observe(server, "start")
            # The probe prints its result, then reads until logfold closes the connection.
            out = probe.stdout.readline()
            if observe:
                observe(server, "end")
            usage = server.usage()
        finally:
            server.stop()
        probe.wait(30)
    finally:
        if probe.poll() is None:
            probe.kill()
            probe.wait()
    if not out.strip():
        raise RuntimeError("probe failed: " + probe.stderr.read().strip())
    return dict(json.loads(out), **usage)


def memory_logfold(a, workdir, steps):
    corpus, info = make_corpus(a.cache, steps[-1], distinct=True)
    port = free_port()
    server = Logfold(a.logfold, workdir,
                     [{"name": "tcp", "type": "tcp", "address": "127.0.0.1", "port": port}],
                     engine={"window": "1h", "max_hold": "1h", "max_groups": 2 * steps[-1]})
    rows = []
    try:
        time.sleep(0.2)
        base = proc_status_kib(server.proc.pid, "VmRSS")
        done = 0
        for n in steps:
            ingest_start = time.monotonic()
            run_client(a.replay, ["tcp", "--port", str(port), "--offset", str(done),
                                  "--lines", str(n - done), corpus])
            wait_for(lambda: server.check_alive() or
                     server.metrics().get("logfold_lines_processed_total", 0) >= n,
                     600, "logfold to process %d lines" % n)
            done = n
            m = server.metrics()
            rss = proc_status_kib(server.proc.pid, "VmRSS")
            groups = int(m.get("logfold_groups_open", 0))
            rows.append({"lines": n, "groups_open": groups, "rss_mib": rss / 1024,
                         "idle_rss_mib": base / 1024,
                         "ingest_s": time.monotonic() - ingest_start,
                         "bytes_per_group": (rss - base) * 1024 / max(groups, 1)})
    finally:
        # No accounting here, and closing a million groups at shutdown takes minutes (see
        # bench/RESULTS.md): kill.
        server.proc.kill()
        server.proc.wait()
    return rows, info


def api_logfold(a, workdir, groups, seconds):
    corpus, info = make_corpus(a.cache, groups, distinct=True)
    port = free_port()
    server = Logfold(a.logfold, workdir,
                     [{"name": "tcp", "type": "tcp", "address": "127.0.0.1", "port": port}],
                     engine={"window": "1h", "max_hold": "1h", "max_groups": 2 * groups})
    try:
        run_client(a.replay, ["tcp", "--port", str(port), corpus])
        wait_for(lambda: server.check_alive() or
                 server.metrics().get("logfold_lines_processed_total", 0) >= groups,
                 600, "logfold to process %d lines" % groups)
        rss_before = proc_status_kib(server.proc.pid, "VmRSS")
        poller = ApiPoller(server.metrics_port)
        time.sleep(seconds)
        row = poller.stop()
        row.update(groups_open=int(server.metrics().get("logfold_groups_open", 0)),
                   rss_before_mib=rss_before / 1024,
                   rss_watched_mib=proc_status_kib(server.proc.pid, "VmRSS") / 1024,
                   cpu_s=proc_cpu_seconds(server.proc.pid))
    finally:
        server.proc.kill()  # closing a million groups takes long; nothing to account here
        server.proc.wait()
    return row, info


# ------------------------------------------------------------------------------ report

def fmt(v, spec="%.0f"):
    return "–" if v is None else spec % v


def summarize(rows, keys):
    return {k: median([r[k] for r in rows]) for k in keys}


def print_table(title, header, rows):
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    print("\n### %s (load average at the end: %s)" % (title, load))
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(r) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smoke run: tiny corpus, 1 run")
    ap.add_argument("--runs", type=int, default=None, help="runs per case (3; --quick: 1)")
    ap.add_argument("--lines", type=int, default=None, help="corpus lines (1M; --quick: 20k)")
    ap.add_argument("--parts", default="tcp,scaling,relp,udp,latency,memory")
    ap.add_argument("--relp-window", type=int, default=1024,
                    help="relp part: frames the client keeps in flight (1024)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="build directory holding logfold and syslog_replay")
    ap.add_argument("--logfold", help="logfold binary (default: BUILD/logfold)")
    ap.add_argument("--kafka-base", metavar="BINARY",
                    help="kafka part: another logfold binary (e.g. main's) read in the same "
                         "alternation, for before/after ratios")
    ap.add_argument("--replay", help="syslog_replay binary (default: BUILD/syslog_replay)")
    ap.add_argument("--rsyslogd", default=shutil.which("rsyslogd") or "/usr/sbin/rsyslogd")
    ap.add_argument("--no-rsyslog", action="store_true")
    ap.add_argument("--tcp-framing", choices=["newline", "octet"], default="newline",
                    help="TCP and scaling parts: how the client frames lines")
    ap.add_argument("--tcp-connections", type=int, default=1,
                    help="TCP and scaling parts: connections the corpus is split over")
    ap.add_argument("--udp-rates", default=None,
                    help="datagrams/s, comma-separated (100000,...,600000; --quick: 20000)")
    ap.add_argument("--udp-sockets", type=int, default=2,
                    help="sender threads of the UDP client, each on its own socket (2: one "
                         "thread's kernel send path tops out near 250-400 k/s on a 2-core box)")
    ap.add_argument("--udp-seconds", type=float, default=None, help="per rate (3; --quick: 0.5)")
    ap.add_argument("--poll-api", action="store_true",
                    help="tcp and scaling parts: poll logfold's /api/groups every 100 ms")
    ap.add_argument("--api-seconds", type=float, default=None, help="api part (10; --quick: 1)")
    ap.add_argument("--latency-rate", type=int, default=100000)
    ap.add_argument("--latency-seconds", type=float, default=None, help="(10; --quick: 1)")
    ap.add_argument("--cache", default=None, help="corpus directory (default: BUILD/e2e-corpus)")
    ap.add_argument("--json", help="also write every run's raw figures to this file")
    ap.add_argument("--pin", metavar="SERVER:CLIENT",
                    help="CPU lists for taskset, e.g. 1:0 runs the servers on core 1 and the "
                         "client on core 0 (default: unpinned)")
    a = ap.parse_args()
    if a.pin:
        PIN["server"], _, PIN["client"] = a.pin.partition(":")
    runs = a.runs or (1 if a.quick else 3)
    a.tcp_client = ["--framing", a.tcp_framing, "--connections", str(a.tcp_connections)]
    lines = a.lines or (20000 if a.quick else 1000000)
    rates = [int(float(r)) for r in (a.udp_rates or (
        "20000" if a.quick else "100000,200000,300000,450000,600000")).split(",")]
    udp_seconds = a.udp_seconds or (0.5 if a.quick else 3.0)
    latency_seconds = a.latency_seconds or (1.0 if a.quick else 10.0)
    a.logfold = a.logfold or os.path.join(a.build, "logfold")
    a.replay = a.replay or os.path.join(a.build, "syslog_replay")
    a.cache = a.cache or os.path.join(a.build, "e2e-corpus")
    for b in (a.logfold, a.replay):
        if not os.access(b, os.X_OK):
            sys.exit("not found: %s (build the logfold and syslog_replay targets, or --build)" % b)
    rsyslog = not a.no_rsyslog and os.access(a.rsyslogd, os.X_OK)
    if not rsyslog and not a.no_rsyslog:
        log("rsyslogd not found (Debian package rsyslog): logfold only")
    parts = a.parts.split(",")
    workdir = tempfile.mkdtemp(prefix="logfold-e2e-")
    failures = []
    raw = {}
    try:
        corpus, info = make_corpus(a.cache, lines)
        raw["corpus"] = info
        load = open("/proc/loadavg").read().split()[:3]
        model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                      if l.startswith("model name")), "?")
        print("## logfold e2e: %s, %d CPUs, load %s; %d run(s) per case" % (
            model, os.cpu_count(), " ".join(load), runs))
        print("corpus: %s: %d lines, %.1f MB, md5 %s" % (
            info["generator"], info["lines"], info["bytes"] / 1e6, info["md5"]))

        if "tcp" in parts:
            lf, rs = [], []
            for i in range(runs):
                log("tcp run %d/%d: logfold" % (i + 1, runs))
                lf.append(tcp_logfold(a, corpus, workdir))
                if rsyslog:
                    log("tcp run %d/%d: rsyslog" % (i + 1, runs))
                    rs.append(tcp_rsyslog(a, corpus, workdir))
            raw["tcp"] = {"logfold": lf, "rsyslog": rs}
            keys = ["lines_per_s", "mb_per_s", "seconds", "cpu_s", "lines_per_cpu_s",
                    "peak_rss_mib", "loss"]
            table = []
            for name, rows in (("logfold", lf), ("rsyslog", rs)):
                if rows:
                    s = summarize(rows, keys)
                    table.append([name, fmt(s["lines_per_s"]), fmt(s["mb_per_s"], "%.1f"),
                                  fmt(s["seconds"], "%.2f"), fmt(s["cpu_s"], "%.2f"),
                                  fmt(s["lines_per_cpu_s"]), fmt(s["peak_rss_mib"], "%.1f"),
                                  " / ".join(str(r["loss"]) for r in rows),
                                  ", ".join("%.0f" % r["lines_per_s"] for r in rows)])
            if rs:
                ratio = median([l["lines_per_s"] / r["lines_per_s"] for l, r in zip(lf, rs)])
                cpu_ratio = median([l["lines_per_cpu_s"] / r["lines_per_cpu_s"]
                                    for l, r in zip(lf, rs)])
                table.append(["**ratio logfold/rsyslog**", "**%.2f**" % ratio, "", "", "",
                              "**%.2f**" % cpu_ratio, "", "", "per run: " + ", ".join(
                                  "%.2f" % (l["lines_per_s"] / r["lines_per_s"])
                                  for l, r in zip(lf, rs))])
            print_table("TCP in -> file out, %d lines, %s framing, %d connection(s), medians of %d"
                        % (lines, a.tcp_framing, a.tcp_connections, runs),
                        ["server", "lines/s", "MB/s in", "wall s", "CPU s", "lines/CPU-s",
                         "peak RSS MiB", "loss per run", "lines/s per run"], table)
            for r in lf + rs:
                if r["loss"] != 0:
                    failures.append("tcp run lost %d lines" % r["loss"])

        if "durability" in parts:
            state_dir = os.path.join(workdir, "state")
            modes = [("default (no state)", None),
                     ("checkpoints 1s", {"directory": state_dir, "checkpoint_interval": "1s"}),
                     ("checkpoints 100ms",
                      {"directory": state_dir, "checkpoint_interval": "100ms"}),
                     ("journal", {"directory": state_dir, "journal": True})]
            rows = {name: [] for name, _ in modes}
            for i in range(runs):
                for name, state in modes:
                    log("durability run %d/%d: %s" % (i + 1, runs, name))
                    rows[name].append(tcp_logfold(a, corpus, workdir, state=state))
            raw["durability"] = rows
            base = rows[modes[0][0]]
            table = []
            for name, _ in modes:
                s = summarize(rows[name], ["lines_per_s", "cpu_s", "peak_rss_mib"])
                share = median([r["lines_per_s"] / b["lines_per_s"]
                                for r, b in zip(rows[name], base)])
                table.append([name, fmt(s["lines_per_s"]), "%.0f %%" % (100 * share),
                              fmt(s["cpu_s"], "%.2f"), fmt(s["peak_rss_mib"], "%.1f"),
                              " / ".join(str(r["loss"]) for r in rows[name]),
                              ", ".join("%.0f" % r["lines_per_s"] for r in rows[name])])
                for r in rows[name]:
                    if r["loss"] != 0:
                        failures.append("durability run (%s) lost %d lines" % (name, r["loss"]))
            print_table("Durability modes, TCP in -> file out, %d lines, medians of %d"
                        % (lines, runs),
                        ["mode", "lines/s", "of default", "CPU s", "peak RSS MiB",
                         "loss per run", "lines/s per run"], table)

        if "scaling" in parts:
            rows = {1: [], 2: []}
            for i in range(runs):
                for t in (1, 2):
                    log("scaling run %d/%d: %d worker(s)" % (i + 1, runs, t))
                    rows[t].append(tcp_logfold(a, corpus, workdir, threads=t))
            raw["scaling"] = rows
            table = []
            for t in (1, 2):
                s = summarize(rows[t], ["lines_per_s", "cpu_s", "lines_per_cpu_s",
                                        "peak_rss_mib"])
                table.append([str(t), fmt(s["lines_per_s"]), fmt(s["cpu_s"], "%.2f"),
                              fmt(s["lines_per_cpu_s"]),
                              fmt(s["peak_rss_mib"], "%.1f"),
                              ", ".join("%.0f" % r["lines_per_s"] for r in rows[t])])
            ratio = median([b["lines_per_s"] / o["lines_per_s"] for o, b in zip(rows[1], rows[2])])
            table.append(["2 vs 1", "%.2f×" % ratio, "", "", "", ""])
            print_table("Scaling: logfold workers.threads, TCP, medians of %d" % runs,
                        ["workers", "lines/s", "CPU s", "lines/CPU-s", "peak RSS MiB",
                         "lines/s per run"], table)

        if "relp" in parts:
            tcp_rows, relp_rows = [], []
            for i in range(runs):
                log("relp run %d/%d: tcp, then relp" % (i + 1, runs))
                tcp_rows.append(tcp_logfold(a, corpus, workdir))
                relp_rows.append(relp_logfold(a, corpus, workdir))
            raw["relp"] = {"tcp": tcp_rows, "relp": relp_rows}
            table = []
            for name, rows in (("tcp", tcp_rows), ("relp", relp_rows)):
                s = summarize(rows, ["lines_per_s", "cpu_s", "lines_per_cpu_s", "peak_rss_mib"])
                table.append([name, fmt(s["lines_per_s"]), fmt(s["cpu_s"], "%.2f"),
                              fmt(s["lines_per_cpu_s"]), fmt(s["peak_rss_mib"], "%.1f"),
                              " / ".join(str(r["loss"]) for r in rows),
                              ", ".join("%.0f" % r["lines_per_s"] for r in rows)])
            ratio = median([r["lines_per_s"] / t["lines_per_s"]
                            for t, r in zip(tcp_rows, relp_rows)])
            table.append(["**relp/tcp**", "**%.2f**" % ratio, "", "", "", "", ""])
            print_table("Ingest: TCP vs RELP (window %d) -> logfold -> file, %d lines, medians "
                        "of %d" % (a.relp_window, lines, runs),
                        ["input", "lines/s", "CPU s", "lines/CPU-s", "peak RSS MiB",
                         "loss per run", "lines/s per run"], table)
            for r in tcp_rows + relp_rows:
                if r["loss"] != 0:
                    failures.append("relp part: a run lost %d lines" % r["loss"])

        if "udp" in parts:
            lf, rs = {}, {}
            for rate in rates:
                n = int(rate * udp_seconds)
                for i in range(runs):
                    log("udp %d/s run %d/%d" % (rate, i + 1, runs))
                    lf.setdefault(rate, []).append(udp_logfold(a, corpus, workdir, rate, n))
                    if rsyslog:
                        rs.setdefault(rate, []).append(udp_rsyslog(a, corpus, workdir, rate, n))
            raw["udp"] = {"logfold": lf, "rsyslog": rs}
            table = []
            best = {}
            short = set()
            for rate in rates:
                for name, d in (("logfold", lf), ("rsyslog", rs)):
                    if rate not in d:
                        continue
                    rows = d[rate]
                    losses = [r["loss"] / r["lines"] * 100 for r in rows]
                    if all(r["loss"] == 0 for r in rows):
                        best[name] = max(best.get(name, 0), rate)
                    if median([r["sent_rate"] for r in rows]) < 0.95 * rate:
                        short.add(rate)
                    table.append([
                        "%dk" % (rate // 1000), name, fmt(median([r["sent_rate"] for r in rows])),
                        " / ".join("%.2f" % l for l in losses),
                        " / ".join(fmt(r["received"]) for r in rows),
                        " / ".join(fmt(r["queue_dropped"]) for r in rows),
                        " / ".join(str(r["kernel_rcvbuf_errors"]) for r in rows),
                        " / ".join(fmt(r.get("kernel_drops_metric", -1))
                                   if r.get("kernel_drops_metric", -1) >= 0 else "–"
                                   for r in rows),
                        fmt(median([r["cpu_s"] for r in rows]), "%.2f")])
            print_table("UDP at fixed offered rates, %.1f s each, %d run(s)" % (udp_seconds, runs),
                        ["offered/s", "server", "sent/s", "loss % per run", "received (logfold)",
                         "queue drops", "kernel RcvbufErrors",
                         "logfold_udp_kernel_drops_total", "CPU s"], table)
            print("highest loss-free offered rate (every run 0 loss): " + ", ".join(
                "%s %s" % (k, "%dk/s" % (v // 1000)) for k, v in sorted(best.items()))
                  if best else "highest loss-free offered rate: none of the rates tried")
            if short:
                print("the client sent below the offered rate at %s/s (CPU-bound or starved)" %
                      ", ".join("%dk" % (r // 1000) for r in sorted(short)))
            raw["udp_loss_free"] = best

        if "tls" in parts:
            import e2e_tls  # bench/e2e_tls.py: the part's servers, client and table
            e2e_tls.run(sys.modules[__name__], a, corpus, workdir, runs, rsyslog, raw, failures)

        if "latency" in parts:
            rows = []
            for i in range(runs):
                log("latency run %d/%d" % (i + 1, runs))
                rows.append(latency_logfold(a, corpus, workdir, a.latency_rate, latency_seconds))
            raw["latency"] = rows
            table = [["%d" % (i + 1), "%.0f" % r["background_rate"],
                      "%d/%d" % (r["markers_received"], r["markers_sent"]),
                      "%.2f" % r["latency_ms_p50"], "%.2f" % r["latency_ms_p99"],
                      "%.2f" % r["latency_ms_max"], "%.2f" % r["cpu_s"]]
                     for i, r in enumerate(rows)]
            table.append(["median", "", "", "%.2f" % median([r["latency_ms_p50"] for r in rows]),
                          "%.2f" % median([r["latency_ms_p99"] for r in rows]),
                          "%.2f" % median([r["latency_ms_max"] for r in rows]), ""])
            print_table("Latency: marker sent -> its `first` event at the TCP output, %d "
                        "lines/s background, 200 markers/s, %.0f s" % (
                            a.latency_rate, latency_seconds),
                        ["run", "background sent/s", "markers", "p50 ms", "p99 ms", "max ms",
                         "logfold CPU s"], table)
            for r in rows:
                if r["markers_received"] != r["markers_sent"]:
                    failures.append("latency: %d of %d markers arrived" % (
                        r["markers_received"], r["markers_sent"]))

        if "memory" in parts:
            steps = [1000, 10000] if a.quick else [10000, 100000, 1000000]
            log("memory: %s open groups" % steps)
            rows, minfo = memory_logfold(a, workdir, steps)
            raw["memory"] = {"corpus": minfo, "steps": rows}
            print_table("Memory: RSS by open groups (%s)" % minfo["generator"],
                        ["open groups", "RSS MiB", "idle RSS MiB", "bytes/group above idle",
                         "step ingest s"],
                        [["%d" % r["groups_open"], "%.1f" % r["rss_mib"],
                          "%.1f" % r["idle_rss_mib"], "%.0f" % r["bytes_per_group"],
                          "%.1f" % r["ingest_s"]]
                         for r in rows])
            for r in rows:
                if r["groups_open"] != r["lines"]:
                    failures.append("memory: %d lines opened %d groups" % (
                        r["lines"], r["groups_open"]))
        if "kafka" in parts:
            import e2e_kafka
            e2e_kafka.run(sys.modules[__name__], a, corpus, lines, runs, workdir, raw, failures)
        if "api" in parts:
            groups = 10000 if a.quick else 1000000
            log("api: %d open groups" % groups)
            row, ainfo = api_logfold(a, workdir, groups, a.api_seconds or (1.0 if a.quick else 10.0))
            raw["api"] = {"corpus": ainfo, "result": row}
            print_table("Live view: GET /api/groups every 100 ms with %d open groups" %
                        row["groups_open"],
                        ["polls", "errors", "p50 ms", "p99 ms", "max ms", "RSS MiB before",
                         "RSS MiB watched"],
                        [[str(row["api_polls"]), str(row["api_errors"]),
                          fmt(row["api_p50_ms"], "%.1f"), fmt(row["api_p99_ms"], "%.1f"),
                          fmt(row["api_max_ms"], "%.1f"), "%.1f" % row["rss_before_mib"],
                          "%.1f" % row["rss_watched_mib"]]])
            if row["api_errors"] or not row["api_polls"]:
                failures.append("api: %d failed polls of %d" % (row["api_errors"],
                                                                 row["api_polls"]))
    finally:
        if a.json:
            with open(a.json, "w") as f:
                json.dump(raw, f, indent=1, default=str)
        shutil.rmtree(workdir, ignore_errors=True)
    for f in failures:
        print("FAILED: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
