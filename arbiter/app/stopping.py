"""Stop requests from signals and other threads, delivered without locks.

A Python signal handler runs in the main thread between two bytecodes, so
it may interrupt that thread while it holds a lock (inside ``Event.set()``,
say); a handler that takes the same lock then waits for itself forever.
Here the handlers do nothing: ``signal.set_wakeup_fd`` has the interpreter's
C-level handler write the signal's number to a pipe, and the main thread
reads that pipe. Other threads ask for a stop by writing to it too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from types import FrameType, TracebackType

#: The signals that stop the arbiter.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _ignore(signum: int, frame: FrameType | None) -> None:
    """Takes no lock and raises nothing: the wakeup pipe carries the signal."""


class StopRequests:
    """A self-pipe the stop signals (and :meth:`request`) write to; :meth:`wait` reads it.

    Use it as a context manager in the main thread: it installs the
    handlers on entry and puts the old ones back on exit.
    """

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)  # a full pipe already means "stop"
        self._old_handlers: dict[int, object] = {}
        self._old_wakeup_fd = -1
        self._closed = False
        self._close_lock = threading.Lock()  # never taken in a signal handler

    def __enter__(self) -> StopRequests:
        self._old_wakeup_fd = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        for signum in STOP_SIGNALS:
            self._old_handlers[signum] = signal.signal(signum, _ignore)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # The handlers stay harmless until the process ends: a late signal of
        # the burst must not raise KeyboardInterrupt in the shutdown.
        signal.set_wakeup_fd(self._old_wakeup_fd)
        with self._close_lock:
            self._closed = True
            os.close(self._read)
            os.close(self._write)

    def request(self) -> None:
        """Ask the main thread to stop (any thread)."""
        with self._close_lock:
            if self._closed:
                return
            with contextlib.suppress(BlockingIOError):
                os.write(self._write, b"\0")

    def wait(self) -> None:
        """Block until a stop signal or :meth:`request` (main thread)."""
        while not os.read(self._read, 512):
            pass
