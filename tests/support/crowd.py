"""A crowd on loopback: held event streams, idle and trickling connections.

Used by the crowd tests and bench/bench_crowd.py. Streams are raw sockets
read only until their first status (no thread each), so hundreds of them cost
the test process little; the slow clients share one trickling thread.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import selectors
import socket
import threading
import time
from dataclasses import dataclass, field

STREAM_REQUEST = b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
#: The start of a request a slow client never finishes, one byte at a time.
SLOW_REQUEST = b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 4000


class CrowdError(AssertionError):
    """The crowd could not be set up as asked (the server did not take it)."""


def hold_streams(port: int, count: int, timeout: float = 30.0) -> list[socket.socket]:
    """Open ``count`` event streams and return their sockets once each got a status.

    The sockets are then left unread: the server keeps the stream (and its
    thread) until the socket is closed.

    :raises CrowdError: not every stream had its first status in ``timeout`` s.
    """
    socks: list[socket.socket] = []
    received: dict[socket.socket, bytes] = {}
    with selectors.DefaultSelector() as selector:
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
            sock.sendall(STREAM_REQUEST)
            sock.setblocking(False)
            socks.append(sock)
            received[sock] = b""
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        waiting = set(socks)
        while waiting:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                close_all(socks)
                raise CrowdError(
                    f"only {count - len(waiting)} of {count} streams got their first status "
                    f"within {timeout} s"
                )
            for key, _ in selector.select(remaining):
                ready = key.fileobj
                assert isinstance(ready, socket.socket)
                try:
                    chunk = ready.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                received[ready] += chunk
                if not chunk or b"\ndata: " in received[ready]:
                    selector.unregister(ready)
                    waiting.discard(ready)
                    if not chunk or not received[ready].startswith(b"HTTP/1.1 200"):
                        close_all(socks)
                        head = received[ready][:80]
                        raise CrowdError(f"a stream was refused or closed: {head!r}")
    return socks


def close_all(socks: list[socket.socket]) -> None:
    """Close every socket, ignoring those already gone."""
    for sock in socks:
        with contextlib.suppress(OSError):
            sock.close()


@dataclass
class SlowClient:
    """One connection that is idle (sends nothing) or trickles a request it never ends."""

    sock: socket.socket
    trickle: bool
    opened: float
    sent: int = 0
    closed_at: float | None = None


@dataclass
class SlowCrowd:
    """``idle`` silent connections and ``trickling`` ones sending a byte every ``every`` s.

    One thread trickles and notices when the server closes a connection
    (recording when). :meth:`closed_after` gives how long each one lived.
    """

    port: int
    idle: int
    trickling: int
    every: float = 0.5
    clients: list[SlowClient] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> SlowCrowd:
        for i in range(self.idle + self.trickling):
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
            sock.setblocking(False)
            self.clients.append(SlowClient(sock, i >= self.idle, time.monotonic()))
        self._thread = threading.Thread(target=self._run, name="slow-crowd", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        with selectors.DefaultSelector() as selector:
            for client in self.clients:
                selector.register(client.sock, selectors.EVENT_READ, client)
            next_byte = time.monotonic()
            while not self._stop.is_set() and selector.get_map():
                timeout = max(0.0, next_byte - time.monotonic())
                for key, _ in selector.select(min(timeout, 0.05)):
                    client = key.data
                    try:
                        data = client.sock.recv(4096)
                    except BlockingIOError:
                        continue
                    except OSError:
                        data = b""
                    if not data:  # closed by the server
                        self._mark_closed(client)
                        selector.unregister(client.sock)
                if time.monotonic() >= next_byte:
                    next_byte += self.every
                    for client in self.clients:
                        if client.trickle and client.closed_at is None:
                            self._send_byte(client)

    def _send_byte(self, client: SlowClient) -> None:
        try:
            client.sock.send(SLOW_REQUEST[client.sent : client.sent + 1] or b"a")
            client.sent += 1
        except BlockingIOError:
            pass
        except OSError:
            self._mark_closed(client)

    def _mark_closed(self, client: SlowClient) -> None:
        with self._lock:
            if client.closed_at is None:
                client.closed_at = time.monotonic()

    @property
    def open_count(self) -> int:
        with self._lock:
            return sum(1 for c in self.clients if c.closed_at is None)

    def closed_after(self) -> list[float]:
        """Seconds each closed connection lived, from its opening to its closing."""
        with self._lock:
            return [c.closed_at - c.opened for c in self.clients if c.closed_at is not None]

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        close_all([c.sock for c in self.clients])


@dataclass(frozen=True)
class Answer:
    """One HTTP answer and how long it took, from connecting to its last byte."""

    status: int
    headers: dict[str, str]
    body: bytes
    seconds: float

    def json(self) -> object:
        return json.loads(self.body)


def timed_get(port: int, path: str, timeout: float = 10.0) -> Answer:
    """GET ``path`` on a new connection (as a phone's page does) and time it."""
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        body = response.read()
        headers = {k.lower(): v for k, v in response.getheaders()}
        return Answer(response.status, headers, body, time.perf_counter() - start)
    finally:
        conn.close()


def percentile(samples: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``samples``, nearest rank."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
