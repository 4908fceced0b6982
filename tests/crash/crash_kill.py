#!/usr/bin/env python3
# Crash-durability fault test: kills `logfold serve` with SIGKILL at random points under TCP
# load, restarts it on the same state directory and counts every line in and out.
"""Usage: tests/crash/crash_kill.py --logfold build/logfold [--kills 10] [--modes checkpoint,journal]

Each round: start logfold (TCP input, file output, state directory), send syslog lines over
one TCP connection at --rate lines/s for a random 1-3.5 s (--after), freeze the daemon (SIGSTOP), read
from `ss` how many sent bytes it had read (bytes received minus its receive queue), SIGKILL it, start it again on the same
state directory (it restores what it checkpointed) and stop it with SIGTERM (which summarises
every group). Then, per scope (host, app): lines in = lines the daemon had accepted; lines out
= `first` events + summary counts written during the round. lost = sum of in - out where
positive, duplicated = sum of out - in where positive.

Lines accepted: with checkpoints, every line whose bytes the daemon had read. In journal mode a line counts as accepted once it is journalled (what
logfold acknowledges by reading on), so it is every line up to the last one in the journal
files the killed daemon left (each line carries its sequence number).

Checks, every round: checkpoint mode, lost <= the lines accepted in the last
checkpoint_interval before the kill; journal mode, lost == 0. Exits 1 on a violation.
"""

import argparse
import json
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True

HOSTS = [f"web{i:02d}" for i in range(6)]
APPS = ["nginx", "sshd", "cron", "kernel"]
TEMPLATES = [
    "request id={seq} served in {n} ms from 10.0.{a}.{b}",
    "session {seq} opened for user u{n} by (uid=0)",
    "disk /dev/sd{c} is {n}% full after {seq} writes",
]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--logfold", required=True)
    p.add_argument("--kills", type=int, default=10, help="kills per mode (default 10)")
    p.add_argument("--modes", default="checkpoint,journal")
    p.add_argument("--rate", type=int, default=20000, help="lines/s sent (default 20000)")
    p.add_argument("--interval", type=float, default=1.0, help="checkpoint_interval, seconds")
    p.add_argument("--after", default="1.0,3.5",
                   help="MIN,MAX seconds of traffic before each kill (default 1.0,3.5; the "
                        "engine's max_hold is 3 s, so later kills follow summaries)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--keep", help="keep the run's files in this directory")
    return p.parse_args()


