"""Server-Sent Events: the admission of streams, and the table's status feed.

Both apps stream the same way (:mod:`web.kit.broadcast`): one writer thread per
feed writes every message to every open stream. Under waitress (the table's
page, :mod:`web.kit.serve`) each stream holds one server thread while it is
open (waiting); under the hub's asynchronous server (:mod:`web.kit.aserve`) it
holds none, and is served at its app's :class:`StreamRoute`. Either way the
:class:`StreamHub` admits at most ``capacity`` streams at once; one more is
refused with :class:`StreamsFullError` (the page then polls). The table's
:class:`StatusFeed` sends a comment line at once, the current status, then one
``data:`` line per change and a keep-alive comment when nothing went for a while;
its one subscription to the device is dropped when the server stops.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import queue
import threading
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, Protocol

from flask import Response, jsonify, request

from arbiter.queues import put_dropping_oldest
from arbiter.threads import BackgroundThread, declare
from web.kit.broadcast import MAX_BACKLOG, QUEUE_SIZE, Broadcast, Encoding, Feed, Member
from web.kit.errors import StreamsFullError

STATUS_FEED = declare("status-feed", __name__,
                      "the status page's one writer: each status to every open stream")

log = logging.getLogger(__name__)

KEEPALIVE_SECONDS = 15.0
RETRY_MILLISECONDS = 2000
#: Streams open at once by default: 200 viewers (the product's target is 20).
STREAM_CAPACITY = 200

_STOP: dict[str, Any] = {"__stop__": True}  # identity-compared sentinel
PREAMBLE = f": gg-arbiter status stream\nretry: {RETRY_MILLISECONDS}\n\n".encode()
#: The WSGI environ key under which :mod:`web.kit.serve` offers a :class:`DirectWrite`.
DIRECT_WRITE = "arbiter.direct_write"


class StatusSource(Protocol):
    """The part of the device a stream needs."""

    def status(self) -> dict[str, Any]: ...

    def subscribe(self) -> queue.Queue[dict[str, Any]]: ...

    def unsubscribe(self, q: queue.Queue[dict[str, Any]]) -> None: ...


class DirectWrite(Protocol):
    """Writes a response's body from any thread while its app iterator waits
    (offered by :mod:`web.kit.serve`, so one writer can serve every stream)."""

    def write(self, data: bytes, limit: int | None = None) -> None:
        """Append ``data`` to the response; raises when the client has gone, and
        :class:`StreamBacklogError` when more than ``limit`` bytes written before still
        wait to be sent (a client that stopped reading)."""


def _event(status: dict[str, Any]) -> bytes:
    body = json.dumps(status, separators=(",", ":"))
    seq = status.get("seq")
    head = f"id: {seq}\n" if isinstance(seq, int) else ""
    return f"{head}data: {body}\n\n".encode()


@dataclass(frozen=True)
class StreamRoute:
    """Where an app serves its event stream (``path``), for a server that serves it
    itself (:mod:`web.kit.aserve`); a refused page polls ``poll`` meanwhile and tries the
    stream again after ``retry_seconds``."""

    path: str
    poll: str
    retry_seconds: int

    def refusal(self, exc: StreamsFullError) -> str:
        """The ``error`` of a refused stream's 503 answer."""
        return f"{exc}; poll {self.poll}, or retry after {self.retry_seconds} s"


