"""The thread every key reader runs: events in through a queue, readings out.

Edge and interrupt callbacks arrive on gpiozero's threads; they only put an
event on the queue. One worker thread per reader takes events in batches,
feeds its debouncers and reports readings, so a slow ``report`` callback
never delays an edge, and nothing polls while nothing happens.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from arbiter.drivers.readers.base import ReadingCallback, SlotReading
from arbiter.drivers.readers.errors import ReaderError
from arbiter.threads import BackgroundThread, declare

KEY_READER = declare(
    "key reader", __name__,
    "debounces a key reader's edges, reports settled readings (gpio-keys-SLOT, mcp23017-ADDR)")

_log = logging.getLogger(__name__)

E = TypeVar("E")


class QueueWorker(Generic[E]):
    """Start/stop, event batches and delivery shared by the key readers.

    Subclasses implement ``_run`` (the thread's loop, returning when
    :meth:`_next_batch` says to stop) and call :meth:`_start_worker` from
    ``start`` and :meth:`_stop_worker` from ``close``.
    """

    def __init__(self, thread_name: str) -> None:
        self._thread_name = thread_name
        # Events from callbacks; None asks the thread to stop.
        self._events: queue.Queue[E | None] = queue.Queue()
        self._thread: BackgroundThread | None = None
        self._report: ReadingCallback | None = None
        self._closed = False
        self._lock = threading.Lock()

    def _run(self) -> None:
        raise NotImplementedError

    def _start_worker(self, report: ReadingCallback) -> None:
        """:raises ReaderError: if already started or closed."""
        with self._lock:
            if self._closed or self._thread is not None:
                raise ReaderError("reader already started or closed")
            self._report = report
            self._thread = BackgroundThread(
                lambda _stopping: self._run(), KEY_READER, label=self._thread_name,
                wake=lambda: self._events.put(None),
            )
            self._thread.start()

    def _stop_worker(self, release: Callable[[], None]) -> None:
        """Mark closed, ``release`` pins, stop and join the thread; a second call does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            thread = self._thread
        release()
        if thread is not None:
            thread.stop(5.0)

    def _next_batch(self, timeout: float | None) -> list[E] | None:
        """Wait up to ``timeout`` for events, then take all waiting; None means stop."""
        items: list[E | None] = []
        try:
            items.append(self._events.get(timeout=timeout))
            while True:
                items.append(self._events.get_nowait())
        except queue.Empty:
            pass
        if None in items:
            return None
        return [item for item in items if item is not None]

    def _deliver(self, readings: Iterable[SlotReading]) -> None:
        report = self._report
        for reading in readings:
            if self._closed or report is None:
                return
            try:
                report(reading)
            except Exception:
                _log.exception("slot reading callback failed")
