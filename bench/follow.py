#!/usr/bin/env python3
"""Followed-file and journald input throughput: logfold vs a private rsyslogd in one run.

file      the corpus (bench/e2e.py's) as an existing log file that the server follows from its
          start: logfold's `file` input vs rsyslog's imfile (inotify mode) -> omfile, servers
          alternated run by run. Time = server start to the last line processed (logfold: its
          /metrics count every line processed and no unwritten output bytes; rsyslog: last
          growth of its output file, which must hold every line).
journald  the corpus' first --journal-lines lines as MESSAGE of journal entries in a private
          journal directory (written beforehand by systemd-journal-remote): logfold's `journald`
          input reading it from the start. rsyslog's imjournal cannot read a directory, so the
          reference is `journalctl -D DIR -o short` to /dev/null (systemd's own reader).

Usage: bench/follow.py [--build build] [--runs 3] [--lines 1000000] [--quick]
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import e2e  # noqa: E402  (the corpus, process and metric helpers of the TCP benchmark)

JOURNAL_REMOTE = "/lib/systemd/systemd-journal-remote"


class Proc:
    def __init__(self, argv, workdir, name):
        self.name = name
        self.stderr_path = os.path.join(workdir, name + ".stderr")
        self.start = time.monotonic()
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                     stderr=open(self.stderr_path, "w"))

    def check_alive(self):
        if self.proc.poll() is not None:
            raise RuntimeError("%s exited with %s:\n%s" % (
                self.name, self.proc.returncode, open(self.stderr_path).read()[-2000:]))

    def cpu_s(self):
        return e2e.proc_cpu_seconds(self.proc.pid)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def logfold_run(binary, workdir, input_config, lines):
    port = e2e.free_port()
    events = os.path.join(workdir, "logfold-events.ndjson")
    if os.path.exists(events):
        os.unlink(events)
    config = {"log": {"level": "warn", "stats_interval": "0"}, "inputs": [input_config],
              "outputs": [{"name": "file", "type": "file", "path": events}],
              "metrics": {"address": "127.0.0.1", "port": port}}
    path = os.path.join(workdir, "logfold.json")
    with open(path, "w") as f:
        json.dump(config, f)
    server = Proc([binary, "serve", "--config", path], workdir, "logfold")
    try:
        def done():
            server.check_alive()
            try:
                body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port,
                                              timeout=10).read().decode()
            except OSError:
                return False
            m = {}
            for line in body.splitlines():
                if line and line[0] != "#":
                    name, value = line.rsplit(" ", 1)
                    key = name.split("{", 1)[0]
                    m[key] = m.get(key, 0) + float(value)
            return (m.get("logfold_lines_processed_total", 0) >= lines
                    and m.get("logfold_sink_buffered_bytes", 0) == 0)
        e2e.wait_for(done, 600, "logfold to process every line")
        secs = time.monotonic() - server.start
        cpu = server.cpu_s()
    finally:
        server.stop()
    return {"seconds": secs, "lines_per_s": lines / secs, "cpu_s": cpu,
            "lines_per_cpu_s": lines / max(cpu, 0.01)}


def rsyslog_imfile_run(binary, workdir, corpus, lines):
    out = os.path.join(workdir, "rsyslog-out.log")
    work = os.path.join(workdir, "rsyslog-work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if os.path.exists(out):
        os.unlink(out)
    text = open(os.path.join(HERE, "rsyslog", "imfile.conf")).read()
    conf = os.path.join(workdir, "rsyslog.conf")
    with open(conf, "w") as f:
        f.write(text.replace("@WORK@", work).replace("@IN@", corpus).replace("@OUT@", out))
    server = Proc([binary, "-n", "-f", conf, "-i", os.path.join(workdir, "rsyslog.pid")], workdir,
                  "rsyslogd")
    try:
        last_size, last_change = -1, time.monotonic()
        deadline = time.monotonic() + 600
        while True:
            server.check_alive()
            size = os.path.getsize(out) if os.path.exists(out) else 0
            now = time.monotonic()
            if size != last_size:
                last_size, last_change = size, now
            elif now - last_change >= 1.0 and size and e2e.count_lines(out) >= lines:
                break
            if now > deadline:
                raise RuntimeError("rsyslogd did not write every line")
            time.sleep(0.02)
        got = e2e.count_lines(out)
        cpu = server.cpu_s()
    finally:
        server.stop()
    secs = last_change - server.start
    return {"seconds": secs, "lines_per_s": lines / secs, "cpu_s": cpu,
            "lines_per_cpu_s": lines / max(cpu, 0.01), "lines_out": got}


def make_journal(corpus, lines, directory):
    """Writes the corpus' first `lines` lines as journal entries; returns the directory."""
    os.makedirs(directory, exist_ok=True)
    export = os.path.join(directory, "entries.export")
    base_us = 1714564800000000
    with open(corpus, "rb") as src, open(export, "wb") as dst:
        for i, line in enumerate(src):
            if i == lines:
                break
            msg = line.rstrip(b"\n").replace(b"\n", b" ")
            dst.write(b"__REALTIME_TIMESTAMP=%d\n__MONOTONIC_TIMESTAMP=%d\n"
                      b"_BOOT_ID=8b1f6f6a5b3c4d2e9f0a1b2c3d4e5f60\n_HOSTNAME=bench\n"
                      b"SYSLOG_IDENTIFIER=app%d\n_PID=%d\nPRIORITY=6\nMESSAGE=%s\n\n"
                      % (base_us + i, 1000 + i, i % 20, 100 + i % 50, msg))
    subprocess.run([JOURNAL_REMOTE, "--output=" + os.path.join(directory, "bench.journal"),
                    "--split-mode=none", export], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    os.unlink(export)
    return directory


def journalctl_run(directory, lines):
    start = time.monotonic()
    before = os.times()
    subprocess.run(["journalctl", "-D", directory, "-o", "short", "--no-pager"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = os.times()
    secs = time.monotonic() - start
    cpu = (after.children_user - before.children_user) + (after.children_system -
                                                          before.children_system)
    return {"seconds": secs, "lines_per_s": lines / secs, "cpu_s": cpu,
            "lines_per_cpu_s": lines / max(cpu, 0.01)}


def table(title, rows):
    print("\n" + title)
    print("| reader | lines/s (median) | per run | CPU s (median) | lines/CPU-s |")
    print("|---|---|---|---|---|")
    for name, runs in rows:
        print("| %s | %.0f k | %s | %.2f | %.0f k |" % (
            name, e2e.median([r["lines_per_s"] for r in runs]) / 1e3,
            ", ".join("%.0f k" % (r["lines_per_s"] / 1e3) for r in runs),
            e2e.median([r["cpu_s"] for r in runs]),
            e2e.median([r["lines_per_cpu_s"] for r in runs]) / 1e3))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=os.path.join(os.path.dirname(HERE), "build"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--lines", type=int, default=1000000)
    ap.add_argument("--journal-lines", type=int, default=200000)
    ap.add_argument("--quick", action="store_true", help="smoke: 50k lines, 1 run")
    ap.add_argument("--rsyslogd", default=shutil.which("rsyslogd") or "/usr/sbin/rsyslogd")
    a = ap.parse_args()
    if a.quick:
        a.lines, a.journal_lines, a.runs = 50000, 20000, 1
    binary = os.path.join(a.build, "logfold")
    corpus, info = e2e.make_corpus(os.path.join(a.build, "e2e-corpus"), a.lines)
    print("corpus: %s, %d lines, %.1f MB" % (info["generator"], info["lines"], info["bytes"] / 1e6))
    with tempfile.TemporaryDirectory(prefix="logfold-follow-") as workdir:
        lf, rs = [], []
        for i in range(a.runs):
            e2e.log("file run %d/%d: logfold" % (i + 1, a.runs))
            lf.append(logfold_run(binary, workdir, {"name": "file", "type": "file",
                                                    "path": corpus}, info["lines"]))
            e2e.log("file run %d/%d: rsyslog imfile" % (i + 1, a.runs))
            rs.append(rsyslog_imfile_run(a.rsyslogd, workdir, corpus, info["lines"]))
        table("**Followed file, %d lines, read from its start -> fold -> NDJSON file**"
              % info["lines"], [("logfold `file`", lf), ("rsyslog imfile -> omfile", rs)])
        print("ratio (median lines/s): %.2f" % (e2e.median([r["lines_per_s"] for r in lf]) /
                                                e2e.median([r["lines_per_s"] for r in rs])))
        if os.path.exists(JOURNAL_REMOTE):
            n = min(a.journal_lines, info["lines"])
            jdir = make_journal(corpus, n, os.path.join(workdir, "journal"))
            lj, jc = [], []
            for i in range(a.runs):
                e2e.log("journald run %d/%d" % (i + 1, a.runs))
                lj.append(logfold_run(binary, workdir, {"name": "journal", "type": "journald",
                                                        "journal_directory": jdir}, n))
                jc.append(journalctl_run(jdir, n))
            table("**Journal, %d entries in a private directory, read from its start**" % n,
                  [("logfold `journald` -> fold -> NDJSON file", lj),
                   ("journalctl -D DIR -o short > /dev/null", jc)])


if __name__ == "__main__":
    main()
