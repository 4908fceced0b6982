# Soak traffic: paced TCP and UDP syslog senders that mix in malformed, oversized and
# mis-framed lines and cut TCP frames by disconnecting, and count exactly what the daemon
# must account for.
"""Senders for tests/soak/soak.py.

Every line a sender writes is counted by kind. A TCP frame cut by a disconnect counts as the
line the daemon makes of it (FrameDecoder::Finish): the bytes of a newline frame received so
far, or the digits of an octet-count prefix cut before its space, are one line; an
octet-counted frame cut just after "LEN " has no message byte, so it yields no line (but
is still counted in logfold_partial_at_close_total, like every octet-counted cut).

Protocols are kept apart in the output by host: TCP lines come from hosts "tcp*", UDP lines
from hosts "udp*"; UDP lines without a header carry the marker word "soakU" and TCP lines
never contain "udp" or "soakU", so every event can be attributed to one protocol.
"""

import random
import socket
import threading
import time

MAX_MESSAGE_SIZE = 2048  # the inputs' max_message_size in the soak config (2KiB)
OVERSIZED_BYTES = 5000  # oversized lines: well above the limit, far below octet_limit (10x)

TEMPLATES = (
    "connection from 10.{a}.{b}.{c} port {n} accepted",
    "disk /dev/sd{l}1 is {p}% full",
    "request {n} served in {m} ms status=200",
    "user admin{p} logged in from 192.168.{a}.{b}",
    "worker {a} restarted after {m} s",
    "queue depth {n} exceeds threshold {m}",
    "cache miss ratio 0.{m} over {n} keys",
    "session {h:08x} closed by peer",
)
LETTERS = "abcdefghijklmnopqrstuvwxyz"


class Counts:
    """What one protocol's senders wrote; guarded by the owner thread, read at the end."""

    def __init__(self):
        self.lines = 0  # lines the daemon must account for (cut frames per the rule above)
        self.normal = 0
        self.malformed = 0
        self.oversized = 0
        self.framing_errors = 0  # TCP frames with an invalid octet count
        self.cuts = 0  # TCP connections closed mid-frame
        self.octet_cuts = 0  # of them, inside an octet-counted frame
        self.cuts_without_line = 0  # cut just after "LEN ": no message byte
        self.connections = 0
        self.datagrams = 0

    def as_dict(self):
        return dict(self.__dict__)


class LineMaker:
    """Syslog lines with variable values, so they fold; host names change every `epoch_s`
    seconds so that groups keep opening and closing (the window fills and turns over)."""

    def __init__(self, seed, epoch_s):
        self.rng = random.Random(seed)
        self.epoch_s = epoch_s
        self.start = time.monotonic()
        self._stamp_at = -1.0
        self._ts3164 = self._ts5424 = ""

    def _stamps(self):
        now = time.time()
        if now - self._stamp_at >= 0.5:
            self._stamp_at = now
            t = time.gmtime(now)
            self._ts3164 = time.strftime("%b ", t) + f"{t.tm_mday:2d}" + time.strftime(" %H:%M:%S", t)
            self._ts5424 = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
        return self._ts3164, self._ts5424

    def message(self):
        r = self.rng
        if r.random() < 0.02:
            # A new group each time: a plain word that varies outside a value position.
            return "unique event " + "".join(r.choice(LETTERS) for _ in range(8)) + " occurred"
        t = TEMPLATES[r.randrange(len(TEMPLATES))]
        return t.format(a=r.randrange(256), b=r.randrange(256), c=r.randrange(256),
                        n=r.randrange(100000), m=r.randrange(1000), p=r.randrange(100),
                        l=LETTERS[r.randrange(4)], h=r.getrandbits(32))

    def host(self, prefix, slot):
        epoch = int((time.monotonic() - self.start) / self.epoch_s)
        return f"{prefix}{slot}-e{epoch}"

    def line(self, host, rfc5424, message=None):
        ts3164, ts5424 = self._stamps()
        msg = self.message() if message is None else message
        if rfc5424:
            return f"<14>1 {ts5424} {host} soakapp {self.rng.randrange(1, 99999)} - - {msg}"
        return f"<14>{ts3164} {host} soakapp[{self.rng.randrange(1, 99999)}]: {msg}"

    def oversized(self, host, rfc5424):
        return self.line(host, rfc5424, "oversized payload " + "x" * OVERSIZED_BYTES)


