"""Event streams served on an event loop: no thread per viewer (the hub's streams).

The transport of :mod:`web.kit.broadcast`'s one writer, for :mod:`web.kit.aserve`.
The feed's writer thread writes each message to every member as before; a member
here is a :class:`LoopStream`, whose ``write`` only appends the bytes to the
stream's own buffer and marks the stream due. One wake-up of the loop per burst
(:class:`Pump`, however many streams are due) then writes every due stream's bytes
to its connection, chunk-framed, straight into the asyncio transport: no task is
woken per viewer and per message. A viewer that leaves more than
:data:`web.kit.broadcast.MAX_BACKLOG` bytes unsent is dropped (the writer's next
write raises, and its connection is aborted: it reconnects and catches up). A
stream's task only waits for its end: its client's disconnection (so a closed page
gives its place back at once, not at the next write) or the feed's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from typing import Any

from web.kit.broadcast import MAX_BACKLOG, Encoding, Member, negotiate
from web.kit.errors import StreamBacklogError, StreamGoneError, StreamsFullError
from web.kit.events import StreamHub, StreamRoute

log = logging.getLogger(__name__)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
#: The scope extension :mod:`web.kit.aserve` offers: the connection's asyncio transport,
#: which a stream writes its body to (after the headers, sent through the server).
TRANSPORT = "arbiter.transport"


class NotifyingEvent(threading.Event):
    """A :class:`threading.Event` that also calls ``notify`` when it is set (from any
    thread): how the loop hears that the writer ended a stream."""

    def __init__(self, notify: Callable[[], None]) -> None:
        super().__init__()
        self._notify = notify

    def set(self) -> None:
        super().set()
        self._notify()


class Pump:
    """Hands the streams with something to do from any thread to the event loop: one
    ``call_soon_threadsafe`` per burst, however many streams are due."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._due: dict[LoopStream, None] = {}  # ordered, each stream once

    def due(self, stream: LoopStream) -> None:
        with self._lock:
            first = not self._due
            self._due[stream] = None
        if first:
            with contextlib.suppress(RuntimeError):  # the loop is closed: the server stopped
                self._loop.call_soon_threadsafe(self._run)

    def _run(self) -> None:
        with self._lock:
            due, self._due = self._due, {}
        for stream in due:
            stream.flush()


class LoopStream:
    """One viewer's stream: bytes written from any thread, sent from the loop."""

    def __init__(self, pump: Pump, transport: asyncio.WriteTransport, *, chunked: bool = True,
                 limit: int = MAX_BACKLOG) -> None:
        self._pump = pump
        self._transport = transport
        self._chunked = chunked
        self._limit = limit
        self._lock = threading.Lock()
        self._buffer = bytearray()
        self._unsent = 0  # what the transport held unsent at the last flush
        self._gone = False
        self.ended = asyncio.Event()
        self.done = NotifyingEvent(lambda: pump.due(self))

    def write(self, data: bytes) -> None:
        """Queue ``data`` (the feed's writer thread). Raises once the client has gone,
        and when more than ``limit`` bytes already wait (a client that stopped reading)."""
        with self._lock:
            if self._gone:
                raise StreamGoneError("the client has gone")
            waiting = len(self._buffer) + self._unsent
            if waiting > self._limit:
                raise StreamBacklogError(f"{waiting} bytes unsent: the client stopped reading")
            self._buffer += data
        self._pump.due(self)

    @property
    def gone(self) -> bool:
        with self._lock:
            return self._gone

    def client_gone(self) -> None:
        """The client disconnected, or its connection was aborted (on the loop)."""
        with self._lock:
            self._gone = True
        self.ended.set()

    def flush(self) -> None:
        """On the loop: what waits goes to the transport (which sends without blocking);
        a stream the feed ended, or whose client takes too little, is aborted."""
        with self._lock:
            data = bytes(self._buffer)
            self._buffer.clear()
            gone = self._gone
        if gone:
            return
        if data:
            self._transport.write(b"%X\r\n%s\r\n" % (len(data), data) if self._chunked
                                  else data)
        unsent = self._transport.get_write_buffer_size()
        with self._lock:
            self._unsent = unsent
        if self.done.is_set() or unsent > self._limit:
            # abort, not close: close would first wait for the unsent bytes to be taken,
            # which a client that stopped reading never does. The page reconnects.
            self._transport.abort()
            self.client_gone()


