"""Server-Sent Events: one stream of status dicts per open page.

Each stream holds one server thread while it is open (see :mod:`web.kit.serve`),
so the hub admits at most ``capacity`` streams at once; one more is refused
with :class:`StreamsFullError` (the page then polls ``/api/status``).
A stream sends a comment line at once, the current status, then one ``data:``
line per change and a keep-alive comment when nothing changed for a while.
The device's subscription is dropped when the client goes or the server stops.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Generator, Iterator
from typing import Any, Protocol

from flask import Response, jsonify

from arbiter.errors import ArbiterError
from arbiter.queues import put_dropping_oldest

log = logging.getLogger(__name__)

KEEPALIVE_SECONDS = 15.0
RETRY_MILLISECONDS = 2000
#: Streams open at once by default: 200 viewers (the product's target is 20).
STREAM_CAPACITY = 200

_STOP: dict[str, Any] = {"__stop__": True}  # identity-compared sentinel
#: The WSGI environ key under which :mod:`web.kit.serve` offers a :class:`DirectWrite`.
DIRECT_WRITE = "arbiter.direct_write"


class StreamsFullError(ArbiterError):
    """As many event streams are open as the hub admits; poll ``/api/status`` instead."""


class StreamBacklogError(ArbiterError):
    """A stream's client left more bytes unread than allowed: it is closed (and reconnects)."""


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


def _event(status: dict[str, Any]) -> str:
    body = json.dumps(status, separators=(",", ":"))
    seq = status.get("seq")
    head = f"id: {seq}\n" if isinstance(seq, int) else ""
    return f"{head}data: {body}\n\n"


class Stream:
    """One admitted stream: iterate it for its text; :meth:`close` gives its place back.

    The place is taken when the stream is admitted, before the server starts
    iterating, so it is given back by :meth:`close` (which the WSGI server
    always calls), also for a stream whose client left before its first line.
    """

    def __init__(self, hub: StreamHub, text: Iterator[Any]) -> None:
        self._hub = hub
        self._text = text
        self._closed = False

    def __iter__(self) -> Stream:
        return self

    def __next__(self) -> Any:
        return next(self._text)

    def close(self) -> None:
        """End the stream and give its place back. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            close = getattr(self._text, "close", None)
            if close is not None:
                close()
        finally:
            self._hub._release()


class StreamHub:
    """Admits up to ``capacity`` open streams, and ends them all when the server stops."""

    def __init__(
        self,
        device: StatusSource,
        keepalive: float = KEEPALIVE_SECONDS,
        capacity: int = STREAM_CAPACITY,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"stream capacity must be at least 1, not {capacity}")
        self.device = device
        self.keepalive = keepalive
        self._capacity = capacity
        self._admitted = 0
        self._open: set[queue.Queue[dict[str, Any]]] = set()
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
        with self._lock:
            return len(self._open)

    @property
    def admitted(self) -> int:
        """Streams admitted and not yet closed (those still starting included)."""
        with self._lock:
            return self._admitted

    def open(self, text: Iterator[Any] | None = None) -> Stream:
        """Admit one client's stream (``text``, else the device's statuses), or refuse
        it at once.

        :raises StreamsFullError: ``capacity`` streams are already open.
        """
        with self._lock:
            if self._admitted >= self._capacity:
                raise StreamsFullError(
                    f"{self._capacity} status streams are open, the most this page serves"
                )
            self._admitted += 1
        return Stream(self, self._text() if text is None else text)

    def _release(self) -> None:
        with self._lock:
            self._admitted -= 1

    def _text(self) -> Generator[str, None, None]:
        """Yield the text of one client's event stream until it goes away."""
        q = self.device.subscribe()
        with self._lock:
            self._open.add(q)
        try:
            if self._stopping.is_set():
                return
            yield f": gg-arbiter status stream\nretry: {RETRY_MILLISECONDS}\n\n"
            current = self.device.status()
            last_seq = current.get("seq", -1)
            yield _event(current)
            while not self._stopping.is_set():
                try:
                    status = q.get(timeout=self.keepalive)
                except queue.Empty:
                    yield ": keep-alive\n\n"
                    continue
                if status is _STOP:
                    break
                seq = status.get("seq", -1)
                if isinstance(seq, int) and isinstance(last_seq, int) and seq <= last_seq:
                    continue  # already sent with the opening status
                last_seq = seq
                yield _event(status)
        finally:
            with self._lock:
                self._open.discard(q)
            try:
                self.device.unsubscribe(q)
            except (KeyError, ValueError):  # already gone
                log.debug("stream queue was already unsubscribed")

    def stop(self) -> None:
        """End every open stream (server shutdown); new ones end at once."""
        self._stopping.set()
        with self._lock:
            queues = list(self._open)
        for q in queues:
            put_dropping_oldest(q, _STOP)


def stream_response(hub: StreamHub, poll: str, retry_seconds: int) -> Response:
    """``hub``'s next event stream as a response, or, when it is full, a quick 503 JSON
    naming ``poll`` (the page's polling route) and when to try again (``Retry-After``):
    never a wait for a thread."""
    try:
        stream = hub.open()
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