def line(seq, rng):
    host = HOSTS[seq % len(HOSTS)]
    app = APPS[(seq // len(HOSTS)) % len(APPS)]
    msg = TEMPLATES[seq % len(TEMPLATES)].format(
        seq=seq, n=rng.randrange(1000), a=rng.randrange(256), b=rng.randrange(256),
        c="abcd"[seq % 4])
    return f"<13>Nov 25 12:00:00 {host} {app}: {msg}\n".encode(), (host, app)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        time.sleep(0.01)
    raise RuntimeError(f"timed out waiting for {what}")


class Daemon:
    def __init__(self, logfold, workdir, port, mode, interval):
        self.logfold = logfold
        self.port = port
        self.config = os.path.join(workdir, "config.json")
        self.events = os.path.join(workdir, "events.ndjson")
        self.state = os.path.join(workdir, "state")
        self.log = open(os.path.join(workdir, "logfold.log"), "ab")
        config = {
            "log": {"level": "info", "stats_interval": "0"},
            "inputs": [{"name": "tcp", "type": "tcp", "address": "127.0.0.1", "port": port,
                        "framing": "newline"}],
            "engine": {"window": "2s", "max_hold": "3s"},
            "workers": {"threads": 2},
            "outputs": [{"name": "file", "type": "file", "path": self.events}],
            "metrics": {"enabled": False},
            "state": {"directory": self.state, "checkpoint_interval": f"{int(interval * 1000)}ms",
                      "journal": mode == "journal"},
        }
        with open(self.config, "w") as f:
            json.dump(config, f)
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([self.logfold, "serve", "--config", self.config],
                                     stdout=self.log, stderr=self.log)

        def listening():
            if self.proc.poll() is not None:
                raise RuntimeError(f"logfold exited with {self.proc.returncode} at start")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return True
            except OSError:
                return False
        wait_for("logfold to listen", listening)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=120)
        if rc != 0:
            raise RuntimeError(f"logfold exited with {rc} after SIGTERM")

    def freeze(self):
        self.proc.send_signal(signal.SIGSTOP)

        def stopped():
            with open(f"/proc/{self.proc.pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] == "T"
        wait_for("logfold to stop", stopped)

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)


def daemon_read_bytes(listen_port, client_port):
    """Bytes of the connection the daemon had read: its socket's bytes received minus its
    receive queue, from `ss` (iproute2). Exact whatever the ACKs in flight: while the daemon
    is stopped it reads nothing, so this does not move. None if the socket is not listed."""
    out = subprocess.run(
        ["ss", "-tinH", "state", "established",
         f"( sport = :{listen_port} and dport = :{client_port} )"],
        capture_output=True, text=True, check=True).stdout.split()
    received = [w for w in out if w.startswith("bytes_received:")]
    if not out or len(received) > 1:
        return None
    # A socket that has received nothing prints no bytes_received field.
    received = int(received[0].split(":")[1]) if received else 0
    return received - int(out[0])


def journal_last_seq_line(state_dir):
    """The highest line sequence number in the journal files (our lines' 'id', 'session' or
    'after N writes' number), or -1. Reads the format of daemon/state/journal_file.h."""
    best = -1
    for name in sorted(os.listdir(state_dir)):
        if not (name.startswith("journal-") and name.endswith(".log")):
            continue
        data = open(os.path.join(state_dir, name), "rb").read()
        pos = 24
        while pos + 8 <= len(data):
            length, _crc = struct.unpack_from("<II", data, pos)
            if pos + 8 + length > len(data):
                break
            p = pos + 8
            _seq, _input, _arrival, count = struct.unpack_from("<QIqI", data, p)
            p += 24
            for _ in range(count):
                (n,) = struct.unpack_from("<I", data, p)
                text = data[p + 4:p + 4 + n].decode()
                p += 4 + n
                best = max(best, sequence_of(text))
            pos += 8 + length
    return best


def sequence_of(text):
    msg = text.split(": ", 1)[1]
    if msg.startswith("request id="):
        return int(msg.split("=")[1].split()[0])
    if msg.startswith("session "):
        return int(msg.split()[1])
    return int(msg.split(" after ")[1].split()[0])


def count_out(path, offset):
    """Lines represented per (host, app) in events written after `offset`, and the new end."""
    out = {}
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read()
    end = offset + data.rfind(b"\n") + 1
    for raw in data[:data.rfind(b"\n") + 1].splitlines():
        e = json.loads(raw)
        key = (e.get("host"), e.get("app"))
        out[key] = out.get(key, 0) + (1 if e["kind"] == "first" else e["count"])
    return out, end


def run_round(args, daemon, rng, next_seq, offset):
    daemon.start()
    sock = socket.create_connection(("127.0.0.1", daemon.port))
    client_port = sock.getsockname()[1]
    duration = rng.uniform(*(float(x) for x in args.after.split(",")))
    chunk = max(1, args.rate // 100)
    sent = []  # (end offset in the stream, scope, send time, sequence number)
    stream_bytes = 0
    start = time.monotonic()
    seq = next_seq
    while True:
        now = time.monotonic()
        if now - start >= duration:
            break
        due = int((now - start) * args.rate) + chunk
        batch = []
        while len(sent) < due:
            data, scope = line(seq, rng)
            batch.append(data)
            stream_bytes += len(data)
            sent.append((stream_bytes, scope, now, seq))
            seq += 1
        sock.sendall(b"".join(batch))
        time.sleep(0.01)
    kill_time = time.monotonic()
    daemon.freeze()
    read_bytes = daemon_read_bytes(daemon.port, client_port)
    if read_bytes is None:
        raise RuntimeError("the daemon's end of the connection is not in `ss`")
    if args.mode == "journal":
        last = journal_last_seq_line(daemon.state)
        accepted = [s for s in sent if s[3] <= last]
        read = sum(1 for s in sent if s[0] <= read_bytes)
        if len(accepted) > read:
            raise RuntimeError("journal holds lines the daemon had not read")
    else:
        accepted = [s for s in sent if s[0] <= read_bytes]
    daemon.kill()
    sock.close()
    daemon.start()  # recovery
    daemon.stop()   # summarises every group, delivers, clears the state
    lines_in = {}
    for s in accepted:
        lines_in[s[1]] = lines_in.get(s[1], 0) + 1
    out, offset = count_out(daemon.events, offset)
    lost = sum(max(0, n - out.get(k, 0)) for k, n in lines_in.items())
    dup = sum(max(0, n - lines_in.get(k, 0)) for k, n in out.items())
    last_interval = sum(1 for s in accepted if s[2] >= kill_time - args.interval)
    return {"sent": len(sent), "accepted": len(accepted), "lost": lost, "duplicated": dup,
            "bound": last_interval, "after_s": round(duration, 2)}, seq, offset


def main():
    args = parse_args()
    rng = random.Random(args.seed)
    workdir = args.keep or tempfile.mkdtemp(prefix="logfold-crash-")
    os.makedirs(workdir, exist_ok=True)
    failures = 0
    for mode in args.modes.split(","):
        args.mode = mode
        mode_dir = os.path.join(workdir, mode)
        os.makedirs(mode_dir, exist_ok=True)
        daemon = Daemon(args.logfold, mode_dir, free_port(), mode, args.interval)
        seq, offset = 0, 0
        open(daemon.events, "ab").close()
        for k in range(args.kills):
            r, seq, offset = run_round(args, daemon, rng, seq, offset)
            ok = r["lost"] == 0 if mode == "journal" else r["lost"] <= r["bound"]
            failures += not ok
            print(f"{mode} kill {k + 1}: {json.dumps(r)} {'ok' if ok else 'FAIL'}", flush=True)
    print(f"crash_kill: {failures} failed rounds; files in {workdir}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
