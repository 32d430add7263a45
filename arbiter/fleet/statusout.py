"""The device's status as the broker link publishes it (``P/status``): the newest, and
whether it is due.

The device hands each status it makes over (:meth:`StatusOutbox.changed`, never
waiting); the link marks it stale after changes of its own (a reconnection, a
new broker state: the page's status was made again from them). The publisher
thread asks :meth:`StatusOutbox.due` after the events it sent: the status goes
out when it is new, stale, or counts events the last one did not.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from arbiter.rules.jsondata import JsonDict


class StatusOutbox:
    """``source`` (the device's status, read when due; None: only what was handed over);
    ``wake`` wakes the publisher. Thread-safe."""

    def __init__(self, source: Callable[[], JsonDict] | None, wake: Callable[[], None]) -> None:
        self._source = source
        self._wake = wake
        self._lock = threading.Lock()
        self._status: JsonDict | None = None
        self._stale = False
        self._seq: object = None  # the status ``seq`` published last
        self._event_seq: int | None = None  # the ``event_seq`` published last

    def changed(self, status: JsonDict) -> None:
        """The device's new status: kept, and the publisher woken."""
        with self._lock:
            self._status = status
            self._stale = True
        self._wake()

    def stale(self) -> None:
        """Publish the status again at the next pass (the link changed what it shows, or
        the connection is new: the retained status is made fresh at once)."""
        with self._lock:
            self._stale = True
        self._wake()

    def due(self, event_seq: int | None, connected: bool) -> JsonDict | None:
        """The status to publish now with ``event_seq`` (taken as published), or None."""
        # Read outside this lock: the device hands statuses over under its own.
        fresh = None if self._source is None else self._source()
        with self._lock:
            status = self._status if fresh is None else fresh
            due = (self._stale or event_seq != self._event_seq
                   or (status is not None and status.get("seq") != self._seq))
            if not due or status is None or not connected:
                return None
            self._stale = False
            self._event_seq, self._seq = event_seq, status.get("seq")
            return status
