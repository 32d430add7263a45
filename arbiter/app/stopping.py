"""Stop requests from signals and other threads, delivered without locks.

A Python signal handler runs in the main thread between two bytecodes, so
it may interrupt that thread while it holds a lock (inside ``Event.set()``,
say); a handler that takes the same lock then waits for itself forever.
Here the handlers do nothing: ``signal.set_wakeup_fd`` has the interpreter's
C-level handler write the signal's number to a pipe, and the main thread
reads that pipe (:meth:`StopRequests.wait`), or a watcher thread does and
tells a command's loop (:meth:`StopRequests.watch`). Other threads ask for a
stop by writing to it too. Every long-running command gets one from
``gg-arbiter``'s dispatcher (:mod:`arbiter.app.cli`) before its set-up begins,
so a signal during start-up is kept until the command waits for it.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import signal
import stat
import threading
from collections.abc import Callable, Iterator
from types import FrameType, TracebackType
from typing import TextIO

from arbiter.threads import BackgroundThread, declare

WATCHER = declare("stop watcher", __name__,
                  "reads the stop pipe for a command whose main thread runs a loop")
#: Seconds between two looks at ``stopping`` while a console waits for input.
INPUT_POLL = 0.2

#: The signals that stop the arbiter.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _ignore(signum: int, frame: FrameType | None) -> None:
    """Takes no lock and raises nothing: the wakeup pipe carries the signal."""


class StopRequests:
    """A self-pipe the stop signals (and :meth:`request`) write to; :meth:`wait` reads it.

    Use it as a context manager in the main thread: it installs the handlers and
    the wakeup fd on entry and puts the wakeup fd back on exit (elsewhere it
    installs nothing: only :meth:`request` stops it).
    """

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)  # a full pipe already means "stop"
        self._old_handlers: dict[int, object] = {}
        self._old_wakeup_fd = -1
        self._closed = False
        self._close_lock = threading.Lock()  # never taken in a signal handler
        self._watchers: list[BackgroundThread] = []
        self._signals = False  # whether the signals are ours (the main thread only)

    def __enter__(self) -> StopRequests:
        self._signals = threading.current_thread() is threading.main_thread()
        if not self._signals:  # a test's thread: only request() stops it (Python's rule)
            return self
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
        if self._signals:
            signal.set_wakeup_fd(self._old_wakeup_fd)
        for watcher in self._watchers:  # before the pipe it reads is closed
            watcher.stop()
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

    def watch(self, stopped: Callable[[], None]) -> BackgroundThread:
        """Call ``stopped`` on a thread of its own at the first stop request (the
        thread ends with this context, or earlier by its ``stop``). For a command whose
        main thread runs a loop rather than :meth:`wait`: ``stopped`` puts its quit command.
        """

        def run(stopping: threading.Event) -> None:
            self.wait()
            if not stopping.is_set():
                stopped()

        thread = BackgroundThread(run, WATCHER, wake=self.request)
        self._watchers.append(thread)
        thread.start()
        return thread


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Within the block, Python's own stop signals (main thread only): Ctrl-C raises
    KeyboardInterrupt and SIGTERM ends the process, as before any :class:`StopRequests`.
    For a prompt (a PIN asked at the terminal): a read the self-pipe cannot end, where
    a person's Ctrl-C must still work, and nothing is held that a signal could interrupt.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        yield
    finally:
        for signum, handler in old.items():
            if handler is not None:  # None: not set from Python, nothing to put back
                signal.signal(signum, handler)


def lines_until(stream: TextIO, stopping: threading.Event) -> Iterator[str]:
    """The lines of ``stream`` until its end or ``stopping`` is set (then within
    :data:`INPUT_POLL` s, even while no line comes): a console's thread stops with
    the command instead of waiting in a read forever. A regular file (a script) or a
    stream without a descriptor (a test's StringIO) is read as it is.
    """
    try:
        fd = stream.fileno()
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except (OSError, ValueError, AttributeError):
        regular, fd = True, -1
    if regular:
        for line in stream:
            if stopping.is_set():
                return
            yield line
        return
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""
    while not stopping.is_set():
        if not select.select([fd], [], [], INPUT_POLL)[0]:
            continue
        chunk = os.read(fd, 4096)
        pending += decoder.decode(chunk, final=not chunk)
        *lines, pending = pending.split("\n")
        for line in lines:
            yield line + "\n"
        if not chunk:
            if pending:
                yield pending
            return