class Pacer:
    """Lines due since the start at `rate` per second, released in ticks; a late tick
    catches up (bounded), so the total tracks rate x elapsed while the CPU allows."""

    def __init__(self, rate):
        self.rate = rate
        self.start = time.monotonic()
        self.released = 0

    def due(self):
        want = int(self.rate * (time.monotonic() - self.start))
        n = min(want - self.released, max(1, self.rate // 5))
        if n <= 0:
            return 0
        self.released += n
        return n


class PacedSender(threading.Thread):
    """Calls send(n) with the lines due at `rate` per second until `stop` is set; an
    exception ends the sender and is kept in `error` for the driver to report."""

    def __init__(self, name, rate, stop):
        super().__init__(name=name, daemon=True)
        self.rate, self.stop = rate, stop
        self.error = None

    def send(self, n):
        raise NotImplementedError

    def close(self):
        pass

    def run(self):
        pacer = Pacer(self.rate)
        try:
            while not self.stop.is_set():
                n = pacer.due()
                if n == 0:
                    time.sleep(0.005)
                    continue
                self.send(n)
        except Exception as e:  # reported as a violation by the driver
            self.error = f"{self.name}: {e!r}"
        finally:
            self.close()


def _octet(text):
    body = text.encode()
    return str(len(body)).encode() + b" " + body


class TcpConnection:
    MODES = ("octet5424", "newline3164", "newline5424")

    def __init__(self, port, mode, lines_before_cut):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.mode = mode
        self.lines_before_cut = lines_before_cut
        self.frames = 0  # frames sent so far

    def frame(self, text):
        if self.mode == "octet5424":
            return _octet(text)
        return text.encode() + b"\n"


class TcpSenders(PacedSender):
    """`connections` concurrent connections, `rate` lines/s in all, from one thread. Each
    connection closes mid-frame after a random number of lines and is replaced."""

    def __init__(self, port, rate, connections, seed, epoch_s, stop):
        super().__init__("tcp-senders", rate, stop)
        self.port = port
        self.rng = random.Random(seed)
        self.maker = LineMaker(seed + 1, epoch_s)
        self.counts = Counts()
        self.conns = [self._connect() for _ in range(connections)]

    def _connect(self):
        self.counts.connections += 1
        return TcpConnection(self.port, self.rng.choice(TcpConnection.MODES),
                             self.rng.randrange(100, 3000))

    def _frame(self, conn, slot):
        """One frame for `conn` and the counters it adds to."""
        c, r = self.counts, self.rng
        host = self.maker.host("tcp", slot)
        rfc5424 = conn.mode != "newline3164"
        x = r.random()
        if x < 0.005:
            c.malformed += 1
            kind = r.randrange(4)
            if kind == 0:
                # An octet-counted frame must start with '<' to be believed (issue #21), so an
                # octet-counted connection sends its garbage after a PRI.
                pri = "<14>" if conn.mode == "octet5424" else ""
                text = f"{pri}garbage without any header number {r.randrange(10**6)} from tcp"
            elif kind == 1:
                text = f"<999>1 2026-01-01T00:00:00Z {host} soakapp - - - bad pri {r.randrange(999)}"
            elif kind == 2:
                text = f"<14>1 not-a-time {host} soakapp - - - bad stamp {r.randrange(999)}"
            else:
                text = f"<14>1 2026-01-01T00:00:00Z {host} soakapp - - [unterminated sd {r.randrange(9)}"
            return conn.frame(text)
        if x < 0.007:
            c.oversized += 1
            return conn.frame(self.maker.oversized(host, rfc5424))
        if x < 0.008:
            # Looks octet-counted (leading digit) but has no "LEN SP". Auto framing tries it as
            # a count only on an octet-counted connection or as a connection's first frame;
            # either way it is a framing error and the connection reads lines from then on.
            # Later on a newline connection it is just a line without a header.
            if conn.mode == "octet5424" or conn.frames == 0:
                c.framing_errors += 1
                conn.mode = "newline5424"
            else:
                c.malformed += 1
            return f"7x bad octet count {r.randrange(10**6)} from tcp\n".encode()
        c.normal += 1
        return conn.frame(self.maker.line(host, rfc5424))

    def _cut(self, conn, slot):
        """A prefix of a normal frame, and the lines the daemon makes of it."""
        c = self.counts
        frame = conn.frame(self.maker.line(self.maker.host("tcp", slot), conn.mode != "newline3164"))
        k = self.rng.randrange(1, len(frame) - 1)
        c.cuts += 1
        if conn.mode == "octet5424":
            c.octet_cuts += 1
            digits = frame.index(b" ")
            if k == digits + 1:
                c.cuts_without_line += 1
                return frame[:k], 0
        return frame[:k], 1

    def send(self, n):
        share = [n // len(self.conns)] * len(self.conns)
        for i in range(n % len(self.conns)):
            share[i] += 1
        for slot, conn in enumerate(self.conns):
            self._send(slot, conn, share[slot])

    def close(self):
        for conn in self.conns:
            conn.sock.close()  # at a frame boundary: nothing cut

    def _send(self, slot, conn, n):
        parts = []
        cut = False
        for _ in range(n):
            parts.append(self._frame(conn, slot))
            conn.frames += 1
            self.counts.lines += 1
            conn.lines_before_cut -= 1
            if conn.lines_before_cut <= 0:
                piece, lines = self._cut(conn, slot)
                parts.append(piece)
                self.counts.lines += lines
                cut = True
                break
        if parts:
            conn.sock.sendall(b"".join(parts))
        if cut:
            conn.sock.close()  # FIN: the daemon delivers the cut frame as it stands
            self.conns[slot] = self._connect()


class UdpSender(PacedSender):
    """One datagram per line at `rate` per second."""

    def __init__(self, port, rate, seed, epoch_s, stop):
        super().__init__("udp-sender", rate, stop)
        self.addr = ("127.0.0.1", port)
        self.rng = random.Random(seed)
        self.maker = LineMaker(seed + 1, epoch_s)
        self.counts = Counts()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def _datagram(self):
        c, r = self.counts, self.rng
        host = self.maker.host("udp", r.randrange(4))
        rfc5424 = r.random() < 0.5
        x = r.random()
        if x < 0.005:
            c.malformed += 1
            return f"soakU datagram without header value {r.randrange(10**6)}".encode()
        if x < 0.007:
            c.oversized += 1
            return self.maker.oversized(host, rfc5424).encode()
        c.normal += 1
        return self.maker.line(host, rfc5424).encode()

    def send(self, n):
        for _ in range(n):
            self.sock.sendto(self._datagram(), self.addr)
            self.counts.datagrams += 1
            self.counts.lines += 1

    def close(self):
        self.sock.close()
