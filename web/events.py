"""Server-Sent Events: one stream of status dicts per open page.

Each stream holds one server thread while it is open (see :mod:`web.serve`).
It sends a comment line at once, the current status, then one ``data:``
line per change and a keep-alive comment when nothing changed for a while.
The device's subscription is dropped when the client goes or the server stops.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Iterator
from typing import Any, Protocol

from arbiter.device.status import put_dropping_oldest

log = logging.getLogger(__name__)

KEEPALIVE_SECONDS = 15.0
RETRY_MILLISECONDS = 2000

_STOP: dict[str, Any] = {"__stop__": True}  # identity-compared sentinel


class StatusSource(Protocol):
    """The part of the device a stream needs."""

    def status(self) -> dict[str, Any]: ...

    def subscribe(self) -> queue.Queue[dict[str, Any]]: ...

    def unsubscribe(self, q: queue.Queue[dict[str, Any]]) -> None: ...


def _event(status: dict[str, Any]) -> str:
    body = json.dumps(status, separators=(",", ":"))
    seq = status.get("seq")
    head = f"id: {seq}\n" if isinstance(seq, int) else ""
    return f"{head}data: {body}\n\n"


class StreamHub:
    """Tracks open streams so the server can end them all when it stops."""

    def __init__(self, device: StatusSource, keepalive: float = KEEPALIVE_SECONDS) -> None:
        self.device = device
        self.keepalive = keepalive
        self._open: set[queue.Queue[dict[str, Any]]] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    @property
    def open_streams(self) -> int:
        with self._lock:
            return len(self._open)

    def stream(self) -> Iterator[str]:
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