class StreamEndpoint:
    """The ASGI handler of one app's event stream (``route``), over its ``hub``.

    Admits a stream (or answers 503 JSON at once when ``hub`` is full), joins it to the
    hub's feed from ``pool`` (the feed reads the ledger under its lock, which the loop
    must never wait for), and sends what the writer writes until the client goes or
    the feed ends it. ``headers`` are every response's own (the security headers).
    """

    def __init__(self, hub: StreamHub, route: StreamRoute, pool: Executor,
                 headers: dict[str, str]) -> None:
        self.hub = hub
        self.route = route
        self._pool = pool
        self._headers = [(k.lower().encode("latin-1"), v.encode("latin-1"))
                         for k, v in headers.items()]
        self._pump: Pump | None = None
        self._ticker: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "GET":
            await self._answer(send, 405, {"error": "the event stream answers GET only"},
                               [(b"allow", b"GET")])
            return
        headers = {k.lower(): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            if self.hub.stopping:
                raise StreamsFullError("the server is stopping")
            self.hub.admit()
        except StreamsFullError as exc:
            log.debug("event stream refused: %s", exc)
            await self._answer(send, 503, {"error": self.route.refusal(exc)},
                               [(b"retry-after", str(self.route.retry_seconds).encode())])
            return
        try:
            await self._serve(scope, receive, send, negotiate(headers.get(b"accept-encoding")),
                              headers.get(b"last-event-id"))
        finally:
            self.hub.release()

    async def _serve(self, scope: Scope, receive: Receive, send: Send, encoding: Encoding,
                     last_event_id: str | None) -> None:
        loop = asyncio.get_running_loop()
        if self._pump is None:
            self._pump = Pump(loop)
            self._ticker = loop.create_task(self._keepalives())
        transport = scope.get("extensions", {}).get(TRANSPORT)
        if transport is None:  # a server that does not offer it: nothing to write to
            raise RuntimeError(f"the server offers no {TRANSPORT}")
        stream = LoopStream(self._pump, transport, chunked=scope["http_version"] != "1.0")
        member = Member(encoding, stream.write)
        member.done = stream.done
        head = [(b"content-type", b"text/event-stream; charset=utf-8"),
                (b"cache-control", b"no-cache, no-transform"), (b"x-accel-buffering", b"no"),
                (b"vary", b"Accept-Encoding"), *self._headers]
        if encoding is not Encoding.IDENTITY:
            head.append((b"content-encoding", encoding.value.encode()))
        # The head through the server (its framing: chunked for HTTP/1.1); the body then
        # straight to the transport, from the loop (LoopStream.flush).
        await send({"type": "http.response.start", "status": 200, "headers": head})
        watcher = loop.create_task(self._watch(receive, stream))
        self.hub.joined(1)
        log.debug("viewer %s joined the stream", scope.get("client"))
        try:
            await loop.run_in_executor(self._pool, self.hub.feed.join, member, last_event_id)
            await stream.ended.wait()
            # Ended by the feed or a stall: aborted; waited for, so that the server counts
            # the response as the client's disconnection, not as one left unfinished.
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(watcher), 2.0)
        finally:
            watcher.cancel()
            if not stream.gone:  # cancelled (the server stops): its connection goes too
                transport.abort()
            self.hub.joined(-1)
            log.debug("viewer %s left the stream", scope.get("client"))
            # Not awaited: the writer may hold the feed's lock for a while (a refresh
            # reads every row), and the next write to a gone stream drops it anyway.
            loop.run_in_executor(self._pool, self.hub.feed.leave, member)

    @staticmethod
    async def _watch(receive: Receive, stream: LoopStream) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        stream.client_gone()

    async def _keepalives(self) -> None:
        """A keep-alive to every stream when nothing went for the feed's keep-alive period
        (so proxies keep the streams, and a vanished client is noticed)."""
        loop = asyncio.get_running_loop()
        while not self.hub.stopping:
            await asyncio.sleep(self.hub.keepalive)
            if self.hub.open_streams:
                await loop.run_in_executor(self._pool, self.hub.feed.keepalive_due)

    async def _answer(self, send: Send, status: int, body: dict[str, Any],
                      extra: list[tuple[bytes, bytes]]) -> None:
        raw = json.dumps(body).encode()
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"), (b"cache-control", b"no-store"),
            (b"content-length", str(len(raw)).encode()), *extra, *self._headers]})
        await send({"type": "http.response.body", "body": raw, "more_body": False})