class Stream:
    """One admitted stream: iterate it for its bytes; :meth:`close` gives its place back.

    The place is taken when the stream is admitted, before the server starts
    iterating, so it is given back by :meth:`close` (which the WSGI server
    always calls), also for a stream whose client left before its first line.
    """

    def __init__(self, hub: StreamHub, body: Generator[bytes, None, None]) -> None:
        self._hub = hub
        self._body = body
        self._closed = False

    def __iter__(self) -> Stream:
        return self

    def __next__(self) -> bytes:
        return next(self._body)

    def close(self) -> None:
        """End the stream and give its place back. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._body.close()
        finally:
            self._hub._release()


class StreamHub:
    """Admits up to ``capacity`` open streams of ``feed`` (the single writer of
    :mod:`web.kit.broadcast`), and ends them all when the server stops."""

    def __init__(
        self,
        feed: Feed,
        keepalive: float = KEEPALIVE_SECONDS,
        capacity: int = STREAM_CAPACITY,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"stream capacity must be at least 1, not {capacity}")
        self.feed = feed
        self.keepalive = keepalive
        self._capacity = capacity
        self._admitted = 0
        self._open = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    @property
    def capacity(self) -> int:
        return self._capacity

    @capacity.setter
    def capacity(self, value: int) -> None:
        """Set by :func:`web.kit.serve.make_server` to the streams its thread pool holds."""
        if value < 1:
            raise ValueError(f"stream capacity must be at least 1, not {value}")
        with self._lock:
            self._capacity = value

    @property
    def open_streams(self) -> int:
        """Streams joined to the feed now."""
        with self._lock:
            return self._open

    @property
    def admitted(self) -> int:
        """Streams admitted and not yet closed (those still starting included)."""
        with self._lock:
            return self._admitted

    @property
    def stopping(self) -> bool:
        """The server is stopping: no stream is admitted any more."""
        return self._stopping.is_set()

    def admit(self) -> None:
        """Take one place for a stream served elsewhere (:mod:`web.kit.aserve`); give it
        back with :meth:`release`.

        :raises StreamsFullError: ``capacity`` streams are already open.
        """
        with self._lock:
            if self._admitted >= self._capacity:
                raise StreamsFullError(
                    f"{self._capacity} status streams are open, the most this page serves"
                )
            self._admitted += 1

    def release(self) -> None:
        """Give back a place taken by :meth:`admit`."""
        self._release()

    def joined(self, change: int) -> None:
        """A stream served elsewhere joined (+1) or left (-1) the feed."""
        self._joined(change)

    def open(
        self,
        encoding: Encoding = Encoding.IDENTITY,
        last_event_id: str | None = None,
        direct: DirectWrite | None = None,
    ) -> Stream:
        """Admit one client's stream, or refuse it at once. The feed's writer writes it
        through ``direct`` where the server offers it, else through a bounded queue
        this stream's thread sends from.

        :raises StreamsFullError: ``capacity`` streams are already open.
        """
        self.admit()
        body = (self._direct(encoding, last_event_id, direct) if direct is not None
                else self._queued(encoding, last_event_id))
        return Stream(self, body)

    def _release(self) -> None:
        with self._lock:
            self._admitted -= 1

    def _joined(self, change: int) -> None:
        with self._lock:
            self._open += change

    def _direct(
        self, encoding: Encoding, last_event_id: str | None, direct: DirectWrite
    ) -> Generator[bytes, None, None]:
        # Runs in the server's thread for this request, which only waits here (woken
        # every keep-alive period): the feed's writer writes the stream.
        member = Member(encoding, functools.partial(direct.write, limit=MAX_BACKLOG))
        self._joined(1)
        try:
            if not self._stopping.is_set():
                self.feed.join(member, last_event_id)
                while not member.done.wait(self.keepalive) and not self._stopping.is_set():
                    self.feed.keepalive_due()
        finally:
            self.feed.leave(member)
            self._joined(-1)
        yield from ()

    def _queued(
        self, encoding: Encoding, last_event_id: str | None
    ) -> Generator[bytes, None, None]:
        q: queue.Queue[bytes] = queue.Queue(QUEUE_SIZE)
        member = Member(encoding, q.put_nowait)
        self._joined(1)
        try:
            if self._stopping.is_set():
                return
            self.feed.join(member, last_event_id)
            while True:
                try:
                    yield q.get(timeout=self.keepalive)
                except queue.Empty:
                    if member.done.is_set() or self._stopping.is_set():
                        return
                    self.feed.keepalive_due()
        finally:
            self.feed.leave(member)
            self._joined(-1)

    def stop(self) -> None:
        """End every open stream (server shutdown); new ones end at once."""
        self._stopping.set()
        self.feed.close_streams()


class StatusFeed:
    """The table's feed: each status the device makes, written to every stream by one
    sender thread (started with the first stream). Thread-safe.

    A stream opens with a comment, the retry delay and the status the others got
    last (the device's current one for the first), then one ``data:`` line per
    change; the sender takes the statuses from one subscription to the device.
    """

    def __init__(self, device: StatusSource, keepalive: float = KEEPALIVE_SECONDS) -> None:
        self.device = device
        self._broadcast = Broadcast(keepalive)
        self._last: dict[str, Any] | None = None  # what every stream has been sent last
        self._subscription: queue.Queue[dict[str, Any]] | None = None
        self._closed = False
        self._thread = BackgroundThread(self._run, STATUS_FEED)

    @property
    def subscribers(self) -> int:
        return self._broadcast.subscribers

    def join(self, member: Member, last_event_id: str | None = None) -> None:
        """``member`` gets the opening now, then each new status (a browser's
        ``Last-Event-ID`` needs nothing more: the current status is all of the state)."""
        with self._broadcast.lock:
            if self._closed:
                member.done.set()
                return
            if self._subscription is None:  # the first stream: the sender starts
                self._subscription = self.device.subscribe()
                self._thread.start()
            if self._last is None:
                self._last = self.device.status()
            self._broadcast.join(member, PREAMBLE + _event(self._last))

    def leave(self, member: Member) -> None:
        self._broadcast.leave(member)

    def keepalive_due(self) -> None:
        self._broadcast.keepalive_due()

    def close_streams(self) -> None:
        """End every stream and the sender; the device's subscription is dropped."""
        with self._broadcast.lock:
            self._closed = True
            subscription, self._subscription = self._subscription, None
        if subscription is not None:
            put_dropping_oldest(subscription, _STOP)
            self._thread.stop(5.0)
            with contextlib.suppress(KeyError, ValueError):  # already gone
                self.device.unsubscribe(subscription)
        self._broadcast.close_streams()

    def _run(self, stopping: threading.Event) -> None:
        subscription = self._subscription
        assert subscription is not None
        while not stopping.is_set():
            status = subscription.get()
            if status is _STOP:
                return
            with self._broadcast.lock:
                last = -1 if self._last is None else self._last.get("seq", -1)
                seq = status.get("seq", -1)
                if isinstance(seq, int) and isinstance(last, int) and seq <= last:
                    continue  # already sent with a stream's opening
                self._last = status
                try:
                    self._broadcast.deliver(_event(status))
                except Exception:  # logged; the next status tries again
                    log.exception("could not send a status to the pages")


def stream_response(hub: StreamHub, poll: str, retry_seconds: int) -> Response:
    """``hub``'s next event stream as a response, or, when it is full, a quick 503 JSON
    naming ``poll`` (the page's polling route) and when to try again (``Retry-After``):
    never a wait for a thread."""
    try:
        stream = hub.open(direct=request.environ.get(DIRECT_WRITE))
    except StreamsFullError as exc:
        log.debug("event stream refused: %s", exc)
        response = jsonify({"error": f"{exc}; poll {poll}, or retry after {retry_seconds} s"})
        response.status_code = 503
        response.headers["Retry-After"] = str(retry_seconds)
        return response
    return Response(
        stream,
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
