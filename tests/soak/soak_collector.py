# Soak collector: the TCP server behind logfold's tcp output, which the soak stops and
# restarts on the same port, and the bytes it received on each connection.
"""A restartable NDJSON collector for tests/soak/soak.py.

Stopping is graceful, as a collector being restarted by its service manager would be: the
listener closes (new connections are refused), every open connection gets a FIN
(shutdown(SHUT_WR)) and is read until logfold closes it, so whatever logfold's kernel saw
acknowledged has also been read. That is the case in which logfold's tcp output promises
at-least-once delivery (daemon/outputs/tcp_sink.cc); a collector that dies with unread data in its
socket buffer loses it, which plain TCP cannot detect.
"""

import queue
import selectors
import socket
import threading
import time

STOP_DRAIN_S = 10.0  # how long a stop waits for logfold to close each connection


class Collector(threading.Thread):
    def __init__(self):
        super().__init__(name="collector", daemon=True)
        self.sel = selectors.DefaultSelector()
        self.port = 0
        self.listener = None
        self.open = {}  # socket -> bytearray
        self.closed = []  # bytes of every finished connection
        self.connections = 0
        self.stops = 0
        self.drain_timeouts = 0  # stops that gave up on a connection: possible losses
        self.commands = queue.Queue()
        self.quit = False
        self._listen()

    # ----------------------------------------------------------------- driver-facing
    def stop_serving(self):
        self._call(self._stop)

    def start_serving(self):
        self._call(self._listen)

    def shutdown(self):
        """Waits (bounded) for logfold to close its connections, then ends the thread."""
        self._call(lambda: self._drain(initiate=False))
        self.quit = True
        self.join(timeout=30)

    def received(self):
        """Bytes per connection, once the thread has ended."""
        return self.closed + [bytes(b) for b in self.open.values()]

    # ----------------------------------------------------------------- own thread
    def _call(self, fn):
        done = threading.Event()
        self.commands.put((fn, done))
        done.wait(timeout=STOP_DRAIN_S + 30)

    def _listen(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(16)
        s.setblocking(False)
        self.port = s.getsockname()[1]
        self.listener = s
        self.sel.register(s, selectors.EVENT_READ)

    def _stop(self):
        self.stops += 1
        if self.listener is not None:
            self.sel.unregister(self.listener)
            self.listener.close()
            self.listener = None
        self._drain(initiate=True)

    def _drain(self, initiate):
        if initiate:
            for s in self.open:
                try:
                    s.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
        deadline = time.monotonic() + STOP_DRAIN_S
        while self.open and time.monotonic() < deadline:
            self._poll(0.05)
        if self.open:
            self.drain_timeouts += 1
            for s in list(self.open):
                self._finish(s)

    def _finish(self, s):
        self.sel.unregister(s)
        self.closed.append(bytes(self.open.pop(s)))
        s.close()

    def _poll(self, timeout):
        for key, _ in self.sel.select(timeout):
            s = key.fileobj
            if s is self.listener:
                try:
                    conn, _ = s.accept()
                except BlockingIOError:
                    continue
                conn.setblocking(False)
                self.open[conn] = bytearray()
                self.connections += 1
                self.sel.register(conn, selectors.EVENT_READ)
                continue
            try:
                data = s.recv(1 << 16)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if data:
                self.open[s] += data
            else:
                self._finish(s)

    def run(self):
        while not self.quit:
            self._poll(0.05)
            while not self.commands.empty():
                fn, done = self.commands.get()
                fn()
                done.set()
        if self.listener is not None:
            self.listener.close()
