"""Event streams served on an event loop: no thread per viewer (the hub's streams).

The transport of :mod:`web.kit.broadcast`'s one writer, for :mod:`web.kit.aserve`.
The feed's writer thread writes each message to every member as before; a member
here is a :class:`LoopStream`, whose ``write`` only appends the bytes to the
stream's own buffer (past :data:`web.kit.broadcast.MAX_BACKLOG` unsent bytes it
raises, and the writer drops the viewer) and marks the stream due. One wake-up of
the loop per burst (:class:`Pump`, however many streams are due) hands the due
streams to their tasks, each of which sends what its buffer holds. A stream's task
also waits for its client's disconnection, so a closed page gives its place back
at once, not at the next write.
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
#: The scope extension :mod:`web.kit.aserve` offers: closes the connection at once.
CLOSE = "arbiter.close"


class NotifyingEvent(threading.Event):
    """A :class:`threading.Event` that also calls ``notify`` when it is set (from any
    thread): how a stream's task hears that the writer ended it."""

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
        self._due: list[LoopStream] = []

    def due(self, stream: LoopStream) -> None:
        with self._lock:
            first = not self._due
            self._due.append(stream)
        if first:
            with contextlib.suppress(RuntimeError):  # the loop is closed: the server stopped
                self._loop.call_soon_threadsafe(self._run)

    def _run(self) -> None:
        with self._lock:
            due, self._due = self._due, []
        for stream in due:
            stream.wake()


class LoopStream:
    """One viewer's stream: bytes written from any thread, sent by its task on the loop."""

    def __init__(self, pump: Pump, close: Callable[[], None], limit: int = MAX_BACKLOG) -> None:
        self._pump = pump
        self._close = close
        self._limit = limit
        self._lock = threading.Lock()
        self._buffer = bytearray()
        self._gone = False
        self.ready = asyncio.Event()
        self.done = NotifyingEvent(lambda: pump.due(self))

    def write(self, data: bytes) -> None:
        """Queue ``data`` (the feed's writer thread). Raises once the client has gone,
        and when more than ``limit`` bytes already wait (a client that stopped reading)."""
        with self._lock:
            if self._gone:
                raise StreamGoneError("the client has gone")
            if len(self._buffer) > self._limit:
                raise StreamBacklogError(
                    f"{len(self._buffer)} bytes unsent: the client stopped reading")
            self._buffer += data
        self._pump.due(self)

    def take(self) -> bytes:
        with self._lock:
            data = bytes(self._buffer)
            self._buffer.clear()
        return data

    @property
    def gone(self) -> bool:
        with self._lock:
            return self._gone

    def client_gone(self) -> None:
        """The client disconnected (on the loop)."""
        with self._lock:
            self._gone = True
        self.ready.set()

    def wake(self) -> None:
        """On the loop: something to send, or the stream ended. An ended stream whose
        client is still there is closed here, not by its task, which may be waiting for
        a client that stopped reading to take what was sent before."""
        self.ready.set()
        if self.done.is_set() and not self.gone:
            self._close()


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
        close = scope.get("extensions", {}).get(CLOSE, lambda: None)
        stream = LoopStream(self._pump, close)
        member = Member(encoding, stream.write)
        member.done = stream.done
        head = [(b"content-type", b"text/event-stream; charset=utf-8"),
                (b"cache-control", b"no-cache, no-transform"), (b"x-accel-buffering", b"no"),
                (b"vary", b"Accept-Encoding"), *self._headers]
        if encoding is not Encoding.IDENTITY:
            head.append((b"content-encoding", encoding.value.encode()))
        await send({"type": "http.response.start", "status": 200, "headers": head})
        watcher = loop.create_task(self._watch(receive, stream))
        self.hub.joined(1)
        log.debug("viewer %s joined the stream", scope.get("client"))
        try:
            await loop.run_in_executor(self._pool, self.hub.feed.join, member, last_event_id)
            while True:
                await stream.ready.wait()
                stream.ready.clear()
                data = stream.take()
                if data and not stream.gone:
                    await send({"type": "http.response.body", "body": data, "more_body": True})
                if stream.gone or member.done.is_set():
                    break
        finally:
            if not stream.gone:
                # The feed ended the stream (a slow viewer, or the server stops): closed,
                # and the page reconnects. Waited for, so the server counts the response
                # as the client's disconnection, not as one the app left unfinished.
                close()
                with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(asyncio.shield(watcher), 2.0)
            watcher.cancel()
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
