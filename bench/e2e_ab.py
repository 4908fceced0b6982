#!/usr/bin/env python3
"""A/B end-to-end runs for a noisy machine: two or more logfold binaries, alternated run by run.

Reuses bench/e2e.py's UDP and latency parts, so the figures mean the same as there, but runs
old and new back to back for each repetition: on a shared box only such pairs compare.

  bench/e2e_ab.py --parts udp --udp-rates 300000,450000 --runs 3 OLD/logfold NEW/logfold
  bench/e2e_ab.py --parts latency --runs 4 --threads OLD/logfold NEW/logfold

Each line is one run. UDP: offered rate, client rate, loss %, kernel RcvbufErrors delta
(system-wide), logfold_udp_kernel_drops_total (-1: the binary has no such metric), queue drops,
server CPU s. Latency: p50/p99/max ms, server CPU s, the box's idle and steal % over the run
and the TcpExt DelayedACKs delta; with --threads also each logfold thread's CPU time and
run-queue wait (/proc/PID/task/*/schedstat), which shows whether a tail was spent off CPU.
"""
import argparse
import glob
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402


def cpu_times():
    return [int(x) for x in open("/proc/stat").readline().split()[1:]]


def tcp_ext(key):
    rows = [line.split() for line in open("/proc/net/netstat") if line.startswith("TcpExt:")]
    return int(dict(zip(rows[0][1:], rows[1][1:]))[key])


def sched(pid):
    """tid -> (cpu ns, run-queue wait ns, timeslices) of every thread of pid."""
    out = {}
    for task in glob.glob("/proc/%d/task/*" % pid):
        try:
            out[task.rsplit("/", 1)[1]] = [int(x) for x in open(task + "/schedstat").read().split()]
        except OSError:
            pass
    return out


def latency_run(a, binary, corpus, workdir):
    """e2e.latency_logfold with the box's idle/steal, DelayedACKs and per-thread waits."""
    seen = {}

    def observe(server, when):
        seen[when] = (cpu_times(), tcp_ext("DelayedACKs"), sched(server.proc.pid))

    a.logfold = binary
    r = e2e.latency_logfold(a, corpus, workdir, a.latency_rate, a.latency_seconds, observe)
    (cpu0, acks0, threads0), (cpu1, acks1, threads1) = seen["start"], seen["end"]
    d = [y - x for x, y in zip(cpu0, cpu1)]
    total = max(1, sum(d))
    line = ("p50 %.2f p99 %.2f max %.2f ms  cpu %.2f s  box idle %.0f%% steal %.0f%%  "
            "DelayedACKs +%d" % (r["latency_ms_p50"], r["latency_ms_p99"], r["latency_ms_max"],
                                 r["cpu_s"], 100.0 * d[3] / total, 100.0 * d[7] / total,
                                 acks1 - acks0))
    if a.threads:
        for tid in sorted(threads1):
            if tid in threads0:
                run, wait, slices = [y - x for x, y in zip(threads0[tid], threads1[tid])]
                if slices:
                    line += "\n    thread %s: cpu %.0f ms, run-queue wait %.0f ms, %d slices" % (
                        tid, run / 1e6, wait / 1e6, slices)
    return line


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binaries", nargs="+", help="logfold binaries to alternate")
    ap.add_argument("--parts", default="udp,latency")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--replay", default=os.path.join(e2e.ROOT, "build", "syslog_replay"))
    ap.add_argument("--lines", type=int, default=1000000, help="corpus lines")
    ap.add_argument("--cache", default=None, help="corpus directory (default: next to --replay)")
    ap.add_argument("--udp-rates", default="100000,200000,300000,450000")
    ap.add_argument("--udp-seconds", type=float, default=3.0)
    ap.add_argument("--udp-sockets", type=int, default=2)
    ap.add_argument("--latency-rate", type=int, default=100000)
    ap.add_argument("--latency-seconds", type=float, default=10.0)
    ap.add_argument("--threads", action="store_true", help="latency: per-thread schedstat")
    a = ap.parse_args()
    for b in a.binaries + [a.replay]:
        if not os.access(b, os.X_OK):
            sys.exit("not found: " + b)
    corpus, _ = e2e.make_corpus(a.cache or os.path.join(os.path.dirname(a.replay), "e2e-corpus"),
                                a.lines)
    workdir = tempfile.mkdtemp(prefix="logfold-e2e-ab-")
    print("load average at start: %s" % open("/proc/loadavg").read().strip(), flush=True)
    parts = a.parts.split(",")
    if "udp" in parts:
        for rate in [int(float(r)) for r in a.udp_rates.split(",")]:
            for i in range(a.runs):
                for b in a.binaries:
                    a.logfold = b
                    r = e2e.udp_logfold(a, corpus, workdir, rate, int(rate * a.udp_seconds))
                    print("udp %dk run %d %s: sent %.0f/s loss %.2f%% RcvbufErrors %d "
                          "kernel_drops %d queue_drops %d cpu %.2f s" % (
                              rate // 1000, i + 1, b, r["sent_rate"],
                              100.0 * r["loss"] / r["lines"], r["kernel_rcvbuf_errors"],
                              r.get("kernel_drops_metric", -1), r["queue_dropped"], r["cpu_s"]),
                          flush=True)
    if "latency" in parts:
        for i in range(a.runs):
            for b in a.binaries:
                print("latency run %d %s: %s" % (i + 1, b, latency_run(a, b, corpus, workdir)),
                      flush=True)
    print("load average at end: %s" % open("/proc/loadavg").read().strip(), flush=True)
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
